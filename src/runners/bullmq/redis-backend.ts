// The queue backend on Redis (REDIS_URL): BullMQ's own, the budget's records and the run ledger
// under `<prefix>:` (`{<prefix>}:` on a Redis Cluster: one slot for them all), on one
// connection of tesync's own, which the queues share and each BullMQ worker duplicates.
import { Queue, Worker, type Processor } from 'bullmq';
import { describeRedisTarget, parseRedisUrl, redisPlace } from '../../lib/redis-url.ts';
import { LEASE_MARGIN_MS, RedisBudget } from '../../upstream/budget/redis-budget.ts';
import { isCluster, servingNode } from '../../upstream/redis/client.ts';
import { connectRedis } from '../../upstream/redis/connect.ts';
import type { OpenBackendOptions, QueueBackend } from './backend.ts';
import { EVENTS_KEPT, WALK_QUEUE } from './queues.ts';
import { RedisRunLedger } from './redis-run-ledger.ts';

export { LEASE_MARGIN_MS };

/** host:port/db of a Redis URL (a cluster's seeds), never the password. */
export function describeRedis(url: string): string {
  const target = parseRedisUrl(url, '');
  return 'problem' in target ? 'REDIS_URL' : describeRedisTarget(target);
}

export async function openRedisBackend({ config, name }: Pick<OpenBackendOptions, 'config' | 'name'>): Promise<QueueBackend> {
  const target = config.redis;
  if (!target) throw new Error('openRedisBackend: REDIS_URL is not set');
  const prefix = target.keyPrefix;
  // Named like BullMQ's own connections (`<prefix>:...`), so CLIENT LIST shows whose it is.
  const redis = await connectRedis(target, `${prefix}:${name}`);
  const budgets: RedisBudget[] = [];
  let walkQueue: Queue | undefined;
  // A Queue uses this connection as it is (BullMQ leaves it open when the queue closes); a
  // Worker duplicates it for its own and its blocking connections, which it closes.
  const connection = redis;
  return {
    kind: 'redis',
    prefix: config.worker.queuePrefix,
    where: `${redisPlace(target)} (REDIS_URL)`,
    queue: (queueName: string) => new Queue(queueName, { connection, prefix, streams: { events: { maxLen: EVENTS_KEPT } } }),
    worker: (queueName: string, processor: Processor, settings) => new Worker(queueName, processor, { ...settings, connection, prefix }),
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
      // A cluster's failover is a reconnect too, to a replica that may lack the last writes:
      // seen when a refreshed slot table has another node serving the prefix.
      if (!isCluster(redis)) return;
      let serving = servingNode(redis, `${prefix}:${WALK_QUEUE}`);
      redis.on('refresh', () => {
        const now = servingNode(redis, `${prefix}:${WALK_QUEUE}`);
        if (serving !== undefined && now !== undefined && now !== serving) listener();
        serving = now ?? serving;
      });
    },
    async close() {
      for (const b of budgets) await b.close().catch(() => {});
      await walkQueue?.close().catch(() => {});
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
