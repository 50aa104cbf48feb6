// Column helpers shared by the app and gateway mirrors.
import { sql } from 'drizzle-orm';
import { bigint, customType, numeric, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { jsonText } from '../../src/json.ts';

export const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * Known time: the warehouse server's clock, taken once per writing transaction
 * (src/warehouse/history-sql.ts). The default of every column that says when tesync knew a
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
 * write path marks such rows instead of deleting them (src/warehouse/table-rules.ts).
 */
export const DELISTED_COLUMN = 'delisted_at';
export const delisted = () => tstz(DELISTED_COLUMN);

/**
 * Columns that say when, by which run and from which body a row was written, not what it holds.
 * They are not compared when a row is written again: a write that changes nothing else leaves
 * the row as it is (no new fetch time, no new run, no dead tuple), so an unchanged resync
 * rewrites no row. `as_of` is among them: upstream moves its `meta.asOf` whenever any of a
 * response's data moves (a new day of history), and a point, a catalog entry or a screener
 * row received again with the same values under a later `asOf` is the same version, not a new
 * one; the newest `asOf` a resource confirmed is in sync.resource_state.
 */
export const BOOKKEEPING_COLUMNS: readonly string[] = ['fetched_at', 'run_id', 'last_seen_at', 'raw_response_id', 'as_of'];

/** Columns every normalized row carries (contract: the warehouse). */
export const rowMeta = () => ({
  fetchedAt: knownTime('fetched_at').notNull(),
  /** The data's own timestamp, where upstream gives one: the one that came with the row's current values, first. */
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
