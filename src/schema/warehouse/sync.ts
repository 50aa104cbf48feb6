// Bookkeeping tables: runs, every upstream attempt, archived bodies, per-resource state,
// contract drift and the field names seen per route.
import { sql } from 'drizzle-orm';
import { bigint, boolean, customType, date, index, integer, jsonb, pgSchema, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

export const syncSchema = pgSchema('sync');

const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** Bytes as they are: postgres.js sends a Buffer as bytea and reads one back as a Buffer. */
const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

export const runs = syncSchema.table(
  'runs',
  {
    id: uuid('id').primaryKey(),
    startedAt: tstz('started_at').notNull().defaultNow(),
    finishedAt: tstz('finished_at'),
    /** running | succeeded | partial | failed | interrupted */
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

// The run ledger on Postgres (src/store/books/run-ledger.ts): a run's counts in one row, its jobs a
// row each. Counts kept in a row, not computed from the jobs, so that a settle reads how many
// are pending in the same statement that counts it, without counting the run's rows each time.

/** Per run a ledger tracks (one deployment: its queue prefix), its counts while its jobs run. */
export const runCounts = syncSchema.table(
  'run_counts',
  {
    queuePrefix: text('queue_prefix').notNull(),
    runId: text('run_id').notNull(),
    planned: integer('planned').notNull().default(0),
    pending: integer('pending').notNull().default(0),
    done: integer('done').notNull().default(0),
    failed: integer('failed').notNull().default(0),
    deduplicated: integer('deduplicated').notNull().default(0),
    rows: bigint('rows', { mode: 'number' }).notNull().default(0),
    /** `source.group` → status → count */
    byGroup: jsonb('by_group').notNull().default({}),
    /** The first failures, at most MAX_FAILURES (src/engine/run/run-stats.ts). */
    failures: jsonb('failures').notNull().default([]),
    expiresAt: tstz('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.queuePrefix, t.runId] }), index('run_counts_expires_at_idx').on(t.expiresAt)],
);

/** Every job a run planned, and whether it settled. */
export const runJobs = syncSchema.table(
  'run_jobs',
  {
    queuePrefix: text('queue_prefix').notNull(),
    runId: text('run_id').notNull(),
    jobId: text('job_id').notNull(),
    settled: boolean('settled').notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.queuePrefix, t.runId, t.jobId] })],
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
    /** The body as received when it is not JSON (or not valid JSON), and text holds it exactly. */
    bodyText: text('body_text'),
    /** The body as served, byte for byte, when neither `body` nor `body_text` can hold it exactly (a U+0000, bytes that are not UTF-8). */
    bodyBytes: bytea('body_bytes'),
    /** ok | invalid */
    status: text('status').notNull().default('ok'),
  },
  (t) => [
    uniqueIndex('raw_responses_source_path_sha256_key').on(t.source, t.path, t.sha256),
    index('raw_responses_fetched_at_idx').on(t.fetchedAt),
    // The bodies refused in a run, which the status page reads at each refresh: a few rows of
    // an archive that grows without end (src/store/read/failure-bodies.ts).
    index('raw_responses_invalid_run_idx').on(t.runId).where(sql`${t.status} = 'invalid'`),
  ],
);

/**
 * The write record: each write of a job (a transaction that took a known time, `begin_write`)
 * with the archived bodies it used, in the order the job read them, written in the write's own
 * transaction; and each try that read bodies and wrote none. `tesync replay` writes the
 * warehouse again from these and the bodies alone (src/replay/).
 */
export const writes = syncSchema.table(
  'writes',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /** The write's known time; for a try that wrote nothing, when it ended. */
    knownAt: tstz('known_at').notNull(),
    runId: uuid('run_id'),
    source: text('source').notNull(),
    resource: text('resource').notNull(),
    /** The job's name and payload: what replay runs again. */
    job: text('job').notNull(),
    payload: jsonb('payload').notNull(),
    /** read | unchanged | confirmed | refused | unwritten */
    how: text('how').notNull(),
    /** sync.raw_responses ids, in the order the job read them. */
    bodies: bigint('bodies', { mode: 'number' }).array().notNull().default(sql`'{}'::bigint[]`),
  },
  (t) => [index('writes_known_at_idx').on(t.knownAt)],
);

export const resourceState = syncSchema.table(
  'resource_state',
  {
    source: text('source').notNull(),
    /** e.g. `tokens`, `screener`, `token/<slug>/history`, `token/<slug>/chart/<key>` */
    resource: text('resource').notNull(),
    /** Resource group for status reports: catalog, tokens, screener, snapshot, history, charts, bundle, ... (column `kind`). */
    group: text('kind'),
    lastAttemptAt: tstz('last_attempt_at'),
    /** Last time the data was fetched and written. */
    lastSuccessAt: tstz('last_success_at'),
    /** Last time the mirror was confirmed current: fetched, or skipped because its marker had not changed. */
    verifiedAt: tstz('verified_at'),
    /** When the response behind the last success was received, on the server's clock: an older one, committing later, is superseded. */
    receivedAt: tstz('received_at'),
    /** ok | unchanged | failed | invalid | skipped | unauthorized | not_materialized | ... */
    status: text('status').notNull(),
    /** For people: `<error class>: <message>`. Group and count failures by the columns below, never by this text. */
    lastError: text('last_error'),
    /** The last failure's error class: ProblemError, UpstreamServerError, UpstreamTimeoutError, NotUnderstoodError, ... Null after a success. */
    errorType: text('error_type'),
    /** The last failure's upstream problem code (token_not_found, missing_scope, service-unavailable, ...). Null after a success. */
    errorCode: text('error_code'),
    /** The last failure's upstream HTTP status, when an error response arrived. Null after a success. */
    httpStatus: integer('http_status'),
    /** The rate budget bucket of the last failure (app-public | app-key | gateway). Null after a success. */
    bucket: text('bucket'),
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

/**
 * Contract drift. `change = 'openapi'`: each time the archived OpenAPI document differs from
 * the previous copy. `change = 'fields'`: field names that appeared on, or stopped appearing
 * on, a route's responses (see sync.resource_fields).
 */
export const contractChanges = syncSchema.table(
  'contract_changes',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    runId: uuid('run_id'),
    source: text('source').notNull(),
    /** openapi | fields */
    change: text('change').notNull().default('openapi'),
    /** The document's path, e.g. `/openapi-product.json`; for added fields, the response that showed them first (null for removals). */
    path: text('path'),
    detectedAt: tstz('detected_at').notNull(),
    previousSha256: text('previous_sha256'),
    /** The document's hash; for added fields, that response's body hash (sync.raw_responses); null for removals. */
    sha256: text('sha256'),
    addedPaths: text('added_paths').array().notNull().default(sql`'{}'::text[]`),
    removedPaths: text('removed_paths').array().notNull().default(sql`'{}'::text[]`),
    /** Field drift: the route whose responses changed, such as `app.history` (column `kind`). */
    route: text('kind'),
    addedFields: text('added_fields').array().notNull().default(sql`'{}'::text[]`),
    removedFields: text('removed_fields').array().notNull().default(sql`'{}'::text[]`),
    /** Other differences (operations, schemas), summarized; for removed fields, the runs they were missing from. */
    details: jsonb('details'),
  },
  (t) => [index('contract_changes_detected_at_idx').on(t.detectedAt), index('contract_changes_kind_idx').on(t.source, t.route)],
);

/**
 * Each route tesync has received, for field drift: the run that saw it first (its fields are
 * the baseline, not drift) and the latest runs that received it.
 */
export const resourceKinds = syncSchema.table(
  'resource_kinds',
  {
    source: text('source').notNull(),
    /** A route name, e.g. `app.history`, `gateway.screener` (column `kind`). */
    route: text('kind').notNull(),
    firstSeenAt: tstz('first_seen_at').notNull(),
    /** The baseline: fields first seen in this run are not drift. */
    baselineRunId: uuid('baseline_run_id').notNull(),
    /** When the latest of recent_run_ids first received this route. */
    lastSeenAt: tstz('last_seen_at').notNull(),
    /** The last three runs that received this route, newest first: removals are judged on the two before the newest. */
    recentRunIds: uuid('recent_run_ids').array().notNull(),
  },
  (t) => [primaryKey({ columns: [t.source, t.route] })],
);

/** Every field name seen on a route's responses (see src/engine/fetch/fields.ts for what a field name is). */
export const resourceFields = syncSchema.table(
  'resource_fields',
  {
    source: text('source').notNull(),
    /** The route name (column `kind`). */
    route: text('kind').notNull(),
    /** A dotted path in the response's `data`: `row.multiples`, `streams[].key`. */
    field: text('field').notNull(),
    firstSeenAt: tstz('first_seen_at').notNull(),
    firstRunId: uuid('first_run_id').notNull(),
    lastSeenAt: tstz('last_seen_at').notNull(),
    lastSeenRunId: uuid('last_seen_run_id').notNull(),
    /** Set when two consecutive runs that received this route had it in none of their responses; cleared when it comes back. */
    removedAt: tstz('removed_at'),
  },
  (t) => [primaryKey({ columns: [t.source, t.route, t.field] })],
);

/**
 * The upstream each source of this warehouse mirrors, recorded on its first sync: a sync of
 * another upstream into it is refused unless `--force` rebinds it (src/store/books/upstream-binding.ts).
 */
export const upstreamBindings = syncSchema.table('upstream_bindings', {
  source: text('source').primaryKey(),
  /** Canonical text: `https://app.example.com`, `http://127.0.0.1:8080/te`, or `simulator`. */
  upstream: text('upstream').notNull(),
  scheme: text('scheme'),
  host: text('host'),
  port: integer('port'),
  path: text('path'),
  boundAt: tstz('bound_at').notNull().defaultNow(),
  /** bound | adopted | rebound */
  event: text('event').notNull(),
  /** sync | worker | enqueue | demo */
  command: text('command').notNull(),
});

/** Append-only: every binding, adoption and rebinding of a source, in order. */
export const upstreamBindingLog = syncSchema.table(
  'upstream_binding_log',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    source: text('source').notNull(),
    /** bound | adopted | rebound */
    event: text('event').notNull(),
    at: tstz('at').notNull().defaultNow(),
    /** The upstream it was bound to before; null when there was none recorded. */
    fromUpstream: text('from_upstream'),
    toUpstream: text('to_upstream').notNull(),
    /** sync | worker | enqueue | demo */
    command: text('command').notNull(),
    /** The machine that did it. */
    host: text('host'),
  },
  (t) => [index('upstream_binding_log_source_at_idx').on(t.source, t.at)],
);

/**
 * The rate budget shared through the warehouse by worker processes that run without Redis:
 * one row per bucket of each budget (`prefix`), written by compare-and-set on `version`
 * (src/upstream/budget/postgres-budget-store.ts). A row past `expires_at` counts as none.
 */
export const rateBudgets = syncSchema.table(
  'rate_budgets',
  {
    /** The budget: the processes that share one use the same prefix. */
    prefix: text('prefix').notNull(),
    /** app-public | app-key | gateway */
    bucket: text('bucket').notNull(),
    /** The bucket's state and live leases (src/upstream/budget/budget-store.ts's BucketRecord); times in ms on the server's clock. */
    record: jsonb('record').notNull(),
    /** Writes so far: a write counts only if the version is still the one its record was read at. */
    version: bigint('version', { mode: 'number' }).notNull(),
    updatedAt: tstz('updated_at').notNull(),
    expiresAt: tstz('expires_at').notNull(),
    /** The holder and write that wrote it last: tells a write whose answer was lost whether it took place. */
    writtenBy: text('written_by').notNull(),
  },
  (t) => [primaryKey({ columns: [t.prefix, t.bucket] })],
);

/** A transaction id as Postgres keeps it (`pg_current_xact_id()`), as text in and out. */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });

/**
 * What each daily archive holds per day, kept by a trigger on the archive (src/store/sql/
 * daily-archive.sql) in the transaction that writes it: the day's rows, and the last
 * transaction that changed them. `tesync export` reads it to find the days written since its
 * last snapshot without reading the archive (src/export/pg-read.ts).
 */
export const archiveDays = syncSchema.table(
  'archive_days',
  {
    /** `schema.table` of the archive. */
    archive: text('archive').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    rows: bigint('rows', { mode: 'number' }).notNull(),
    /** The last transaction that wrote or removed a row of the day. */
    writer: xid8('writer').notNull(),
  },
  (t) => [primaryKey({ columns: [t.archive, t.day] })],
);
