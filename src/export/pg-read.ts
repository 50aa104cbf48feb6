// The export's reads, on a connection of its own inside one repeatable-read transaction, so
// that every table comes from one snapshot. Rows leave Postgres as CSV text (COPY), the form
// nothing in between can round: decimals, times and JSON as Postgres prints them.
import { closeSync, openSync, writeSync } from 'node:fs';
import type postgres from 'postgres';
import { exportColumn, quoteIdent, type ExportColumn, type NumericStats, type SourceColumn } from './columns.ts';
import type { DayNow } from './day-changes.ts';

type Tx = postgres.TransactionSql | postgres.Sql;

/** A relation's columns, in their stored order, with their comments. */
export async function describeRelation(tx: Tx, qualified: string): Promise<{ columns: SourceColumn[]; comment: string | null }> {
  const columns = await tx<SourceColumn[]>`
    select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, col_description(a.attrelid, a.attnum) as comment
      from pg_attribute a where a.attrelid = ${qualified}::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum`;
  const [t] = await tx<{ comment: string | null }[]>`select obj_description(${qualified}::regclass, 'pg_class') as comment`;
  return { columns: [...columns], comment: t?.comment ?? null };
}

/** Each column's way out, the numeric ones judged on what `from` holds (one aggregate). */
export async function exportColumns(tx: Tx, from: string, columns: readonly SourceColumn[]): Promise<ExportColumn[]> {
  const numeric = columns.filter((c) => c.type === 'numeric' || c.type.startsWith('numeric('));
  const stats = new Map<string, NumericStats>();
  if (numeric.length > 0) {
    const parts = numeric.flatMap((c, i) => {
      const id = quoteIdent(c.name);
      const finite = `${id} not in ('NaN', 'Infinity', '-Infinity')`;
      return [
        `max(scale(${id})) filter (where ${finite}) as s${i}`,
        `max(case when abs(${id}) < 1 then 0 else length(trunc(abs(${id}))::text) end) filter (where ${finite}) as d${i}`,
        `count(*) filter (where ${id} in ('NaN', 'Infinity', '-Infinity')) as x${i}`,
      ];
    });
    const [row] = await tx.unsafe<Record<string, string | null>[]>(`select ${parts.join(', ')} from ${from}`);
    numeric.forEach((c, i) => {
      const n = (k: string) => (row?.[k] === null || row?.[k] === undefined ? null : Number(row[k]));
      stats.set(c.name, { maxScale: n(`s${i}`), maxIntegerDigits: n(`d${i}`), special: n(`x${i}`) ?? 0 });
    });
  }
  return columns.map((c) => exportColumn(c, stats.get(c.name)));
}

/**
 * The CSV the rows leave in: fields apart by \x02 and quoted by \x01, bytes that text and JSON
 * hardly ever hold, so a JSON value (quotes and commas all through it) goes out as it is
 * instead of quoted with every `"` doubled, which the reader then had to undo: on an archive
 * of 2.4-3.3 KB payloads, 13% fewer bytes and a third of DuckDB's reading time
 * (docs/performance.md, "Export"). A value that does hold one is quoted, the quote doubled.
 */
export const CSV = { delimiter: '\x02', quote: '\x01' } as const;

/** The COPY of `from`'s rows (a FROM clause) `where`, `orderBy` when given (a column), in CSV. */
export function copySelect(columns: readonly ExportColumn[], from: string, where: string | null, orderBy?: string): string {
  const select = `select ${columns.map((c) => c.read).join(', ')} from ${from}${where ? ` where ${where}` : ''}${orderBy ? ` order by ${quoteIdent(orderBy)}` : ''}`;
  const byte = (c: string) => `E'\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}'`;
  return `copy (${select}) to stdout (format csv, delimiter ${byte(CSV.delimiter)}, quote ${byte(CSV.quote)})`;
}

/** Bytes gathered before they are handed on: Postgres sends each row as a message of its own. */
const BATCH_BYTES = 1 << 20;

/**
 * `copy` (copySelect's) run in the export's snapshot (`pg_export_snapshot`) on a connection of
 * its own, closed after, its text handed to `sink` as Postgres prints it, in batches of about
 * BATCH_BYTES (a row at a time cost a call, and a write, per row); `sink` returns a promise
 * when the stream should wait for it. postgres.js can leave a connection that streamed a COPY
 * unable to read its next answer (a stream ended while its socket was paused:
 * porsager/postgres #499, #917), so no other query follows a COPY on it.
 */
export async function copyOut(open: () => postgres.Sql, snapshot: string, copy: string, sink: (chunk: Buffer) => Promise<void> | void, signal?: AbortSignal): Promise<void> {
  const connection = open();
  try {
    await connection.unsafe('begin isolation level repeatable read read only');
    await connection.unsafe(`set transaction snapshot '${snapshot.replaceAll("'", "''")}'`);
    const stream = await connection.unsafe(copy).readable();
    await new Promise<void>((resolve, reject) => {
      let batch: Buffer[] = [];
      let bytes = 0;
      let failed = false;
      const fail = (err: unknown) => {
        if (failed) return;
        failed = true;
        signal?.removeEventListener('abort', stop);
        stream.destroy();
        reject(err);
      };
      const flush = () => {
        const chunk = batch.length === 1 ? batch[0]! : Buffer.concat(batch, bytes);
        batch = [];
        bytes = 0;
        return sink(chunk);
      };
      const stop = () => fail(new Error('the reader of the rows stopped'));
      signal?.addEventListener('abort', stop, { once: true });
      if (signal?.aborted) stop();
      stream.on('data', (chunk: Buffer) => {
        batch.push(chunk);
        bytes += chunk.length;
        if (bytes < BATCH_BYTES || failed) return;
        try {
          const wait = flush();
          if (wait) {
            stream.pause();
            wait.then(() => failed || stream.resume(), fail);
          }
        } catch (err) {
          fail(err);
        }
      });
      stream.on('error', fail);
      stream.on('end', () => {
        signal?.removeEventListener('abort', stop);
        if (failed) return;
        Promise.resolve()
          .then(() => (bytes > 0 ? flush() : undefined))
          .then(resolve, fail);
      });
    });
  } finally {
    await connection.end({ timeout: 0 });
  }
}

/**
 * The rows as CSV into `file` (copyOut), for a reader that needs the whole text first.
 * Returns the longest line written, in bytes (the reader's line limit: parquet.ts).
 */
export async function copyCsv(open: () => postgres.Sql, snapshot: string, copy: string, file: string): Promise<{ longestLine: number }> {
  const fd = openSync(file, 'w');
  const lines = new LineLength();
  try {
    await copyOut(open, snapshot, copy, (chunk) => {
      writeSync(fd, chunk);
      lines.add(chunk);
    });
  } finally {
    closeSync(fd);
  }
  return { longestLine: lines.longest() };
}

/** The longest line of a stream of chunks, in bytes (a line that goes on into the next chunk counted whole). */
export class LineLength {
  private max = 0;
  private open = 0;

  add(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      this.max = Math.max(this.max, this.open + nl - start);
      this.open = 0;
      start = nl + 1;
    }
    this.open += chunk.length - start;
  }

  longest(): number {
    return Math.max(this.max, this.open);
  }
}

/** The snapshot the export reads in, for its COPY connections (`set transaction snapshot`). */
export async function exportSnapshot(tx: Tx): Promise<string> {
  const [r] = await tx<{ s: string }[]>`select pg_export_snapshot() as s`;
  return r!.s;
}

/**
 * A daily archive's days: rows, and whether a row of the day was written or removed by a
 * transaction the export before could not see (`since`, its snapshot: `pg_current_snapshot()`'s
 * text), as `sync.archive_days` keeps them (the archive's triggers, src/store/sql/
 * daily-archive.sql): the days, not the archive's rows, are read.
 */
export async function archiveDays(tx: Tx, archive: string, since: string | null): Promise<DayNow[]> {
  const snapshot = since !== null && /^\d+:\d+:[\d,]*$/.test(since) ? since : null;
  const rows = await tx.unsafe<{ day: string; rows: string; written: boolean }[]>(
    `select day::text as day, rows::text as rows, ${snapshot === null ? 'true' : 'not pg_visible_in_snapshot(writer, $2::pg_snapshot)'} as written
       from sync.archive_days where archive = $1 and rows > 0 order by day`,
    snapshot === null ? [archive] : [archive, snapshot],
  );
  return rows.map((r) => ({ day: r.day, rows: Number(r.rows), written: r.written }));
}

/** This snapshot, which the next export asks each row's writer against. */
export async function snapshotHorizon(tx: Tx): Promise<string> {
  const [r] = await tx<{ h: string }[]>`select pg_current_snapshot()::text as h`;
  return r!.h;
}

/** A daily archive's columns, the numeric ones judged on the rows of `days` (null: every day). */
export async function archiveColumns(tx: Tx, archive: string, days: readonly string[] | null, columns: readonly SourceColumn[]): Promise<ExportColumn[]> {
  const from = days === null ? archive : `(select * from ${archive} where snapshot_date = any('{${days.join(',')}}'::date[])) x`;
  return exportColumns(tx, from, columns);
}
