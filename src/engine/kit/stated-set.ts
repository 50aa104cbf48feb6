// Absence is not emptiness (contract: "Forms the seeds leave open"). A stored row leaves its
// table (deleted, or delisted) only when a response stated the whole set it belongs to: the
// array present, the list complete, the history fetched whole. A response that leaves a
// field, array or section out says nothing about what it would have held, and closes nothing.
//
// The sets are declared with their tables (src/schema/warehouse/declare-table.ts). A resource
// says only whether its response stated the set (`wholeSet`, `keptMembers`); the lifecycle
// removes what the set no longer carries, after the mass-removal check (job/removals.ts).
import type { PgTable } from 'drizzle-orm/pg-core';
import { declarationOf, type SetRule } from '../../schema/warehouse/declare-table.ts';
import { SET_FROM, SET_KEEPS, SET_KEPT_WHILE } from '../../store/write/set-removal.ts';

/** Pure: the set rule a write's scope matches, by table and scope columns (`kept`: one kept by some key columns). */
export function setRuleOf(table: PgTable, scope: Record<string, unknown>, kept = false): SetRule | undefined {
  const columns = Object.keys(scope).sort().join(',');
  return declarationOf(table)?.sets.find((d) => [...d.scope].sort().join(',') === columns && (d.keptBy !== undefined) === kept);
}

/**
 * The write option that makes `rows` the whole set named by `scope`, when the response
 * stated it; otherwise none (absent is not empty: nothing closes).
 */
export function wholeSet<T extends PgTable>(table: T, scope: Partial<T['$inferInsert']>, stated: boolean, rows: readonly T['$inferInsert'][] = []): { replace?: Partial<T['$inferInsert']> } {
  const d = setRuleOf(table, scope as Record<string, unknown>);
  if (!d) throw new Error(`no set is declared for this table by ${Object.keys(scope).join(', ') || '(the whole table)'}`);
  if (!stated) return {};
  if (d.keptWhile !== undefined) return { replace: { ...scope, [SET_KEPT_WHILE]: d.keptWhile } };
  if (d.from === undefined) return { replace: scope };
  // A window without rows says nowhere it starts: it states nothing.
  const first = earliest(rows.map((r) => (r as Record<string, unknown>)[d.from!]));
  return first === undefined ? {} : { replace: { ...scope, [SET_FROM]: { [d.from]: first } } };
}

/**
 * The write option that keeps, of the set named by `scope`, only the members `kept` names (by
 * the declaration's `keptBy` columns), when the response stated the set; the write has no rows.
 */
export function keptMembers<T extends PgTable>(table: T, scope: Partial<T['$inferInsert']>, stated: boolean, kept: readonly Partial<T['$inferInsert']>[]): { replace?: Partial<T['$inferInsert']> } {
  const d = setRuleOf(table, scope as Record<string, unknown>, true);
  if (!d?.keptBy) throw new Error(`no set kept by some of its key columns is declared for this table by ${Object.keys(scope).join(', ') || '(the whole table)'}`);
  const columns = [...d.keptBy].sort().join(',');
  if (kept.some((k) => Object.keys(k).sort().join(',') !== columns)) throw new Error(`the members kept must be named by ${d.keptBy.join(', ')}`);
  return stated ? { replace: { ...scope, [SET_KEEPS]: kept } } : {};
}

function earliest(values: readonly unknown[]): unknown {
  let min: unknown;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    if (min === undefined || (v instanceof Date && min instanceof Date ? v.getTime() < min.getTime() : String(v) < String(min))) min = v;
  }
  return min;
}
