// The as-of leg's figure of `sync.changes` (issue 58, item 4): what changed in one day of one
// versioned table, against a `T_as_of` read of the same table, both timed as a client sees them
// (as-of-reads.ts `timed`). The table is app.screener_rows, the one whose versions the leg's
// instants are taken from and the documented backtest reads: on a deepened warehouse it has a
// version per token and day (depth.ts), so a day holds one update per token.
import type { Sql } from 'postgres';
import { quoteLiteral as lit } from '../../src/store/quote.ts';
import { QUICK_RUNS, timed } from './as-of-reads.ts';

/** sync.changes over a day may take at most this many times a T_as_of read of the same table. */
export const CHANGES_LIMIT = 2;

export const CHANGES_TABLE = 'app.screener_rows';

export interface ChangesRead {
  table: string;
  /** The interval read, (from, to]: by default the last whole UTC day on the warehouse's clock. */
  from: string;
  to: string;
  changes: number;
  ms: number;
  /** `T_as_of(to)`, the whole table. */
  asOfRows: number;
  asOfMs: number;
  ratio: number;
  limit: number;
  met: boolean;
}

/** Times `sync.changes(table, from, to)` against `table_as_of(to)`; `runs` per read (their median). */
export async function changesRead(db: Sql, o: { runs: number; quickRuns?: number; table?: string; from?: string; to?: string }): Promise<ChangesRead> {
  const table = o.table ?? CHANGES_TABLE;
  const [day] = await db<{ from: string; to: string }[]>`
    select (date_trunc('day', sync.server_clock(), 'UTC') - interval '1 day')::text as from, date_trunc('day', sync.server_clock(), 'UTC')::text as to`;
  const [from, to] = [o.from ?? day!.from, o.to ?? day!.to];
  const changes = await timed(db, `select * from sync.changes(${lit(table)}, ${lit(from)}::timestamptz, ${lit(to)}::timestamptz)`, o.runs, false, o.quickRuns ?? QUICK_RUNS);
  const asOf = await timed(db, `select * from ${table}_as_of(${lit(to)}::timestamptz)`, o.runs, false, o.quickRuns ?? QUICK_RUNS);
  const ratio = changes.ms / Math.max(asOf.ms, 0.001);
  return { table, from, to, changes: changes.rows, ms: changes.ms, asOfRows: asOf.rows, asOfMs: asOf.ms, ratio, limit: CHANGES_LIMIT, met: ratio <= CHANGES_LIMIT };
}

/** The figure in a line, for the leg's log. */
export function changesLine(r: ChangesRead): string {
  return `as-of: sync.changes over one day of ${r.table}: ${r.changes} changes in ${r.ms.toFixed(1)} ms; ${r.table}_as_of: ${r.asOfRows} rows in ${r.asOfMs.toFixed(1)} ms; ratio ${r.ratio.toFixed(2)} (limit ${r.limit}${r.met ? '' : ', FAILED'})`;
}
