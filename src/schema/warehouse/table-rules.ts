// What the write path reads from a table's drizzle declaration, so that no writer states it
// again: the key a row is written by (the primary key), the columns a later write leaves as
// they are (`first_seen_at`), the column that marks a row a whole list stopped listing
// (`delisted_at`: such a row is kept and marked, not deleted), and the columns whose values
// decide whether a row written again changed (all but the key, the kept and the bookkeeping
// and volatile ones). The column rules follow src/schema/warehouse/columns.ts, which declares those columns.
import { getTableColumns } from 'drizzle-orm';
import { getTableConfig, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';
import { BOOKKEEPING_COLUMNS, DELISTED_COLUMN, FIRST_SEEN_COLUMN, VOLATILE_COLUMNS } from './columns.ts';

export interface TableRules {
  /** The primary key's columns, in its order. */
  key: readonly PgColumn[];
  /** Properties kept as they are when a row is written again. */
  kept: readonly string[];
  /** The property set when a row leaves a whole list (else such a row is deleted). */
  delistedBy: string | undefined;
  /** The columns whose values decide whether a row written again changed (key, kept, bookkeeping and volatile columns aside). */
  compared: readonly PgColumn[];
}

const cache = new WeakMap<PgTable, TableRules>();

export function rulesOf(table: PgTable): TableRules {
  let rules = cache.get(table);
  if (rules) return rules;
  const config = getTableConfig(table);
  const columns = Object.entries(getTableColumns(table) as Record<string, PgColumn>);
  const composite = config.primaryKeys[0]?.columns;
  const key = composite && composite.length > 0 ? composite : columns.filter(([, c]) => c.primary).map(([, c]) => c);
  if (key.length === 0) throw new Error(`${config.schema ?? 'public'}.${config.name} declares no primary key: the write path cannot tell its rows apart`);
  const kept = columns.filter(([, c]) => c.name === FIRST_SEEN_COLUMN).map(([p]) => p);
  rules = {
    key,
    kept,
    delistedBy: columns.find(([, c]) => c.name === DELISTED_COLUMN)?.[0],
    compared: columns
      .filter(([p, c]) => !key.some((k) => k.name === c.name) && !kept.includes(p) && !BOOKKEEPING_COLUMNS.includes(c.name) && !VOLATILE_COLUMNS.includes(c.name) && c.generated === undefined && c.generatedIdentity === undefined)
      .map(([, c]) => c),
  };
  cache.set(table, rules);
  return rules;
}

/**
 * The property names of the table's key columns. By column name: a primary key's column
 * objects are not always the table's own (drizzle-kit's loader builds them anew).
 */
export function keyProps(table: PgTable): string[] {
  const byName = new Map(Object.entries(getTableColumns(table) as Record<string, PgColumn>).map(([p, c]) => [c.name, p]));
  return rulesOf(table).key.map((c) => byName.get(c.name)!);
}
