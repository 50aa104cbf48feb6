// The rate budget a `tesync sync` paces on. With REDIS_URL set: the one the workers share
// (RedisBudget under TE_QUEUE_PREFIX), so a sync beside running workers, or beside another
// process pacing the same upstream, neither overruns the upstream's limits nor ignores a
// Retry-After one of them was given. Without it, or when that Redis cannot be reached: a
// budget of this process's own, and a Redis that cannot be reached is said once.
import type { Redis } from 'ioredis';
import type { Config } from '../lib/config.ts';
import { connectRedis, redisOptions } from '../runners/bullmq/queues.ts';
import { InProcessBudget, type RateBudget } from '../upstream/budget.ts';
import { LEASE_MARGIN_MS, RedisBudget } from '../upstream/redis-budget.ts';

export interface SyncBudget {
  budget: RateBudget;
  /** `shared`: the workers' budget in Redis; `own`: this process's. */
  kind: 'shared' | 'own';
  /** Why it is not the shared one although REDIS_URL is set: one line for the user. */
  notShared?: string;
  close(): Promise<void>;
}

export async function syncBudget(config: Config, timing: { timeoutMs?: number; refusedGraceMs?: number } = {}): Promise<SyncBudget> {
  const own = (notShared?: string): SyncBudget => ({ budget: new InProcessBudget(), kind: 'own', ...(notShared ? { notShared } : {}), close: async () => {} });
  const url = config.redisUrl;
  if (!url) return own();
  const prefix = config.worker.queuePrefix;
  let redis: Redis;
  try {
    redis = await connectRedis(redisOptions(url), url, `${prefix}:tesync-sync`, timing);
  } catch (err) {
    return own(`${(err as Error).message}; this sync paces on a rate budget of its own, not the one the workers share`);
  }
  const budget = new RedisBudget({ redis, prefix, leaseMs: config.requestTimeoutMs + LEASE_MARGIN_MS });
  return {
    budget,
    kind: 'shared',
    async close() {
      await budget.close().catch(() => {});
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
