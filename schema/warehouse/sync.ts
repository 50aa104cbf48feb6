// Bookkeeping tables: runs, every upstream attempt, archived bodies, per-resource state.
import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgSchema, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

export const syncSchema = pgSchema('sync');

const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const runs = syncSchema.table(
  'runs',
  {
    id: uuid('id').primaryKey(),
    startedAt: tstz('started_at').notNull().defaultNow(),
    finishedAt: tstz('finished_at'),
    /** running | succeeded | partial | failed */
    status: text('status').notNull().default('running'),
    /** cli | schedule | demo | manual */
    trigger: text('trigger').notNull(),
    sources: text('sources').array().notNull().default(sql`'{}'::text[]`),
    options: jsonb('options').notNull().default({}),
    stats: jsonb('stats').notNull().default({}),
    error: text('error'),
  },
  (t) => [index('runs_started_at_idx').on(t.startedAt)],
);

export const requests = syncSchema.table(
  'requests',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    runId: uuid('run_id'),
    source: text('source').notNull(),
    /** app-public | app-key | gateway */
    bucket: text('bucket'),
    method: text('method').notNull().default('GET'),
    /** Path and query, never the host (and never a credential). */
    path: text('path').notNull(),
    /** Null when no response arrived (network error, timeout). */
    httpStatus: integer('http_status'),
    attempt: integer('attempt').notNull(),
    startedAt: tstz('started_at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    bytes: integer('bytes'),
    rateLimitRemaining: integer('rate_limit_remaining'),
    rateLimitLimit: integer('rate_limit_limit'),
    retryAfterMs: integer('retry_after_ms'),
    problemCode: text('problem_code'),
    requestId: text('request_id'),
    /** What went wrong, when something did: timeout, reset, too large, invalid JSON, ... */
    error: text('error'),
  },
  (t) => [index('requests_run_id_idx').on(t.runId), index('requests_started_at_idx').on(t.startedAt)],
);

export const rawResponses = syncSchema.table(
  'raw_responses',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    runId: uuid('run_id'),
    source: text('source').notNull(),
    path: text('path').notNull(),
    /** When this body was first received. */
    fetchedAt: tstz('fetched_at').notNull(),
    /** When the same body was last received again. */
    lastSeenAt: tstz('last_seen_at').notNull(),
    httpStatus: integer('http_status').notNull(),
    contentType: text('content_type'),
    /** sha256 of the body with `meta.servedAt` left out, so unchanged data hashes the same. */
    sha256: text('sha256').notNull(),
    body: jsonb('body'),
    /** The body as received when it is not JSON (or not valid JSON). */
    bodyText: text('body_text'),
    /** ok | invalid */
    status: text('status').notNull().default('ok'),
  },
  (t) => [uniqueIndex('raw_responses_source_path_sha256_key').on(t.source, t.path, t.sha256), index('raw_responses_fetched_at_idx').on(t.fetchedAt)],
);

export const resourceState = syncSchema.table(
  'resource_state',
  {
    source: text('source').notNull(),
    /** e.g. `tokens`, `screener`, `token/<slug>/history`, `token/<slug>/chart/<key>` */
    resource: text('resource').notNull(),
    /** Resource group for status reports: catalog, tokens, screener, snapshot, history, charts, bundle, ... */
    kind: text('kind'),
    lastAttemptAt: tstz('last_attempt_at'),
    /** Last time the data was fetched and written. */
    lastSuccessAt: tstz('last_success_at'),
    /** Last time the mirror was confirmed current: fetched, or skipped because its marker had not changed. */
    verifiedAt: tstz('verified_at'),
    /** ok | unchanged | failed | invalid | skipped | unauthorized | not_materialized | ... */
    status: text('status').notNull(),
    lastError: text('last_error'),
    lastRunId: uuid('last_run_id'),
    // Change markers: what the last successful fetch saw.
    freshness: text('freshness'),
    asOf: tstz('as_of'),
    hash: text('hash'),
    etag: text('etag'),
    rowCount: integer('row_count'),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    details: jsonb('details'),
    active: boolean('active').notNull().default(true),
  },
  (t) => [primaryKey({ columns: [t.source, t.resource] })],
);

/** Contract drift: each time the archived OpenAPI document differs from the previous copy. */
export const contractChanges = syncSchema.table(
  'contract_changes',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    runId: uuid('run_id'),
    source: text('source').notNull(),
    /** The document's path, e.g. `/openapi-product.json`. */
    path: text('path').notNull(),
    detectedAt: tstz('detected_at').notNull(),
    previousSha256: text('previous_sha256'),
    sha256: text('sha256').notNull(),
    addedPaths: text('added_paths').array().notNull().default(sql`'{}'::text[]`),
    removedPaths: text('removed_paths').array().notNull().default(sql`'{}'::text[]`),
    /** Other differences (operations, schemas), summarized. */
    details: jsonb('details'),
  },
  (t) => [index('contract_changes_detected_at_idx').on(t.detectedAt)],
);
