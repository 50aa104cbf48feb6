// The queue backend on the warehouse's Postgres (REDIS_URL unset): BullMQ's Postgres backend in
// a schema of the prefix's own, the budget's records and the run ledger in sync.rate_budgets,
// sync.run_counts and sync.run_jobs under the prefix.
//
// Why a schema of its own (`bullmq_<prefix>`): BullMQ's tables and functions are BullMQ's, made
// and upgraded by its migrations, not by tesync's; in a schema apart they never meet the
// warehouse's names, BI users can be kept out of it with one REVOKE, and `tesync reset --queues`
// empties a prefix with one DROP SCHEMA. The prefix is in the name because BullMQ ignores its
// `prefix` option on Postgres: the schema is the namespace, so two deployments sharing one
// database (TE_QUEUE_PREFIX=tesync and tesync-staging) need two.
//
// Connections: BullMQ opens a pg pool per Queue and per Worker (and a LISTEN session per Worker);
// each is bounded here, so a worker process holds a known number (docs/operations.md).
import { Queue, Worker, createPostgresBackend, runMigrations, type PostgresPoolConfig, type Processor } from 'bullmq';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { ConfigError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { PostgresRunLedger } from '../../store/books/postgres-run-ledger.ts';
import type { Warehouse } from '../../store/connection.ts';
import { PostgresBudget } from '../../upstream/budget/postgres-budget.ts';
import { quoteIdentifier } from '../../store/quote.ts';
import type { AnyQueue, OpenBackendOptions, QueueBackend, WorkerSettings } from './backend.ts';
import type { PrefixClient } from './prefix-keys.ts';
import { EVENTS_KEPT, WALK_QUEUE } from './queues.ts';

/** Postgres names are at most this many bytes (NAMEDATALEN - 1): longer ones are cut. */
const MAX_NAME_BYTES = 63;
/**
 * A queue's pool (adding jobs, counts, rate limits): one session. BullMQ's own pools default to
 * ten; bounded, a worker process holds at most 4 x 1 + 4 x (2 + 1) sessions for its queues
 * (docs/operations.md counts them), so that three workers fit an embedded server's 100.
 */
const QUEUE_POOL = 1;
/** A worker's pool beside its LISTEN session: its jobs' moves and lock renewals, whatever its concurrency (the upstream, not the queue, sets the pace). */
const WORKER_POOL = 2;
/** pg closes a pool connection idle this long: an idle worker keeps only its LISTEN sessions. */
const IDLE_MS = 10_000;

/**
 * Pure: the schema of a prefix's queues, `bullmq_` and the prefix, each character Postgres does
 * not allow in a plain name (`.`, `-`, `{`, `}`) written `$` and its code in hex, so that two
 * prefixes never share a schema. Throws, naming TE_QUEUE_PREFIX, when that is too long a name.
 */
export function queueSchema(prefix: string): string {
  const name = `bullmq_${prefix.replace(/[^A-Za-z0-9_]/g, (c) => `$${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}`;
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
    throw new ConfigError('TE_QUEUE_PREFIX', `is too long for the Postgres queue backend: its schema ${name} would pass Postgres's ${MAX_NAME_BYTES}-byte limit (shorten the prefix, or set REDIS_URL)`);
  }
  return name;
}

/** Pure: a LIKE pattern of the sessions named by this prefix's walk workers (`walk:w:<prefix>@<host>.<pid>`, cut as Postgres cuts names). */
export function workerSessionPattern(prefix: string): string {
  const start = Buffer.from(`${WALK_QUEUE}:w:${prefix}@`).subarray(0, MAX_NAME_BYTES).toString();
  return `${likeLiteral(start)}%`;
}

/**
 * The URL BullMQ's pools connect with: where the warehouse's sessions go (DATABASE_URL, or
 * TE_DATABASE_SESSION_URL past a transaction pooler: its LISTEN and its `search_path` are a
 * session's), or the embedded server's.
 */
export function queueDatabaseUrl(warehouse: Pick<Warehouse, 'embeddedUrl' | 'sessions'>): string {
  const url = warehouse.sessions?.url ?? warehouse.embeddedUrl;
  if (!url) throw new Error('the Postgres queue backend needs DATABASE_URL or the embedded warehouse');
  return url;
}

/** Applies BullMQ's migrations to the prefix's schema (idempotent, under BullMQ's own advisory lock); returns its schema version. */
export async function migrateQueueSchema(url: string, schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, application_name: `${schema}:migrate`.slice(0, MAX_NAME_BYTES), connectionTimeoutMillis: 10_000, options: '-c TimeZone=UTC' });
  await client.connect();
  try {
    return await runMigrations(client, schema);
  } finally {
    await client.end().catch(() => {});
  }
}

export async function openPostgresBackend({ config, warehouse, name, logger }: OpenBackendOptions & { logger: Logger }): Promise<QueueBackend> {
  const prefix = config.worker.queuePrefix;
  const schema = queueSchema(prefix);
  const url = queueDatabaseUrl(warehouse);
  const pool = (max: number): PostgresPoolConfig => ({
    connectionString: url,
    schema,
    max,
    idleTimeoutMillis: IDLE_MS,
    connectionTimeoutMillis: 10_000,
    // Its sessions say whose they are in pg_stat_activity (a worker's LISTEN session is named by BullMQ).
    application_name: `${prefix}:${name}`.slice(0, MAX_NAME_BYTES),
    // Every connection tesync opens works in UTC, as the warehouse's own do (src/store/connection.ts).
    options: '-c TimeZone=UTC',
  });
  // A pool reports a dropped idle connection as an error of its queue: logged, never fatal.
  const logErrors = (q: AnyQueue): AnyQueue => {
    q.on('error', (err: Error) => logger.warn({ err, queue: q.name }, 'queue error on the Postgres queue backend'));
    return q;
  };
  const budgets: PostgresBudget[] = [];
  return {
    kind: 'postgres',
    prefix,
    where: `the schema ${schema} of ${warehouse.location}`,
    queue: (queueName: string) => logErrors(new Queue(queueName, { connection: pool(QUEUE_POOL), streams: { events: { maxLen: EVENTS_KEPT } } }, createPostgresBackend)),
    worker: (queueName: string, processor: Processor, settings: WorkerSettings) =>
      new Worker(queueName, processor, { ...settings, connection: pool(WORKER_POOL) }, createPostgresBackend),
    ledger: new PostgresRunLedger(warehouse.db, prefix),
    budget(leaseMs: number) {
      const budget = new PostgresBudget({ warehouse, prefix, leaseMs });
      budgets.push(budget);
      return budget;
    },
    async ping() {
      const [row] = await warehouse.query<{ ok: boolean }>(sql`select exists (select 1 from pg_namespace where nspname = ${schema}) as ok`);
      if (!row?.ok) throw new Error(`the queue schema ${schema} is missing (tesync migrate makes it)`);
    },
    async workersCount() {
      const [row] = await warehouse.query<{ n: number }>(
        sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name like ${workerSessionPattern(prefix)}`,
      );
      return row?.n;
    },
    // A Postgres that restarted keeps its tables: nothing to register again.
    onReconnect() {},
    async close() {
      for (const b of budgets) await b.close().catch(() => {});
    },
  };
}

/** Pure: a LIKE pattern of the sessions tesync names under the prefix (`<prefix>:...`: pools of queues, shared budgets), cut as Postgres cuts names. */
export function prefixSessionPattern(prefix: string): string {
  return `${likeLiteral(Buffer.from(`${prefix}:`).subarray(0, MAX_NAME_BYTES).toString())}%`;
}

/** Sessions of tesync processes under the prefix, workers first: workers (named by BullMQ), pools of queues, shared budgets. */
export async function queueSessions(warehouse: Pick<Warehouse, 'query'>, prefix: string): Promise<PrefixClient[]> {
  const rows = await warehouse.query<{ name: string; addr: string | null; age_s: number; worker: boolean }>(
    sql`select application_name as name, coalesce(host(client_addr), 'local') as addr,
               extract(epoch from now() - backend_start)::int as age_s,
               application_name like ${workerSessionPattern(prefix)} as worker
        from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid()
          and (application_name like ${workerSessionPattern(prefix)} or application_name like ${prefixSessionPattern(prefix)})
        order by worker desc, backend_start`,
  );
  return rows.map((r) => ({ name: r.name, addr: r.addr ?? 'local', ageS: r.age_s, worker: r.worker }));
}

/** How many jobs the prefix's queues hold (0 when its schema is not there). */
export async function countQueueJobs(warehouse: Pick<Warehouse, 'query'>, prefix: string): Promise<{ schema: string; exists: boolean; jobs: number }> {
  const schema = queueSchema(prefix);
  const [ns] = await warehouse.query<{ ok: boolean }>(sql`select to_regclass(${`${quoteIdentifier(schema)}.job`}) is not null as ok`);
  if (!ns?.ok) return { schema, exists: false, jobs: 0 };
  const [row] = await warehouse.query<{ n: number }>(sql`select count(*)::int as n from ${sql.identifier(schema)}.job`);
  return { schema, exists: true, jobs: row?.n ?? 0 };
}

/** Removes the prefix's queues (its schema, with every job and scheduler), its budget records and its run ledger, in one transaction. */
export async function removeQueues(warehouse: Pick<Warehouse, 'db'>, prefix: string): Promise<void> {
  const schema = queueSchema(prefix);
  await warehouse.db.transaction(async (tx) => {
    await tx.execute(sql`drop schema if exists ${sql.identifier(schema)} cascade`);
    await tx.execute(sql`delete from sync.rate_budgets where prefix = ${prefix}`);
    await tx.execute(sql`delete from sync.run_jobs where queue_prefix = ${prefix}`);
    await tx.execute(sql`delete from sync.run_counts where queue_prefix = ${prefix}`);
  });
}

function likeLiteral(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}
