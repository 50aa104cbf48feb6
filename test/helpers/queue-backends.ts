// The two queue backends a worker test runs on (src/runners/bullmq/backend.ts): Redis when
// REDIS_URL is set, otherwise the warehouse's own Postgres. A test parameterized over
// QUEUE_BACKENDS runs each case on both; these are what differs for it.
import { createPostgresBackend, Queue } from 'bullmq';
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
