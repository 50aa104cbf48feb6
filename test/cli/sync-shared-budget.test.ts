// `tesync sync` paces on the rate budget the workers share under TE_QUEUE_PREFIX, in their queue
// backend: RedisBudget with REDIS_URL set, PostgresBudget in the warehouse without it. On
// both, a Retry-After another process (a worker) was given holds the sync back, and one the sync
// was given holds the others back. With a REDIS_URL nothing answers on, it says so once and
// still syncs, on a budget of its own.
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../src/lib/errors.ts';
import { PostgresBudget } from '../../src/upstream/budget/postgres-budget.ts';
import type { Budget } from '../../src/upstream/budget/budget.ts';
import { RedisBudget } from '../../src/upstream/budget/redis-budget.ts';
import { runCli, startCli } from '../helpers/cli.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { freePort } from '../helpers/own-servers.ts';
import { patience } from '../helpers/patience.ts';
import { backendEnv, QUEUE_BACKENDS, type QueueBackendKind } from '../helpers/queue-backends.ts';
import { canaryKey, redisServerUrl, uniqueName } from '../helpers/services.ts';
import { deleteRedisKeys, waitFor } from '../helpers/workers.ts';

const appKey = canaryKey('app');
const NOT_SHARED = /tesync: warning: cannot reach Redis at 127\.0\.0\.1:\d+ \(REDIS_URL\): connection refused \(ECONNREFUSED\)[^\n]*; this sync paces on a rate budget of its own, not the one the workers share\n/g;

describe('tesync sync and the shared rate budget', () => {
  const fx = useSimAndWarehouse({ tokens: 2, historyDays: 5, chartsPerToken: 1, seed: 232, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } } });
  let redisUrl: string;
  let redis: Redis;
  const prefix = uniqueName('tesync_syncbudget');
  const closers: (() => Promise<unknown>)[] = [];
  let env: Record<string, string>;
  /** The budget as a worker holds it, on each backend: the same store, the same prefix, a connection of its own. */
  const workers = {} as Record<QueueBackendKind, Budget>;

  beforeAll(async () => {
    redisUrl = await redisServerUrl();
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const onRedis = new RedisBudget({ redis: redis.duplicate(), prefix, leaseMs: 10_000 });
    const onPostgres = new PostgresBudget({ warehouse: fx.warehouse, prefix, leaseMs: 10_000 });
    workers.redis = onRedis;
    workers.postgres = onPostgres;
    closers.push(() => onRedis.close(), () => onPostgres.close());
    env = { TE_APP_URL: fx.sim.url, TE_APP_API_KEY: appKey, DATABASE_URL: fx.databaseUrl, TE_REQUEST_TIMEOUT_MS: '5000' };
  });
  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await deleteRedisKeys(redisUrl, prefix);
    await redis?.quit();
  });

  const firstAppPublic = () => fx.sim.requests.find((r) => r.bucket === 'app-public');

  /** The app-public block the shared budget holds (store time, ms), as the last writer left it. */
  const storedBlock: Record<QueueBackendKind, () => Promise<number | undefined>> = {
    async redis() {
      const raw = await redis.hget(`${prefix}:budget:app-public:record`, 's');
      return raw ? (JSON.parse(raw) as { state?: { blockedUntilMs?: number } }).state?.blockedUntilMs : undefined;
    },
    async postgres() {
      const [row] = await fx.tw.warehouse.query<{ until: number | null }>(
        sql`select (record->'state'->>'blockedUntilMs')::float8 as until from sync.rate_budgets where prefix = ${prefix} and bucket = 'app-public'`,
      );
      return row?.until ?? undefined;
    },
  };

  describe.each(QUEUE_BACKENDS)('the workers\' budget on %s', (backend) => {
    /** A sync beside the workers: their prefix, and REDIS_URL only when their queues are in Redis. */
    const shared = () => ({ ...env, ...backendEnv({ backend, redisUrl }), TE_QUEUE_PREFIX: prefix });

    /** A 429 a worker was given: nothing to app-public before `ms` from now, in every process. */
    async function workerGets429(ms: number): Promise<number> {
      const worker = workers[backend];
      await worker.acquire('app-public');
      const until = Date.now() + ms;
      await worker.observe('app-public', { status: 429, blockedUntilMs: until, sentAtMs: Date.now() });
      return until;
    }

    it('a Retry-After a worker was given holds the sync back until it has passed', async () => {
      const until = await workerGets429(5000);
      fx.sim.resetRequests();
      const r = await runCli(['sync', '--only', 'catalog'], shared(), { timeoutMs: 60_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^Sync succeeded in /);
      expect(r.stderr).not.toMatch(/rate budget of its own/);
      const first = firstAppPublic();
      expect(first).toBeDefined();
      // The hold itself, on the simulator's clock (this machine's): nothing before it ends
      // (20 ms for the store's time against this process's, read apart). Later is no failure.
      expect(first!.at).toBeGreaterThanOrEqual(until - 20);
    }, patience(90_000));

    it('a Retry-After the sync was given holds the workers back', async () => {
      fx.sim.resetRequests();
      fx.sim.script('/api/v1/metrics', [{ status: 429, code: 'rate_limited', retryAfter: '4' }]);
      // The record may hold an earlier test's block, long past, until the sync writes its own.
      const earlier = await storedBlock[backend]();
      const p = startCli(['sync', '--only', 'catalog'], shared());
      let blockedUntilMs: number | undefined;
      let err: unknown;
      let [lookedFrom, lookedTo] = [0, 0];
      try {
        // The 429 answered, and the sync's block for it in the shared budget.
        blockedUntilMs = await waitFor(
          'the sync to write its block into the shared budget',
          async () => {
            const refused = fx.sim.requests.find((x) => x.status === 429);
            const b = refused ? await storedBlock[backend]() : undefined;
            return b !== undefined && b !== earlier && b > refused!.at ? b : undefined;
          },
          30_000,
          20,
        );
        lookedFrom = Date.now();
        err = await workers[backend].acquire('app-public', { maxWaitMs: 100 }).catch((e: unknown) => e);
        lookedTo = Date.now();
      } finally {
        // Never leave the sync running (and holding its source's lock) into the next test.
        await p.exited;
      }
      expect(blockedUntilMs, 'the sync wrote the block into the shared budget').toBeDefined();
      expect(err).toBeInstanceOf(RateLimitedError);
      // The worker is held until the block the sync wrote ends, however late it asked (store
      // time is this machine's clock: 1 ms for its fraction), and no longer than the Retry-After.
      const { waitMs } = err as RateLimitedError;
      expect(lookedFrom + waitMs).toBeLessThanOrEqual(blockedUntilMs! + 1);
      expect(lookedTo + waitMs).toBeGreaterThanOrEqual(blockedUntilMs! - 1);
      expect(waitMs).toBeLessThanOrEqual(4100);
      const r = await p.exited;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/rate budget of its own/);
      // The sync itself waited it out: its retry reached the simulator no sooner than the 429's
      // start plus its Retry-After (the hold runs from the 429's headers, within the request).
      const [refused, retried] = fx.sim.requests.filter((x) => x.path.startsWith('/api/v1/metrics'));
      expect(refused!.status).toBe(429);
      const [sent] = await fx.warehouse.query<{ started_ms: number; retry_after_ms: number }>(
        sql`select extract(epoch from started_at)::float8 * 1000 as started_ms, retry_after_ms from sync.requests where http_status = 429 and path like '/api/v1/metrics%' order by started_at desc limit 1`,
      );
      expect(sent?.retry_after_ms).toBe(4000);
      expect(retried!.at).toBeGreaterThanOrEqual(sent!.started_ms + sent!.retry_after_ms);
    }, patience(90_000));
  });

  it('with a REDIS_URL nothing answers on: one line says the budget is not shared, and the sync completes', async () => {
    const port = await freePort();
    const r = await runCli(['sync', '--only', 'catalog'], { ...env, REDIS_URL: `redis://127.0.0.1:${port}` }, { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Sync succeeded in /);
    expect(r.stderr.match(NOT_SHARED), r.stderr).toHaveLength(1);
  }, patience(90_000));
});
