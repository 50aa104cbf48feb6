// Column helpers shared by the app and gateway mirrors.
import { sql } from 'drizzle-orm';
import { bigint, customType, date, numeric, primaryKey, text, timestamp, uuid, type PgColumnBuilderBase, type PgSchema } from 'drizzle-orm/pg-core';
import { jsonText } from '../../lib/json.ts';

export const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Known time: the warehouse server's clock, taken once per writing transaction
 * (src/store/sql/history.sql). The default of every column that says when tesync knew a
 * row, and the write path never sends those columns: no process's own clock enters them.
 */
export const KNOWN_AT_DEFAULT = sql`"sync"."known_at"()`;
export const knownTime = (name: string) => tstz(name).default(KNOWN_AT_DEFAULT);

/** Whether a column is one of those (the write path leaves them to their default). */
export const isKnownTime = (column: { default?: unknown }) => column.default === KNOWN_AT_DEFAULT;

/** Exact decimals: drizzle hands them over as strings, never as JS numbers. */
export const decimal = (name: string) => numeric(name);

/**
 * jsonb written with the lossless serializer, so upstream numbers inside payloads keep
 * every digit (JSON.stringify would have turned them into doubles on the way).
 */
export const payloadJson = customType<{ data: unknown; driverData: string }>({
  dataType: () => 'jsonb',
  toDriver: (value) => jsonText(value) ?? 'null',
  fromDriver: (value) => (typeof value === 'string' ? JSON.parse(value) : value),
});

/** The column that says when tesync first saw a row: written once, kept by every later write. */
export const FIRST_SEEN_COLUMN = 'first_seen_at';
export const firstSeen = () => knownTime(FIRST_SEEN_COLUMN).notNull();

/**
 * The column set when a whole list stops listing a row, cleared when it lists it again: the
 * write path marks such rows instead of deleting them (src/schema/warehouse/table-rules.ts).
 */
export const DELISTED_COLUMN = 'delisted_at';
export const delisted = () => tstz(DELISTED_COLUMN);

/**
 * Upstream's volatile fields (contract: time and history): `servedAt`, and an `asOf` or
 * `generatedAt` that may move with every recomputation upstream, the values staying the same.
 * They never make a version by themselves, wherever they sit: as a key at any depth of a
 * jsonb column (a MetricValue's `asOf`, a snapshot's `freshness.generatedAt`, a section's
 * `asOf`), the comparison of a row written again leaves them out (src/store/write/volatile-sql.ts);
 * as a column of their own (`as_of`, `generated_at`: the snake-case names below), they are
 * not compared; in a text marker stored as a row's `freshness`, they are left out
 * (`withoutVolatile`). A stored row keeps the ones that came with its current values, first;
 * the newest a resource confirmed is in sync.resource_state (`as_of`, `details`), and the
 * whole body in sync.raw_responses. What is not an instant of recomputation stays compared:
 * a verdict (`fresh` -> `stale`), warnings, a data date (`lastDate`, `dataThrough`).
 */
export const VOLATILE_FIELDS: readonly string[] = ['servedAt', 'asOf', 'generatedAt'];

/** The columns that hold a volatile field: `served_at`, `as_of`, `generated_at`. */
export const VOLATILE_COLUMNS: readonly string[] = VOLATILE_FIELDS.map((f) => f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));

/**
 * Pure: `v` without the volatile fields, at any depth (plain objects and arrays are copied,
 * anything else is returned as it is). For markers stored in a compared text column, e.g. a
 * token's `freshness: { status, asOf }`, whose status is the row's and whose `asOf` is not.
 */
export function withoutVolatile(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutVolatile);
  if (v === null || typeof v !== 'object') return v;
  // A lossless number, a Date: a value, not a record of fields.
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (!VOLATILE_FIELDS.includes(k)) out[k] = withoutVolatile(x);
  return out;
}

/**
 * Columns that say when, by which run and from which body a row was written, not what it holds.
 * They are not compared when a row is written again: a write that changes nothing else leaves
 * the row as it is (no new fetch time, no new run, no dead tuple), so an unchanged resync
 * rewrites no row. The volatile columns (`as_of`, `generated_at`, above) are not compared
 * either: upstream moves its `meta.asOf` whenever any of a response's data moves (a new day
 * of history), and may move it (and `generatedAt`) with every recomputation; a point, a
 * catalog entry or a screener row received again with the same values under a later `asOf`
 * is the same version, not a new one.
 */
export const BOOKKEEPING_COLUMNS: readonly string[] = ['fetched_at', 'run_id', 'last_seen_at', 'raw_response_id'];

/**
 * The data time of a point (what it is about: its day), in every table that is a series of
 * points (a history, a trend, a chart's rows). A row of any other table is about the instant
 * its response describes (`as_of`): a change of it is a new observation, never a revision of an
 * earlier one (src/store/sql/changes.sql).
 */
export const DATA_TIME_COLUMN = 'ts';

/** Columns every normalized row carries (contract: the warehouse). */
export const rowMeta = () => ({
  fetchedAt: knownTime('fetched_at').notNull(),
  /** The data's own timestamp, where upstream gives one: the one that came with the row's current values, first (a volatile column: never compared). */
  asOf: tstz('as_of'),
  freshness: text('freshness'),
  status: text('status').notNull().default('ok'),
  /** The run that last wrote this row. */
  runId: uuid('run_id'),
  /**
   * The archived body (sync.raw_responses.id) this version of the row was read from: the
   * response that first carried its values, as `fetched_at` is. Null where no body was archived.
   */
  rawResponseId: bigint('raw_response_id', { mode: 'number' }),
});

/** The day column of every daily archive: its Hive partition when exported. */
export const ARCHIVE_DAY_COLUMN = 'snapshot_date';

/**
 * A daily archive of a table keyed by token: one row per UTC day (`snapshot_date`) and token,
 * with the table's own values (src/schema/warehouse/history.ts, DAILY_ARCHIVES).
 */
export function dailyArchiveTable<T extends Record<string, PgColumnBuilderBase>>(schema: PgSchema, name: string, values: () => T) {
  return schema.table(
    name,
    {
      snapshotDate: date(ARCHIVE_DAY_COLUMN, { mode: 'string' }).notNull(),
      tokenSlug: text('token_slug').notNull(),
      ...values(),
    },
    (t) => [primaryKey({ columns: [t.snapshotDate, t.tokenSlug] })],
  );
}
