// The rate budget a `tesync sync` paces on: the one the workers share under TE_QUEUE_PREFIX, in
// their queue backend (RedisBudget with REDIS_URL set, otherwise PostgresBudget in the
// warehouse), so a sync beside running workers, or beside another process pacing the same
// upstream, neither overruns the upstream's limits nor ignores a Retry-After one of them was
// given. When REDIS_URL names a Redis that cannot be reached: a budget of this process's own,
// said once.
import { ConfigError, type Config } from '../lib/config.ts';
import type { Warehouse } from '../store/connection.ts';
import { PostgresBudget } from '../upstream/budget/postgres-budget.ts';
import { InProcessBudget, type RateBudget } from '../upstream/budget/budget.ts';
import { LEASE_MARGIN_MS, RedisBudget } from '../upstream/budget/redis-budget.ts';
import type { RedisClient } from '../upstream/redis/client.ts';
import { connectRedis } from '../upstream/redis/connect.ts';

export interface SyncBudget {
  budget: RateBudget;
  /** `shared`: the workers' budget (in Redis, or in the warehouse); `own`: this process's. */
  kind: 'shared' | 'own';
  /** Why it is not the shared one although REDIS_URL is set: one line for the user. */
  notShared?: string;
  close(): Promise<void>;
}

/**
 * `holder`: the command, in the name of its connection (`<prefix>:tesync-sync`, or a session
 * `<prefix>:budget sync <id>`), so that `tesync reset --queues` can say what to stop.
 */
export async function syncBudget(
  config: Config,
  warehouse: Pick<Warehouse, 'session'>,
  timing: { timeoutMs?: number; refusedGraceMs?: number } = {},
  holder: 'sync' | 'status-serve' = 'sync',
): Promise<SyncBudget> {
  const own = (notShared?: string): SyncBudget => ({ budget: new InProcessBudget(), kind: 'own', ...(notShared ? { notShared } : {}), close: async () => {} });
  const target = config.redis;
  const prefix = config.worker.queuePrefix;
  const leaseMs = config.requestTimeoutMs + LEASE_MARGIN_MS;
  if (!target) {
    const budget = new PostgresBudget({ warehouse, prefix, leaseMs, holder });
    return { budget, kind: 'shared', close: () => budget.close().catch(() => {}) };
  }
  let redis: RedisClient;
  try {
    redis = await connectRedis(target, `${target.keyPrefix}:tesync-${holder}`, timing);
  } catch (err) {
    // REDIS_URL naming a cluster as one server, or the other way round, is no outage: exit 2.
    if (err instanceof ConfigError) throw err;
    return own(`${(err as Error).message}; this sync paces on a rate budget of its own, not the one the workers share`);
  }
  const budget = new RedisBudget({ redis, prefix: target.keyPrefix, leaseMs });
  return {
    budget,
    kind: 'shared',
    async close() {
      await budget.close().catch(() => {});
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
