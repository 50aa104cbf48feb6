// The queue backend on Redis (REDIS_URL): BullMQ's own, the budget's records and the run ledger
// under `<prefix>:`, one connection of tesync's own beside BullMQ's.
import { Queue, Worker, type Processor } from 'bullmq';
import { LEASE_MARGIN_MS, RedisBudget } from '../../upstream/budget/redis-budget.ts';
import type { OpenBackendOptions, QueueBackend, WorkerSettings } from './backend.ts';
import { connectRedis, redisOptions, EVENTS_KEPT, WALK_QUEUE } from './queues.ts';
import { RedisRunLedger } from './redis-run-ledger.ts';

export { LEASE_MARGIN_MS };

/** host:port/db of a Redis URL, never the password. */
export function describeRedis(url: string): string {
  const u = new URL(url);
  const db = u.pathname.replace(/^\//, '');
  return `${u.hostname}:${u.port || 6379}${db ? `/${db}` : ''}`;
}

export async function openRedisBackend({ config, name }: Pick<OpenBackendOptions, 'config' | 'name'>): Promise<QueueBackend> {
  const url = config.redisUrl;
  if (!url) throw new Error('openRedisBackend: REDIS_URL is not set');
  const prefix = config.worker.queuePrefix;
  const connection = redisOptions(url);
  // Named like BullMQ's own connections (`<prefix>:...`), so CLIENT LIST shows whose it is.
  const redis = await connectRedis(connection, url, `${prefix}:${name}`);
  const budgets: RedisBudget[] = [];
  let walkQueue: Queue | undefined;
  return {
    kind: 'redis',
    prefix,
    where: `Redis at ${describeRedis(url)} (REDIS_URL)`,
    queue: (queueName: string) => new Queue(queueName, { connection, prefix, streams: { events: { maxLen: EVENTS_KEPT } } }),
    worker: (queueName: string, processor: Processor, settings: WorkerSettings) => new Worker(queueName, processor, { ...settings, connection, prefix }),
    ledger: new RedisRunLedger(redis, prefix),
    budget(leaseMs: number) {
      const budget = new RedisBudget({ redis, prefix, leaseMs });
      budgets.push(budget);
      return budget;
    },
    ping: async () => void (await redis.ping()),
    async workersCount() {
      walkQueue ??= new Queue(WALK_QUEUE, { connection, prefix });
      return walkQueue.getWorkersCount().catch(() => undefined);
    },
    onReconnect(listener) {
      redis.on('ready', listener);
    },
    async close() {
      for (const b of budgets) await b.close().catch(() => {});
      await walkQueue?.close().catch(() => {});
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
