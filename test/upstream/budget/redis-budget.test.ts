// The Redis budget: its store is an atomic compare-and-set on Redis time, a Retry-After seen
// by one process holds back the others whatever their local clocks say, a change wakes the
// others' waiters, a dead process's slot comes back, and processes pacing one bucket
// together do not overrun it. The cases are every shared store's (test/helpers/budget-cases.ts);
// this file gives them Redis.
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { RedisBudgetStore } from '../../../src/upstream/budget/redis-budget-store.ts';
import { RedisBudget } from '../../../src/upstream/budget/redis-budget.ts';
import { budgetCases, type BudgetBackend } from '../../helpers/budget-cases.ts';
import { redisServerUrl, uniqueName } from '../../helpers/services.ts';
import { deleteRedisKeys } from '../../helpers/workers.ts';

let redisUrl: string;
let redis: Redis;
const prefix = uniqueName('tesync_budget');
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redisUrl = await redisServerUrl();
  redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  for (const close of closers) await close().catch(() => undefined);
  await deleteRedisKeys(redisUrl, prefix);
  await redis?.quit();
});

/** A connection of its own, as another process would have. */
function connection(): Redis {
  const c = redis.duplicate();
  closers.push(() => c.quit().catch(() => undefined));
  return c;
}

const recordKey = (bucket: string) => `${prefix}:budget:${bucket}:record`;

const backend: BudgetBackend = {
  name: 'Redis',
  prefix,
  budget(options = {}, separate = false) {
    const b = new RedisBudget({ redis: separate ? connection() : redis, prefix, leaseMs: 10_000, ...options });
    closers.unshift(() => b.close());
    return b;
  },
  dying(options) {
    const own = connection();
    const b = new RedisBudget({ redis: own, prefix, leaseMs: 10_000, ...options });
    closers.unshift(() => b.close());
    return {
      budget: b,
      async kill() {
        await b.close();
        await own.quit();
      },
    };
  },
  store(options = {}) {
    const s = new RedisBudgetStore({ redis: options.separate ? connection() : redis, prefix, ttlMs: 60_000, now: options.now });
    closers.unshift(() => s.close());
    return s;
  },
  interfere(_store, bucket, version, record) {
    // The store's connection: queued before its write.
    void redis.hset(recordKey(bucket), 'v', version, 's', JSON.stringify(record));
  },
  version: async (bucket) => Number(await redis.hget(recordKey(bucket), 'v')),
  writeUnreadable: async (bucket) => {
    await redis.hset(recordKey(bucket), 'v', 3, 's', 'not json');
  },
  serverSeconds: async () => Number((await redis.time())[0]),
};

budgetCases(backend);
