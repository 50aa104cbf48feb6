// Opens the queue backend the configuration names (backend.ts says which and why).
import type { Logger } from '../../lib/logger.ts';
import { queueBackendKind, type OpenBackendOptions, type QueueBackend } from './backend.ts';
import { migrateQueueSchema, openPostgresBackend, queueDatabaseUrl, queueSchema } from './postgres-backend.ts';
import { openRedisBackend } from './redis-backend.ts';

/** `warehouse`: where the Postgres backend lives; the Redis one needs none. */
export async function openQueueBackend(options: Omit<OpenBackendOptions, 'warehouse'> & { warehouse: OpenBackendOptions['warehouse'] | undefined; logger: Logger }): Promise<QueueBackend> {
  if (queueBackendKind(options.config) === 'redis') return openRedisBackend(options);
  const { warehouse } = options;
  if (!warehouse) throw new Error('the Postgres queue backend lives in the warehouse: open it first');
  return openPostgresBackend({ ...options, warehouse });
}

/**
 * Makes the backend's own tables where it has them (the Postgres backend's schema, by BullMQ's
 * migrations); says what it did, or undefined on Redis (nothing to make).
 */
export async function migrateQueueBackend(options: Pick<OpenBackendOptions, 'config' | 'warehouse'>): Promise<string | undefined> {
  if (queueBackendKind(options.config) === 'redis') return undefined;
  const schema = queueSchema(options.config.worker.queuePrefix);
  const version = await migrateQueueSchema(queueDatabaseUrl(options.config.databaseUrl, options.warehouse), schema);
  return `the queue schema ${schema} (BullMQ's, version ${version})`;
}
