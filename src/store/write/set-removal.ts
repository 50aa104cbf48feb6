// A set's members that a complete response no longer carries leave it: deleted, or marked
// delisted where the table delists (its history trigger keeps what they were). The response's
// rows are compared by key in one statement (their key columns as unnest arrays), within the
// scope the response states (a token, a chart; where the set starts; the members a catalog
// keeps; a condition that keeps a row whatever the rows say).
import { sql, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { rulesOf } from '../../schema/warehouse/table-rules.ts';
import { encodeColumn, textOf, typedText } from './array-params.ts';
import { rowsOf } from '../connection.ts';
import { quoteIdentifier as quote } from '../quote.ts';
import { countOf, shapeOf, type ColumnInfo, type Executor, type TableShape } from './table-shape.ts';

/**
 * Rows of `scope` (column values by property; empty: the whole table) whose key is not among
 * `rows` leave it: deleted, or marked with the write's known time where the table declares a
 * delisting column (and only those not marked yet), the mark linked to the body that closed
 * it and to `runId`. Returns how many left. Call it in a started write (known-time.ts).
 */
export async function removeAbsent<T extends PgTable>(db: Executor, table: T, rows: readonly T['$inferInsert'][], scope: Partial<T['$inferInsert']>, runId?: string): Promise<number> {
  const shape = shapeOf(table);
  const where = absentWhere(shape, table, rows, scope);
  return where === null ? 0 : removeWhere(db, table, shape, where, runId);
}

/**
 * Rows of `scope` whose keys are among `keys` (as `absentKeys` gave them) leave it, as with
 * `removeAbsent`: what a check before the write found absent, without sending the response's
 * rows again. Call it in a started write (known-time.ts).
 */
export async function removeKeys<T extends PgTable>(db: Executor, table: T, scope: Partial<T['$inferInsert']>, keys: readonly string[], runId?: string): Promise<number> {
  if (keys.length === 0) return 0;
  const shape = shapeOf(table);
  const inScope = absentWhere(shape, table, [], scope)!;
  // The keys travel as one JSON parameter (a JS array would become one parameter per key).
  const where = sql.join([inScope, sql.raw(` and json_build_array(${keyList(table, shape)})::text in (select jsonb_array_elements_text(`), sql`${JSON.stringify(keys)}`, sql.raw('::jsonb))')]);
  return removeWhere(db, table, shape, where, runId);
}

/** Deletes the rows `where` picks, or marks them delisted where the table delists. */
async function removeWhere(db: Executor, table: PgTable, shape: TableShape, where: SQL, runId?: string): Promise<number> {
  const rules = rulesOf(table);
  const byProp = new Map(shape.columns.map((c) => [c.prop, c]));
  const value = (c: ColumnInfo, v: unknown) => typedText(c, textOf(c.column.mapToDriverValue(v)));
  const delisted = rules.delistedBy ? byProp.get(rules.delistedBy) : undefined;
  // The delisted row is a new version (its known time set by the history trigger), read from
  // the body that no longer listed it, by this run.
  const link = byProp.get('rawResponseId');
  const run = byProp.get('runId');
  const sets = [
    sql.raw(`${delisted?.name} = "sync"."known_at"()`),
    ...(link ? [sql.raw(`${link.name} = "sync"."closing_body"()`)] : []),
    ...(run && runId ? [sql.join([sql.raw(`${run.name} = `), value(run, runId)])] : []),
  ];
  const statement = delisted
    ? sql.join([sql.raw(`update ${shape.qualified} set `), sql.join(sets, sql.raw(', ')), where])
    : sql.join([sql.raw(`delete from ${shape.qualified}`), where]);
  return countOf(await db.execute(statement));
}

/** The table's key columns, qualified, for `json_build_array`: the form absentKeys returns keys in. */
function keyList(table: PgTable, shape: TableShape): string {
  return rulesOf(table).key.map((k) => `${shape.qualified}.${quote(k.name)}`).join(', ');
}

/** What `removeAbsent` would remove, before it does: the set's current members and the keys (JSON arrays) of those that would leave. */
export async function absentKeys<T extends PgTable>(db: Executor, table: T, rows: readonly T['$inferInsert'][], scope: Partial<T['$inferInsert']>): Promise<{ members: number; absent: string[] }> {
  const shape = shapeOf(table);
  const inScope = absentWhere(shape, table, [], scope)!;
  const [m] = rowsOf<{ n: string }>(await db.execute(sql.join([sql.raw(`select count(*)::text as n from ${shape.qualified}`), inScope])));
  const members = Number(m?.n ?? 0);
  const where = absentWhere(shape, table, rows, scope);
  if (where === null || members === 0) return { members, absent: [] };
  const absent = rowsOf<{ k: string }>(await db.execute(sql.join([sql.raw(`select json_build_array(${keyList(table, shape)})::text as k from ${shape.qualified}`), where, sql.raw(' order by 1')])));
  return { members, absent: absent.map((r) => r.k) };
}

/**
 * In a scope, where the set starts (column values by property): stored rows before it are
 * outside the set (a trend of the last 30 days states nothing about the day before). A symbol,
 * so that the scope's columns (Object.entries, JSON) stay the columns it fixes.
 */
export const SET_FROM: unique symbol = Symbol('set starts at');

/**
 * In a scope, the members that stay, by some of the key columns (a list of column values by
 * property, all naming the same columns): a catalog states which charts, and which of their
 * timeframes, a token has, not their points. A stored row that matches none of them leaves.
 */
export const SET_KEEPS: unique symbol = Symbol('set keeps');

/**
 * In a scope, a condition on the stored row (SQL naming the table by its qualified name) that
 * keeps it whatever the rows say: a chart's series stays while any of its timeframes still
 * has points of it, whichever timeframe's response is being written.
 */
export const SET_KEPT_WHILE: unique symbol = Symbol('set keeps while');

/**
 * The ` where ...` of the stored rows of `scope` that `rows` do not carry (those not delisted
 * yet, where the table delists), or null when none can be: the scope fixes the whole key.
 * The rows travel as one array per key column (unnest), so a history of tens of thousands of
 * rows is a few parameters, not one per value.
 */
function absentWhere<T extends PgTable>(shape: TableShape, table: T, rows: readonly T['$inferInsert'][], scope: Partial<T['$inferInsert']>): SQL | null {
  const rules = rulesOf(table);
  const byProp = new Map(shape.columns.map((c) => [c.prop, c]));
  const value = (c: ColumnInfo, v: unknown) => typedText(c, textOf(c.column.mapToDriverValue(v)));
  const conditions: SQL[] = [];
  for (const [prop, v] of Object.entries(scope)) {
    const c = byProp.get(prop);
    if (!c) throw new Error(`${shape.qualified} has no column ${prop}`);
    conditions.push(v === null || v === undefined ? sql.raw(`${c.name} is null`) : sql`${sql.raw(c.name)} = ${value(c, v)}`);
  }
  for (const [prop, v] of Object.entries((scope as { [SET_FROM]?: Record<string, unknown> })[SET_FROM] ?? {})) {
    const c = byProp.get(prop);
    if (!c) throw new Error(`${shape.qualified} has no column ${prop}`);
    conditions.push(sql`${sql.raw(c.name)} >= ${value(c, v)}`);
  }
  const keeps = (scope as { [SET_KEEPS]?: readonly Record<string, unknown>[] })[SET_KEEPS];
  if (keeps !== undefined) {
    if (rows.length > 0) throw new Error(`${shape.qualified}: a set stated by the members it keeps is written without rows`);
    const columns = Object.keys(keeps[0] ?? {}).map((prop) => byProp.get(prop) ?? fail(`${shape.qualified} has no column ${prop}`));
    if (keeps.length > 0) conditions.push(notAmong(shape, columns, keeps));
  }
  const keptWhile = (scope as { [SET_KEPT_WHILE]?: SQL })[SET_KEPT_WHILE];
  if (keptWhile !== undefined) conditions.push(sql.join([sql.raw('not ('), keptWhile, sql.raw(')')]));
  // The key columns the scope does not fix tell the rows that stay.
  const rest = rules.key.map((k) => shape.byName.get(k.name)!).filter((c) => !(c.prop in scope));
  if (rows.length > 0 && rest.length > 0) conditions.push(notAmong(shape, rest, rows as readonly Record<string, unknown>[]));
  else if (rows.length > 0) return null;
  const delisted = rules.delistedBy ? byProp.get(rules.delistedBy) : undefined;
  if (delisted) conditions.push(sql.raw(`${delisted.name} is null`));
  return sql.join([sql.raw(' where '), conditions.length > 0 ? sql.join(conditions, sql.raw(' and ')) : sql.raw('true')]);
}

function fail(message: string): never {
  throw new Error(message);
}

/**
 * A stored row's `columns` are those of none of `rows`. The rows' tuples are an uncorrelated
 * `in (select ... from unnest(...))`, which Postgres hashes once (a hashed SubPlan): a `not
 * exists` over the same unnest was planned as a nested loop that unnested, and parsed, the
 * arrays again for every stored row of the set (docs/performance.md).
 */
function notAmong(shape: TableShape, columns: readonly ColumnInfo[], rows: readonly Record<string, unknown>[]): SQL {
  const arrays: SQL[] = [];
  const aliases: string[] = [];
  const stored: string[] = [];
  const among: SQL[] = [];
  for (const c of columns) {
    const col = encodeColumn(c, rows);
    const name = `${shape.qualified}.${c.name}`;
    if (col.constant) {
      among.push(col.value === null ? sql.raw(`${name} is null`) : sql.join([sql.raw(`${name} = `), typedText(c, col.value)]));
      continue;
    }
    if (arrays.length > 0) arrays.push(sql.raw(', '));
    arrays.push(sql`${col.param}`, sql.raw(col.cast));
    aliases.push(c.name);
    stored.push(name);
  }
  if (aliases.length > 0) {
    const tuple = sql.raw(`(${stored.join(', ')}) in (select ${aliases.map((a) => `u.${a}`).join(', ')} from unnest(`);
    among.push(sql.join([tuple, ...arrays, sql.raw(`) as u(${aliases.join(', ')}))`)]));
  }
  return sql.join([sql.raw('not ('), sql.join(among, sql.raw(' and ')), sql.raw(')')]);
}
