// How big the warehouse's tables are, as sizes: rows counted exactly where counting is cheap
// or where Postgres's figure would be a guess, otherwise estimated as Postgres's planner
// estimates them, and the space on disk (pg_total_relation_size: the table with its indexes
// and TOAST).
//
// Postgres's own figure, pg_class.reltuples, is what the last ANALYZE (or VACUUM) counted:
// -1 before the first, and right after a first sync a table that grew from nothing may not
// have been analyzed yet, or was analyzed early in the load (the demo's app.metric_history
// showed ~21,728 rows of 81,760). So a table is counted exactly when it is small, or was never
// analyzed (or analyzed empty); an analyzed one is estimated as the planner does, its rows
// per page at that ANALYZE times the pages it has now, which follows a table that kept its
// shape while it grew.
import { sql } from 'drizzle-orm';
import { rowsOf, type Warehouse } from '../connection.ts';

/** The schemas tesync writes. */
export const SIZED_SCHEMAS = ['app', 'gateway', 'sync'] as const;
/** Tables whose heap is at most this many bytes are counted exactly (a scan of a few ms). */
export const EXACT_COUNT_MAX_BYTES = 8 * 1024 * 1024;
/**
 * A larger table that was never analyzed is counted exactly, in at most this long; past it
 * (a huge table loaded in one go), the activity statistics' live rows stand in (estimated).
 */
export const UNANALYZED_COUNT_TIMEOUT_MS = 10_000;

export interface TableSize {
  /** `schema.table` */
  table: string;
  schema: string;
  /** Rows: exact when `exact`, else an estimate; null when there is none (never analyzed, too big to count, no activity statistics). */
  rows: number | null;
  exact: boolean;
  /** On disk, indexes and TOAST included. */
  bytes: number;
}

export interface SchemaSize {
  schema: string;
  tables: number;
  /** The tables' rows added up; `exact` only when every table's count is. */
  rows: number;
  exact: boolean;
  /** Tables whose row count is unknown (never analyzed, too big to count, no activity statistics). */
  unknown: number;
  bytes: number;
}

export interface TableSizes {
  schemas: SchemaSize[];
  /** Every table, largest on disk first. */
  tables: TableSize[];
}

/** A table as pg_class has it. */
export interface TableStats {
  schema: string;
  name: string;
  /** pg_class.reltuples: rows at the last ANALYZE or VACUUM; -1 when never. */
  reltuples: number;
  /** pg_class.relpages: heap pages at that ANALYZE or VACUUM. */
  relpages: number;
  /** Heap pages now. */
  pages: number;
  /** Heap bytes now. */
  heapBytes: number;
  /** Live rows by the activity statistics (pg_stat_user_tables.n_live_tup); null when it has none. */
  liveTuples: number | null;
}

/** How a table's rows are known: counted, or estimated from what ANALYZE saw. Pure. */
export function rowsBy(t: TableStats): { count: true } | { count: false; estimate: number } {
  if (t.heapBytes <= EXACT_COUNT_MAX_BYTES) return { count: true };
  // Never analyzed (-1), or analyzed while empty: nothing to scale from.
  if (t.reltuples < 0 || t.relpages <= 0) return { count: true };
  return { count: false, estimate: Math.round((t.reltuples / t.relpages) * t.pages) };
}

export async function readTableSizes(w: Warehouse): Promise<TableSizes> {
  const rel = await w.query<{ schema: string; name: string; reltuples: number; relpages: number; heap: string; total: string; block: number; live: string | null }>(sql`
    select n.nspname as schema, c.relname as name, c.reltuples::float8 as reltuples, c.relpages::int as relpages,
           pg_relation_size(c.oid)::text as heap, pg_total_relation_size(c.oid)::text as total,
           current_setting('block_size')::int as block, s.n_live_tup::text as live
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    left join pg_stat_user_tables s on s.relid = c.oid
    where n.nspname in (${sql.join(SIZED_SCHEMAS.map((s) => sql`${s}`), sql`, `)}) and c.relkind = 'r'
    order by pg_total_relation_size(c.oid) desc, 1, 2`);
  const stats = rel.map((r): TableStats & { total: number } => ({
    schema: r.schema,
    name: r.name,
    reltuples: Number(r.reltuples),
    relpages: Number(r.relpages),
    pages: Math.ceil(Number(r.heap) / Number(r.block)),
    heapBytes: Number(r.heap),
    liveTuples: r.live === null ? null : Number(r.live),
    total: Number(r.total),
  }));
  const small = stats.filter((t) => rowsBy(t).count && t.heapBytes <= EXACT_COUNT_MAX_BYTES);
  const unanalyzed = stats.filter((t) => rowsBy(t).count && t.heapBytes > EXACT_COUNT_MAX_BYTES);
  const exact = new Map<string, number>();
  if (small.length > 0) {
    const counts = sql.join(
      small.map((t) => sql`select ${`${t.schema}.${t.name}`}::text as t, count(*)::text as n from ${sql.identifier(t.schema)}.${sql.identifier(t.name)}`),
      sql` union all `,
    );
    for (const c of await w.query<{ t: string; n: string }>(counts)) exact.set(c.t, Number(c.n));
  }
  for (const t of unanalyzed) {
    const n = await countWithin(w, t, UNANALYZED_COUNT_TIMEOUT_MS);
    if (n !== null) exact.set(`${t.schema}.${t.name}`, n);
  }
  const tables: TableSize[] = stats.map((t) => {
    const table = `${t.schema}.${t.name}`;
    const counted = exact.get(table);
    const by = rowsBy(t);
    const estimate = by.count ? t.liveTuples : by.estimate;
    return { table, schema: t.schema, rows: counted ?? estimate, exact: counted !== undefined, bytes: t.total };
  });
  const schemas = SIZED_SCHEMAS.map((schema): SchemaSize => {
    const own = tables.filter((t) => t.schema === schema);
    return {
      schema,
      tables: own.length,
      rows: own.reduce((n, t) => n + (t.rows ?? 0), 0),
      exact: own.every((t) => t.exact),
      unknown: own.filter((t) => t.rows === null).length,
      bytes: own.reduce((n, t) => n + t.bytes, 0),
    };
  });
  return { schemas, tables };
}

/** count(*) of a table within `timeoutMs` (a read, in a transaction of its own); null when it took longer. */
async function countWithin(w: Warehouse, t: Pick<TableStats, 'schema' | 'name'>, timeoutMs: number): Promise<number | null> {
  try {
    return await w.db.transaction(async (tx) => {
      await tx.execute(sql.raw(`set local statement_timeout = ${Math.max(1, Math.round(timeoutMs))}`));
      const [row] = rowsOf<{ n: string }>(await tx.execute(sql`select count(*)::text as n from ${sql.identifier(t.schema)}.${sql.identifier(t.name)}`));
      return Number(row!.n);
    });
  } catch (err) {
    // 57014: canceled by the statement timeout. Anything else is the warehouse failing: said as it is.
    if (codeOf(err) === '57014') return null;
    throw err;
  }
}

function codeOf(err: unknown): string | undefined {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** `812 kB`, `3.4 MB`: binary units, as pg_size_pretty. Pure. */
export function formatBytes(n: number): string {
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}
