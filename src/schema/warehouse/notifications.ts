// Notifications: the outbox of events (sync.notifications), written in the transaction of the
// state change that caused each, their delivery to each endpoint (sync.notification_deliveries,
// every attempt in its `log`), and the last state told of each subject (sync.alert_states), so
// that only transitions are told. What writes them: src/store/sql/notifications.sql (the
// triggers of runs, contract changes and rebindings; `sync.notify_transition`) and
// src/store/books/notifications.ts; what delivers them: src/runners/notify/.
import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { syncSchema } from './sync.ts';

const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
/** The warehouse's clock (sync.server_clock(), made by migration 0011): every stored time is on it. */
const serverClock = sql`"sync"."server_clock"()`;

export const notifications = syncSchema.table(
  'notifications',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** Insertion order: deliveries to an endpoint go out in it. */
    seq: bigint('seq', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    /** custom_run_failed, custom_group_overdue, ... (src/runners/notify/events.ts) */
    type: text('type').notNull(),
    /** What changed state: `run:<scope>`, `overdue:app.history`, `bucket:gateway`, `worker:<name>`, ... */
    subject: text('subject').notNull(),
    occurredAt: tstz('occurred_at').notNull().default(serverClock),
    source: text('source'),
    group: text('group'),
    runId: uuid('run_id'),
    figures: jsonb('figures').notNull().default({}),
  },
  (t) => [index('notifications_occurred_at_idx').on(t.occurredAt)],
);

export const notificationDeliveries = syncSchema.table(
  'notification_deliveries',
  {
    /** An endpoint as it may be shown: scheme, host and a hash of its URL, never the URL. */
    endpoint: text('endpoint').notNull(),
    notificationId: uuid('notification_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    /** pending | delivered | dead */
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: tstz('next_attempt_at').notNull(),
    /** Taken by a deliverer until then; a deliverer that dies lets it go. */
    leaseUntil: tstz('lease_until'),
    lastAttemptAt: tstz('last_attempt_at'),
    deliveredAt: tstz('delivered_at'),
    lastHttpStatus: integer('last_http_status'),
    lastError: text('last_error'),
    /** Every attempt: at, httpStatus, durationMs, error, retryAfterMs. */
    log: jsonb('log').notNull().default([]),
  },
  (t) => [primaryKey({ columns: [t.endpoint, t.notificationId] }), index('notification_deliveries_endpoint_seq_idx').on(t.endpoint, t.status, t.seq)],
);

export const alertStates = syncSchema.table('alert_states', {
  subject: text('subject').primaryKey(),
  state: text('state').notNull(),
  /** When it entered this state. */
  since: tstz('since').notNull(),
  /** When it was last judged (a worker's heartbeat, for `worker:` subjects). */
  seenAt: tstz('seen_at').notNull(),
  figures: jsonb('figures'),
});
