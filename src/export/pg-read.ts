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
 * The rows of `from` (a FROM clause) `where`, as CSV into `file`, read in the export's snapshot
 * (`pg_export_snapshot`) on a connection of their own, closed after. postgres.js can leave a
 * connection that streamed a COPY unable to read its next answer (a stream ended while its
 * socket was paused: porsager/postgres #499, #917), so no other query follows a COPY on it.
 * Returns the longest line written, in bytes (the reader's line limit: parquet.ts).
 */
export async function copyCsv(open: () => postgres.Sql, snapshot: string, columns: readonly ExportColumn[], from: string, where: string | null, file: string): Promise<{ longestLine: number }> {
  const select = `select ${columns.map((c) => c.read).join(', ')} from ${from}${where ? ` where ${where}` : ''}`;
  const connection = open();
  const fd = openSync(file, 'w');
  const lines = new LineLength();
  try {
    await connection.unsafe('begin isolation level repeatable read read only');
    await connection.unsafe(`set transaction snapshot '${snapshot.replaceAll("'", "''")}'`);
    const stream = await connection.unsafe(`copy (${select}) to stdout (format csv)`).readable();
    let failed: unknown;
    await new Promise<void>((resolve, reject) => {
      stream.on('data', (chunk: Buffer) => {
        try {
          if (failed !== undefined) return;
          writeSync(fd, chunk);
          lines.add(chunk);
        } catch (err) {
          failed = err;
        }
      });
      stream.on('end', () => (failed === undefined ? resolve() : reject(failed)));
      stream.on('error', reject);
    });
  } finally {
    closeSync(fd);
    await connection.end({ timeout: 0 });
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
