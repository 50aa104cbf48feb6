// The two queue backends a worker test runs on (src/runners/bullmq/backend.ts): Redis when
// REDIS_URL is set, otherwise the warehouse's own Postgres. A test parameterized over
// QUEUE_BACKENDS runs each case on both; these are what differs for it.
import { createPostgresBackend, Queue } from 'bullmq';
import postgres from 'postgres';
import type { AnyQueue, QueueBackendKind } from '../../src/runners/bullmq/backend.ts';
import { queueSchema } from '../../src/runners/bullmq/postgres-backend.ts';
import { deleteRedisKeys } from './workers.ts';

export type { QueueBackendKind };

export const QUEUE_BACKENDS: readonly QueueBackendKind[] = ['redis', 'postgres'];

export interface QueuePlace {
  backend: QueueBackendKind;
  /** The test's Redis (used on the Redis backend only). */
  redisUrl: string;
  /** The test's warehouse: where the Postgres backend keeps the queues. */
  databaseUrl: string;
  prefix: string;
}

/** What a tesync process needs in its environment for the backend: REDIS_URL, or nothing (the warehouse's Postgres). */
export function backendEnv(place: Pick<QueuePlace, 'backend' | 'redisUrl'>): Record<string, string> {
  return place.backend === 'redis' ? { REDIS_URL: place.redisUrl } : {};
}

/**
 * The environment of a `tesync worker` of the place: its warehouse, its queue backend and
 * prefix, `simUrl` as the app source, its metrics on any free port; `extra` on top.
 */
export function workerEnvFor(place: QueuePlace, simUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return { DATABASE_URL: place.databaseUrl, ...backendEnv(place), TE_QUEUE_PREFIX: place.prefix, TE_APP_URL: simUrl, TE_METRICS_PORT: '0', LOG_LEVEL: 'warn', ...extra };
}

/** The walk queue's job schedulers, by id. */
export async function jobSchedulers(place: QueuePlace): Promise<{ id: string; pattern: string | null | undefined }[]> {
  const q = openTestQueue(place, 'walk');
  try {
    return (await q.getJobSchedulers(0, -1)).map((s) => ({ id: s.key, pattern: s.pattern })).sort((a, b) => (a.id < b.id ? -1 : 1));
  } finally {
    await q.close();
  }
}

/** A BullMQ queue of the test's prefix, as the workers see it; the caller closes it. */
export function openTestQueue(place: QueuePlace, name: string): AnyQueue {
  if (place.backend === 'redis') {
    const u = new URL(place.redisUrl);
    return new Queue(name, { connection: { host: u.hostname, port: Number(u.port || 6379) }, prefix: place.prefix });
  }
  return new Queue(name, { connection: { connectionString: place.databaseUrl, schema: queueSchema(place.prefix), max: 1 } }, createPostgresBackend);
}

/** Removes what the prefix left in Redis; on Postgres it is in the test's database, dropped with it. */
export async function removeQueueState(place: QueuePlace): Promise<void> {
  if (place.backend === 'redis') await deleteRedisKeys(place.redisUrl, place.prefix);
}

/**
 * The backend loses everything it kept of the prefix, behind tesync's back (nothing in the
 * warehouse's sync.runs changes): on Redis every key under the prefix (a Redis that restarted
 * without persistence); on Postgres the schema of its queues, and its rows of the shared budget
 * and of the run ledger. Returns how much went (keys; or jobs and rows), so that a test can
 * tell it lost something.
 */
export async function loseQueueState(place: QueuePlace): Promise<number> {
  if (place.backend === 'redis') return deleteRedisKeys(place.redisUrl, place.prefix);
  const db = postgres(place.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    return await db.begin(async (tx) => {
      const schema = queueSchema(place.prefix);
      const [t] = await tx<{ ok: boolean }[]>`select to_regclass(${`"${schema}".job`}) is not null as ok`;
      const jobs = t!.ok ? (await tx<{ n: number }[]>`select count(*)::int as n from ${tx(schema)}.job`)[0]!.n : 0;
      await tx`drop schema if exists ${tx(schema)} cascade`;
      const jobRows = await tx`delete from sync.run_jobs where queue_prefix = ${place.prefix}`;
      const countRows = await tx`delete from sync.run_counts where queue_prefix = ${place.prefix}`;
      const budgetRows = await tx`delete from sync.rate_budgets where prefix = ${place.prefix}`;
      return jobs + jobRows.count + countRows.count + budgetRows.count;
    });
  } finally {
    await db.end();
  }
}
