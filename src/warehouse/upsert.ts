// Idempotent batched upserts: one statement per batch, the incoming row referred to as
// `excluded`, duplicates inside a batch collapsed (Postgres refuses them in one statement).
import { getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db } from './connection.ts';

/** A transaction or the database itself: both can run statements. */
export type Executor = Pick<Db, 'insert' | 'update' | 'delete' | 'select' | 'execute'>;

// postgres.js refuses 65534+ parameters in one statement.
const MAX_PARAMS = 65_000;

export interface UpsertOptions<T extends PgTable> {
  /** The primary key (or a unique index) columns. */
  target: PgColumn[];
  /** Columns kept as they are on conflict (e.g. `first_seen_at`). */
  keep?: (keyof T['$inferInsert'])[];
  batchSize?: number;
}

export async function upsertRows<T extends PgTable>(
  db: Executor,
  table: T,
  rows: T['$inferInsert'][],
  options: UpsertOptions<T>,
): Promise<number> {
  if (rows.length === 0) return 0;
  const columns = getTableColumns(table) as Record<string, PgColumn>;
  const targetNames = new Set(options.target.map((c) => c.name));
  const keep = new Set((options.keep ?? []) as string[]);
  const set: Record<string, SQL> = {};
  for (const [prop, column] of Object.entries(columns)) {
    if (targetNames.has(column.name) || keep.has(prop)) continue;
    set[prop] = sql.raw(`excluded."${column.name}"`);
  }
  const unique = dedupe(rows, options.target, columns);
  const perRow = Object.keys(columns).length;
  const size = Math.max(1, Math.min(options.batchSize ?? 2000, Math.floor(MAX_PARAMS / perRow)));
  for (let i = 0; i < unique.length; i += size) {
    const batch = unique.slice(i, i + size);
    // drizzle's generic insert typing does not survive the table type parameter.
    await (db.insert(table).values(batch as never) as unknown as { onConflictDoUpdate(c: unknown): Promise<unknown> }).onConflictDoUpdate({
      target: options.target,
      set,
    });
  }
  return unique.length;
}

/** Last row wins for each key. */
function dedupe<R extends Record<string, unknown>>(rows: R[], target: PgColumn[], columns: Record<string, PgColumn>): R[] {
  const byName = new Map(Object.entries(columns).map(([prop, c]) => [c.name, prop]));
  const props = target.map((c) => byName.get(c.name) ?? c.name);
  const seen = new Map<string, R>();
  for (const row of rows) {
    const key = JSON.stringify(props.map((p) => keyPart(row[p])));
    seen.delete(key);
    seen.set(key, row);
  }
  return [...seen.values()];
}

function keyPart(v: unknown): unknown {
  return v instanceof Date ? v.toISOString() : v;
}
