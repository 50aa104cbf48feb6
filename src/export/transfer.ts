// The export's rows out: one table's rows (a FROM clause and a WHERE) read out of Postgres in
// the export's snapshot and written as Parquet through a lane's writer (lanes.ts), into the
// export's staging folder. What the export does with the files after (their names, the
// manifest) is export.ts's.
//
// The rows stream: Postgres prints them into a FIFO that the writer's DuckDB reads, casts and
// writes while Postgres still prints, so the text is read once and never lands on disk. An
// archive's rows come sorted by day from Postgres (its key's index), so DuckDB need not hold
// them all to sort them before its first file. A row longer than the reader's line limit
// (parquet.ts) is the one case read through a file, whose longest line is measured first.
import { execFile } from 'node:child_process';
import { constants, openSync } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type postgres from 'postgres';
import type { ExportColumn } from './columns.ts';
import type { Lanes } from './lanes.ts';
import { LineTooLong, type ParquetTarget, type ParquetWriter, type WrittenFile } from './parquet.ts';
import { copyCsv, copyOut, copySelect } from './pg-read.ts';

/** The export's snapshot: its queries, connections of their own in the same snapshot, and the writers. */
export interface Reads {
  tx: postgres.TransactionSql;
  /** `pg_export_snapshot()` of `tx`. */
  snapshot: string;
  /** A new connection (closed by whoever opens it). */
  open: () => postgres.Sql;
  lanes: Lanes;
}

export interface Transfer {
  columns: readonly ExportColumn[];
  from: string;
  where: string | null;
  target: ParquetTarget;
  /** A path in staging the rows pass through (a FIFO, or a file), removed after. */
  scratch: string;
}

/** Reads `from`'s rows `where` and writes them to `t.target` through a lane's writer. */
export async function transfer(reads: Reads, t: Transfer): Promise<WrittenFile[]> {
  const copy = copySelect(t.columns, t.from, t.where, t.target.partitionBy);
  const sorted = t.target.partitionBy !== undefined;
  return reads.lanes.run(async (writer) => {
    try {
      try {
        return await streamed(reads, writer, copy, t, sorted);
      } catch (err) {
        if (!(err instanceof LineTooLong)) throw err;
      }
      await rm(t.scratch, { force: true });
      const { longestLine } = await copyCsv(reads.open, reads.snapshot, copy, t.scratch);
      try {
        return await writer.write(t.scratch, t.columns, t.target, { lineBytes: longestLine + 1, sorted });
      } catch (err) {
        // A row is longer than its longest line when a value holds a line break: room for the whole file as one row.
        if (!(err instanceof LineTooLong)) throw err;
        return await writer.write(t.scratch, t.columns, t.target, { lineBytes: (await stat(t.scratch)).size + 1, sorted });
      }
    } finally {
      await rm(t.scratch, { force: true });
    }
  });
}

/** COPY into a FIFO at `t.scratch` while `writer` reads it. */
async function streamed(reads: Reads, writer: ParquetWriter, copy: string, t: Transfer, sorted: boolean): Promise<WrittenFile[]> {
  await promisify(execFile)('mkfifo', ['-m', '600', t.scratch]);
  // The reader gone (DuckDB failed), the COPY stops: nobody reads what it would print.
  const readerGone = new AbortController();
  const written = writer.write(t.scratch, t.columns, t.target, { sorted });
  written.catch(() => readerGone.abort());
  // Which side failed first says what went wrong: a COPY that failed ends the reader's text
  // early (its own error, if any, says less); a reader that failed stops the COPY.
  let copyFailedFirst = false;
  const copied = (async () => {
    const pipe = await openForWriting(t.scratch, readerGone.signal);
    try {
      await copyOut(reads.open, reads.snapshot, copy, (chunk) => (pipe.write(chunk) ? undefined : drained(pipe)), readerGone.signal);
      await new Promise<void>((resolve, reject) => {
        pipe.once('error', reject);
        pipe.end(resolve);
      });
    } catch (err) {
      copyFailedFirst = !readerGone.signal.aborted;
      throw err;
    } finally {
      // Closed on failure too: the reader then sees an end.
      pipe.destroy();
    }
  })();
  const [c, w] = await Promise.allSettled([copied, written]);
  if (c.status === 'rejected' && (copyFailedFirst || w.status === 'fulfilled')) throw c.reason;
  if (w.status === 'rejected') throw w.reason;
  if (c.status === 'rejected') throw c.reason;
  return w.value;
}

/**
 * The FIFO's writing end, once its reader has opened it. Opened without blocking (a blocking
 * open would hold one of libuv's four threads, which DuckDB's queries run on too) and written
 * through a pipe handle, so no write waits on that pool either.
 */
async function openForWriting(fifo: string, readerGone: AbortSignal): Promise<net.Socket> {
  for (;;) {
    try {
      const fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      const pipe = new net.Socket({ fd, readable: false, writable: true });
      // Errors come out of write's caller (drained, end); without a listener one would throw.
      pipe.on('error', () => {});
      return pipe;
    } catch (err) {
      // ENXIO: no reader yet.
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err;
    }
    if (readerGone.aborted) throw new Error('the Parquet writer stopped before reading the rows');
    await sleep(1);
  }
}

function drained(pipe: net.Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      pipe.off('drain', done);
      pipe.off('error', done);
      pipe.off('close', closed);
      if (err) reject(err);
      else resolve();
    };
    const closed = () => done(new Error('the FIFO closed before the rows were written'));
    pipe.on('drain', done);
    pipe.on('error', done);
    pipe.on('close', closed);
  });
}
