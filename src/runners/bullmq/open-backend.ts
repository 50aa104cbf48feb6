// Opens the queue backend the configuration names (backend.ts says which and why).
import { ConfigError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { describePostgresUrl } from '../../store/connection.ts';
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
  const url = queueDatabaseUrl(options.warehouse);
  const version = await migrateQueueSchema(url, schema).catch((err: unknown) => {
    throw pooledQueueFailure(err, url, options.warehouse.sessions?.variable) ?? err;
  });
  return `the queue schema ${schema} (BullMQ's, version ${version})`;
}

/**
 * BullMQ's Postgres backend sets its schema's `search_path` with the startup parameter
 * `options`, which PgBouncer refuses (Debian 12's 1.18 does, in any pool mode),
 * whatever its pool mode: bad configuration, with its fix, rather than the pooler's words alone.
 */
function pooledQueueFailure(err: unknown, url: string, variable: string | undefined): ConfigError | undefined {
  const said = err instanceof Error ? err.message : String(err);
  if (!/unsupported startup parameter/i.test(said)) return undefined;
  const refused = `BullMQ connects with a startup parameter (its schema's search_path) that the pooler at ${describePostgresUrl(url)} refuses ("${said}")`;
  return new ConfigError(
    'TE_DATABASE_SESSION_URL',
    variable === 'TE_DATABASE_SESSION_URL'
      ? `reaches a pooler the Postgres queue backend cannot use: ${refused}; point it at Postgres itself, or set REDIS_URL for the Redis queue backend`
      : `is needed for the Postgres queue backend: ${refused}; set TE_DATABASE_SESSION_URL to a direct URL of DATABASE_URL's database, or set REDIS_URL for the Redis queue backend`,
  );
}
