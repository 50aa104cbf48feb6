// Columns many tables of `app` and `gateway` carry, described once (src/schema/warehouse/columns.ts
// declares them). A table may say more of one in its own `columns`, which then replaces this line.
import type { ColumnDescriptions } from './types.ts';

/**
 * The columns of every row of `app` and `gateway` (rowMeta, and `payload`). The reference lists
 * them once, in the conventions of docs/warehouse.md, whose table says the same words (a test
 * checks it), and names them after each table that has them.
 */
export const EVERY_ROW: ColumnDescriptions = {
  fetched_at:
    'when tesync received the values this row holds (UTC): a later sync that receives the same values leaves the row as it is, so this is the first fetch of its current values; `sync.resource_state.verified_at` says when the resource was last confirmed',
  as_of:
    'the data\'s own timestamp, where upstream gives one, as it came with the row\'s current values when tesync first received them: a later response that confirms the same values under a later `asOf` leaves the row as it is (no new version); the newest `asOf` each resource confirmed is in `analytics.data_age` and `sync.resource_state.as_of`',
  freshness:
    'upstream\'s freshness marker for the row, as sent but for the instants a recomputation moves (`asOf`, `generatedAt`): a verdict that changes (`fresh` to `stale`) makes a new version, a moved instant does not',
  status: '`ok`; `invalid` when a value could not be read (it is null here, and kept as sent in `payload`); other values as noted per table',
  run_id: 'the `sync.runs.id` of the run that last changed the row',
  raw_response_id:
    'the `sync.raw_responses.id` of the archived body the row\'s values were read from (the response that first carried them, as `fetched_at` says when); null where no body was archived',
  payload:
    'the upstream object as sent (jsonb), unknown fields included, numbers exact; its `asOf`, `generatedAt` and `servedAt` members, at any depth, are those that came with the row\'s current values: a later response that differs from it in them alone leaves the row as it is (no new version)',
};

/** Columns several tables carry, listed in each table's reference with this line. */
export const SHARED_COLUMNS: ColumnDescriptions = {
  first_seen_at: 'when tesync first received the row; kept by every later write',
  last_seen_at: 'the last listing that changed the row (an unchanged listing leaves it)',
  delisted_at:
    'set when a complete list stops listing the row, cleared if it lists it again; never set from a failed or partial list. The row and its data are kept',
};

/** A table's own `as_of` line: where its time comes from, kept with the row's current values. */
export const asOfFrom = (source: string): string =>
  `${source}, as it came with the row's current values: a later response that confirms them under a later \`asOf\` leaves it (no new version)`;
