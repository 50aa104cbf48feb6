// How big the warehouse's tables are, as sizes: rows counted exactly where the table is small
// enough to count cheaply, otherwise Postgres's own estimate (pg_class.reltuples, kept by
// ANALYZE and autovacuum), and the space on disk (pg_total_relation_size: the table with its
// indexes and TOAST).
import { sql } from 'drizzle-orm';
import type { Warehouse } from './connection.ts';

/** The schemas tesync writes. */
export const SIZED_SCHEMAS = ['app', 'gateway', 'sync'] as const;
/** Tables whose heap is at most this many bytes are counted exactly (a scan of a few ms). */
export const EXACT_COUNT_MAX_BYTES = 8 * 1024 * 1024;

export interface TableSize {
  /** `schema.table` */
  table: string;
  schema: string;
  /** Rows: exact when `exact`, else Postgres's estimate; null when Postgres has none yet (never analyzed). */
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
  /** Tables whose row count is unknown (never analyzed and too big to count). */
  unknown: number;
  bytes: number;
}

export interface TableSizes {
  schemas: SchemaSize[];
  /** Every table, largest on disk first. */
  tables: TableSize[];
}

export async function readTableSizes(w: Warehouse): Promise<TableSizes> {
  const rel = await w.query<{ schema: string; name: string; estimate: number; heap: string; total: string }>(sql`
    select n.nspname as schema, c.relname as name, c.reltuples::float8 as estimate,
           pg_relation_size(c.oid)::text as heap, pg_total_relation_size(c.oid)::text as total
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname in (${sql.join(SIZED_SCHEMAS.map((s) => sql`${s}`), sql`, `)}) and c.relkind = 'r'
    order by pg_total_relation_size(c.oid) desc, 1, 2`);
  const small = rel.filter((r) => Number(r.heap) <= EXACT_COUNT_MAX_BYTES);
  const exact = new Map<string, number>();
  if (small.length > 0) {
    const counts = sql.join(
      small.map((r) => sql`select ${`${r.schema}.${r.name}`}::text as t, count(*)::text as n from ${sql.identifier(r.schema)}.${sql.identifier(r.name)}`),
      sql` union all `,
    );
    for (const c of await w.query<{ t: string; n: string }>(counts)) exact.set(c.t, Number(c.n));
  }
  const tables: TableSize[] = rel.map((r) => {
    const table = `${r.schema}.${r.name}`;
    const counted = exact.get(table);
    const estimate = Number(r.estimate);
    return { table, schema: r.schema, rows: counted ?? (estimate >= 0 ? Math.round(estimate) : null), exact: counted !== undefined, bytes: Number(r.total) };
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
