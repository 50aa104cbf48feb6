// Idempotent batched upserts: one statement per batch, the incoming row referred to as
// `excluded`, duplicates inside a batch collapsed (Postgres refuses them in one statement).
//
// A batch goes as `insert ... select ... from unnest($1::type[], $2::type[], ...)`: one
// parameter per column, an array literal of the values' text forms that Postgres casts to
// the column's type (a column with one value for the whole batch goes as one scalar).
// Numerics travel as text, so decimals stay exact; there is no parameter limit; and the
// statement costs a few string joins instead of drizzle's per-value query builder, which
// spent more CPU than the database itself (docs/performance.md has the figures).
// Tables with array columns (unnest would flatten them) keep the multi-row VALUES form.
//
// A first write of a key range (a token's whole history, a chart's points) can conflict with
// nothing, and goes as a plain INSERT: ON CONFLICT's speculative insertion costs every row an
// extra probe of the primary key (docs/performance.md, the write path).
//
// How a batch's values travel is array-params.ts; what a table's columns are, table-shape.ts;
// the removal of the members a complete response no longer carries, set-removal.ts.
import { sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { NotUnderstoodError } from '../../lib/errors.ts';
import { rowsOf } from '../connection.ts';
import { isKnownTime } from '../../schema/warehouse/columns.ts';
import { rulesOf } from '../../schema/warehouse/table-rules.ts';
import { encodeColumn, textOf, typedText } from './array-params.ts';
import { quoteIdentifier as quote } from '../quote.ts';
import { countOf, shapeOf, type ColumnInfo, type Executor, type TableShape } from './table-shape.ts';
import { withoutVolatileSql } from './volatile-sql.ts';

// postgres.js refuses 65534+ parameters in one statement (the VALUES form only).
const MAX_PARAMS = 65_000;

// Below this many rows a plain INSERT saves less than the probe and the savepoint cost.
const INSERT_ONLY_MIN_ROWS = 500;

export interface UpsertOptions<T extends PgTable> {
  /** Columns this write keeps as they are on conflict, beyond those the table declares kept. */
  keep?: (keyof T['$inferInsert'])[];
  batchSize?: number;
}

/** Writes rows by the table's declared key (src/schema/warehouse/table-rules.ts). */
/** Prepares and writes in one step, outside the lifecycle (tests, the bench): a refusal is thrown. */
export async function upsertRows<T extends PgTable>(db: Executor, table: T, rows: T['$inferInsert'][], options: UpsertOptions<T> = {}): Promise<number> {
  const prepared = prepareUpsert(table, rows, options);
  if ('refused' in prepared) throw new NotUnderstoodError(prepared.refused);
  return prepared.run(db);
}

/** Rows that contradict each other: the write is refused, and why; nothing of it is written. */
export interface RefusedWrite {
  readonly refused: string;
}

/** Rows made ready to write: deduplicated, in key order, in batches. */
export interface PreparedUpsert {
  /** The rows it sends (after dedupe). */
  readonly rows: number;
  /**
   * The row objects it sends, in order: a value set on them before `run` is the one sent (the
   * lifecycle links them to their bodies once its transaction has archived those).
   */
  readonly sending: readonly Record<string, unknown>[];
  /**
   * Sends them; returns how many it wrote: inserted, or changed (a row found the same is left
   * as it is). A new key range is probed first, on the same executor (inside the caller's
   * transaction: a store visit of its own costs a job one more).
   */
  run(db: Executor): Promise<number>;
}

/**
 * Everything but the writing, in memory, so that a caller can do it before its transaction,
 * which then holds its connection and its row locks only while statements run; and learn
 * before it whether the rows contradict each other (a refusal). `run` writes through the
 * executor it is given, encoding each batch as it is sent, so that one batch's statement at a
 * time is held (peak RSS).
 */
export function prepareUpsert<T extends PgTable>(table: T, rows: T['$inferInsert'][], options: UpsertOptions<T> = {}): PreparedUpsert | RefusedWrite {
  if (rows.length === 0) return { rows: 0, sending: [], run: async () => 0 };
  const shape = shapeOf(table);
  const rules = rulesOf(table);
  const keep = new Set([...rules.kept, ...((options.keep ?? []) as string[])]);
  const write: WriteRules = { key: rules.key, keep, compared: rules.compared.filter((c) => !keep.has(shape.byName.get(c.name)?.prop ?? '')) };
  // A key column with one value in the whole batch (the token, most often) tells no rows apart.
  const varying = rules.key.map((c) => shape.byName.get(c.name)?.prop ?? c.name).filter((p) => !sameInAll(rows, p));
  const deduped = dedupe(withoutKnownTime(rows, shape), varying, shape.qualified);
  if ('refused' in deduped) return deduped;
  const unique = inKeyOrder(deduped, varying);
  const unnest = shape.unnestable && !undefinedBesideDefaults(unique, shape.columns);
  const perRow = shape.columns.length;
  const size = Math.max(1, unnest ? (options.batchSize ?? 2000) : Math.min(options.batchSize ?? 2000, Math.floor(MAX_PARAMS / perRow)));
  const batches: T['$inferInsert'][][] = [];
  for (let i = 0; i < unique.length; i += size) batches.push(unique.length <= size ? unique : unique.slice(i, i + size));
  const n = unique.length;
  const sending = unique as readonly Record<string, unknown>[];
  if (!unnest) {
    return {
      rows: n,
      sending,
      run: async (ex) => {
        let written = 0;
        for (const batch of batches) written += await valuesUpsert(ex, table, batch, write, shape);
        return written;
      },
    };
  }
  const send = async (ex: Executor, mode: 'insert' | 'upsert') => {
    let written = 0;
    for (const batch of batches) written += countOf(await ex.execute(unnestStatement(shape, batch, write, mode)));
    return written;
  };
  return {
    rows: n,
    sending,
    run: async (ex) => {
      if (n < INSERT_ONLY_MIN_ROWS || !(await keyRangeIsEmpty(ex, shape, unique, rules.key))) return send(ex, 'upsert');
      try {
        // In a savepoint (a transaction of its own outside one) that a unique violation rolls
        // back. drizzle's nested transaction, not a `savepoint` statement: postgres.js fails
        // a whole transaction in which any statement failed, except inside its own savepoint
        // scope.
        return await ex.transaction((sp) => send(sp as unknown as Executor, 'insert'));
      } catch (err) {
        // A writer that filled the same range since the probe (two workers, whose
        // uncommitted rows the probe does not see): the savepoint undid the inserts, and the
        // usual upsert runs.
        if (!isUniqueViolation(err)) throw err;
        return send(ex, 'upsert');
      }
    },
  };
}

/**
 * The rows without the columns of known time (fetched_at, first/last seen): their default,
 * the server's clock, is what they hold, whatever a caller set.
 */
function withoutKnownTime<R extends Record<string, unknown>>(rows: R[], shape: TableShape): R[] {
  const props = shape.columns.filter((c) => isKnownTime(c.column)).map((c) => c.prop);
  if (props.length === 0 || !rows.some((r) => props.some((p) => r[p] !== undefined))) return rows;
  return rows.map((r) => {
    const copy = { ...r };
    for (const p of props) delete copy[p];
    return copy;
  });
}

/**
 * Whether no stored row shares the key columns that are the same in every row, when they
 * lead the conflict target (the token, and the chart): then none of the rows can conflict.
 * One probe of the primary key's index.
 */
async function keyRangeIsEmpty(db: Executor, shape: TableShape, rows: readonly Record<string, unknown>[], target: readonly PgColumn[]): Promise<boolean> {
  const conditions: SQL[] = [];
  for (const key of target) {
    const c = shape.byName.get(key.name);
    if (!c || !sameInAll(rows, c.prop)) break;
    const v = rows[0]![c.prop];
    if (v === null || v === undefined) break;
    conditions.push(sql`${sql.raw(c.name)} = ${typedText(c, textOf(c.column.mapToDriverValue(v)))}`);
  }
  if (conditions.length === 0) return false;
  const found = rowsOf(await db.execute(sql`select 1 from ${sql.raw(shape.qualified)} where ${sql.join(conditions, sql` and `)} limit 1`));
  return found.length === 0;
}

function isUniqueViolation(err: unknown): boolean {
  // drizzle wraps the driver's error; Postgres' own carries the SQLSTATE.
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (e.code === '23505') return true;
  }
  return false;
}

/**
 * A column that some rows leave undefined and others set, and that has a default: in the
 * VALUES form drizzle writes `default` for those rows, which one array cannot express.
 */
function undefinedBesideDefaults(rows: readonly Record<string, unknown>[], columns: readonly ColumnInfo[]): boolean {
  return columns.some((c) => c.hasDefault && rows.some((r) => r[c.prop] === undefined) && rows.some((r) => r[c.prop] !== undefined));
}

/**
 * How one write treats a conflict: the key it conflicts on, the columns it leaves as they are,
 * and the columns that must differ for the stored row to be rewritten at all.
 */
interface WriteRules {
  key: readonly PgColumn[];
  keep: ReadonlySet<string>;
  compared: readonly PgColumn[];
}

/**
 * The condition of `do update`: the stored row differs from the incoming one in a compared
 * column. Numerics and jsonb are compared as text, so a decimal's written form (1.50 against
 * 1.5) counts as a change, as it would be one in what is stored. A jsonb text that differs is
 * compared again without upstream's volatile fields (volatile-sql.ts): the regular expressions
 * run only for rows whose text differs, never on an unchanged resync.
 */
function changedCondition(shape: TableShape, compared: readonly PgColumn[]): string | null {
  if (compared.length === 0) return null;
  const ref = (prefix: string, c: PgColumn) => `${prefix}.${quote(c.name)}`;
  const plain = compared.filter((c) => c.getSQLType() !== 'jsonb');
  const side = (prefix: string) => plain.map((c) => (c.getSQLType() === 'numeric' ? `${ref(prefix, c)}::text` : ref(prefix, c)));
  const parts = plain.length > 0 ? [`(${side(shape.qualified).join(', ')}) is distinct from (${side('excluded').join(', ')})`] : [];
  for (const c of compared.filter((c) => c.getSQLType() === 'jsonb')) {
    const [stored, incoming] = [`${ref(shape.qualified, c)}::text`, `${ref('excluded', c)}::text`];
    parts.push(`(${stored} is distinct from ${incoming} and ${withoutVolatileSql(stored)} is distinct from ${withoutVolatileSql(incoming)})`);
  }
  return parts.join(' or ');
}

function unnestStatement(shape: TableShape, rows: readonly Record<string, unknown>[], rules: WriteRules, mode: 'insert' | 'upsert'): SQL {
  // A column no row sets is left out: its default (or null) applies, as in the VALUES form.
  const present = shape.columns.filter((c) => rows.some((r) => r[c.prop] !== undefined));
  const keyNames = new Set(rules.key.map((c) => c.name));
  // Every other column is set from `excluded`, the left-out ones too (to their default), as
  // the VALUES form does.
  const updates = shape.columns.filter((c) => !c.generated && !keyNames.has(c.column.name) && !rules.keep.has(c.prop)).map((c) => `${c.name} = excluded.${c.name}`);
  const conflict = `(${rules.key.map((c) => quote(c.name)).join(', ')})`;
  const changed = changedCondition(shape, rules.compared);
  // A column with one value for the whole batch (the run, the fetch time, the token) goes
  // as one scalar: half the bytes of a history batch, and less for Postgres to parse.
  const select: SQL[] = [];
  const arrays: SQL[] = [];
  const aliases: string[] = [];
  for (const c of present) {
    const col = encodeColumn(c, rows);
    if (select.length > 0) select.push(sql.raw(', '));
    if (col.constant) {
      // In a scalar subquery, Postgres converts it once per statement. A bare cast to a type
      // whose input depends on settings (timestamptz, date: TimeZone, DateStyle) is not
      // folded to a constant, and ran once per row.
      select.push(col.value === null ? sql.raw(`null::${c.column.getSQLType()}`) : sql.join([sql.raw('(select '), typedText(c, col.value), sql.raw(')')]));
      continue;
    }
    select.push(sql.raw(`u.${c.name}`));
    if (arrays.length > 0) arrays.push(sql.raw(', '));
    arrays.push(sql`${col.param}`, sql.raw(col.cast));
    aliases.push(c.name);
  }
  const from = aliases.length > 0 ? [sql.raw(' from unnest('), ...arrays, sql.raw(`) as u(${aliases.join(', ')})`)] : [];
  return sql.join([
    sql.raw(`insert into ${shape.qualified} (${present.map((c) => c.name).join(', ')}) select `),
    ...select,
    ...from,
    sql.raw(mode === 'insert' ? '' : ` on conflict ${conflict} ${updates.length ? `do update set ${updates.join(', ')}${changed ? ` where ${changed}` : ''}` : 'do nothing'}`),
  ]);
}

/** The multi-row VALUES form, for tables unnest cannot carry. */
async function valuesUpsert<T extends PgTable>(db: Executor, table: T, batch: T['$inferInsert'][], rules: WriteRules, shape: TableShape): Promise<number> {
  const keyNames = new Set(rules.key.map((c) => c.name));
  const set: Record<string, SQL> = {};
  for (const c of shape.columns) {
    if (keyNames.has(c.column.name) || rules.keep.has(c.prop) || c.generated) continue;
    set[c.prop] = sql.raw(`excluded.${c.name}`);
  }
  // drizzle's generic insert typing does not survive the table type parameter.
  const changed = changedCondition(shape, rules.compared);
  return countOf(
    await (db.insert(table).values(batch as never) as unknown as { onConflictDoUpdate(c: unknown): Promise<unknown> }).onConflictDoUpdate({
      target: [...rules.key],
      set,
      ...(changed ? { setWhere: sql.raw(changed) } : {}),
    }),
  );
}

/**
 * One row per key (`props`: the key columns that vary). Two rows with one key and the same values are one row sent twice; with
 * different values they are the sign of a response read wrongly (streams folded into one, a
 * dimension taken for a metric): which one is true cannot be told, so nothing is written.
 */
function dedupe<R extends Record<string, unknown>>(rows: R[], props: readonly string[], table: string): R[] | RefusedWrite {
  const seen = new Map<string, R>();
  let duplicates = false;
  for (const row of rows) {
    // Postgres text cannot hold NUL: joined by it, the parts of two different keys never collide.
    let key = props.length === 0 ? '' : keyPart(row[props[0]!]);
    for (let i = 1; i < props.length; i++) key += `\u0000${keyPart(row[props[i]!])}`;
    const before = seen.get(key);
    if (before !== undefined) {
      if (!sameRow(before, row)) return { refused: `${table}: two rows for the key ${describeKey(row, props)} with different values` };
      duplicates = true;
      continue;
    }
    seen.set(key, row);
  }
  return duplicates ? [...seen.values()] : rows;
}

function describeKey(row: Record<string, unknown>, props: readonly string[]): string {
  if (props.length === 0) return '(the same in every row)';
  return props.map((p) => `${p}=${keyPart(row[p]).replace('\u0001', 'null')}`).join(', ');
}

/** The same values in every column (the bookkeeping ones included: one batch shares them). */
function sameRow(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (!sameValue(a[k], b[k])) return false;
  return true;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (typeof a === 'object' && typeof b === 'object' && a !== null && b !== null) return JSON.stringify(a) === JSON.stringify(b);
  return false;
}

/**
 * The rows in the order of their key (`props`: the key columns that vary, in the key's
 * order). A B-tree takes ascending inserts at one place: a new range at the end of the index
 * goes down the tree's right edge without a search, and the pages it fills split 90/10
 * instead of in halves. Upstream tables come by time, then series (a history row per day
 * with a value per metric), which is not the key's order (metric, then time): unordered, each
 * insert goes to another place and splits pages in halves. Rows mostly come as groups
 * each already ascending, so they are grouped by the leading columns and only the groups are
 * sorted (a group out of order is sorted too). The order only costs or saves time: every row
 * is written either way.
 */
function inKeyOrder<R extends Record<string, unknown>>(rows: R[], props: readonly string[]): R[] {
  if (props.length === 0 || ascending(rows, props)) return rows;
  const last = props.slice(-1);
  const lead = props.slice(0, -1);
  if (lead.length === 0) return [...rows].sort((a, b) => compareKeys(a, b, last));
  const groups = new Map<string, R[]>();
  for (const row of rows) {
    let key = keyPart(row[lead[0]!]);
    for (let i = 1; i < lead.length; i++) key += `\u0000${keyPart(row[lead[i]!])}`;
    const group = groups.get(key);
    if (group) group.push(row);
    else groups.set(key, [row]);
  }
  const out: R[] = [];
  for (const group of [...groups.values()].sort((a, b) => compareKeys(a[0]!, b[0]!, lead))) {
    if (!ascending(group, last)) group.sort((a, b) => compareKeys(a, b, last));
    for (const row of group) out.push(row);
  }
  return out;
}

function ascending(rows: readonly Record<string, unknown>[], props: readonly string[]): boolean {
  for (let i = 1; i < rows.length; i++) if (compareKeys(rows[i - 1]!, rows[i]!, props) > 0) return false;
  return true;
}

function compareKeys(a: Record<string, unknown>, b: Record<string, unknown>, props: readonly string[]): number {
  for (const p of props) {
    const c = compareValues(a[p], b[p]);
    if (c !== 0) return c;
  }
  return 0;
}

/**
 * Close to the index's order for the key types: instants by time, numbers by value, text by
 * UTF-16 code unit, which is the C collation's order but for rare characters; under another
 * collation most keys (lowercase slugs, ISO dates) still sort the same.
 */
function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if ((typeof a === 'number' && typeof b === 'number') || (typeof a === 'bigint' && typeof b === 'bigint')) return a < b ? -1 : a > b ? 1 : 0;
  const x = keyPart(a);
  const y = keyPart(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function sameInAll(rows: readonly Record<string, unknown>[], prop: string): boolean {
  const first = keyPart(rows[0]?.[prop]);
  for (let i = 1; i < rows.length; i++) {
    const v = rows[i]![prop];
    // Most key columns that vary do so at once: the second row ends the scan.
    if (v !== rows[0]![prop] && keyPart(v) !== first) return false;
  }
  return true;
}

function keyPart(v: unknown): string {
  if (typeof v === 'string') return v;
  // A key column holds one type: a Date's milliseconds stand for it as well as its ISO text.
  if (v instanceof Date) return String(v.getTime());
  return v === null || v === undefined ? '\u0001' : String(v);
}
