// The cases every shared rate budget store passes, whatever keeps its records (Redis:
// test/upstream/redis-budget.test.ts; Postgres: test/store/postgres-budget.test.ts): an atomic
// compare-and-set on the server's time, a Retry-After seen by one process holds back the
// others whatever their local clocks say, a change wakes the others' waiters, a dead
// process's slot comes back, and processes pacing one bucket together do not overrun it.
// "Another process" is a budget on a connection of its own.
import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../src/lib/errors.ts';
import { startSimulator } from '../../sim/index.ts';
import type { Budget } from '../../src/upstream/budget.ts';
import type { BudgetPolicy } from '../../src/upstream/budget-state.ts';
import { emptyRecord, type BucketRecord } from '../../src/upstream/budget-store.ts';
import { createUpstream, FAST_RETRY_POLICY, MemoryRecorder } from '../../src/upstream/index.ts';
import type { VersionedBudgetStore } from '../../src/upstream/versioned-budget-store.ts';
import { canaryKey, createTestLogger } from './services.ts';

export interface BudgetOverrides {
  prefix?: string;
  leaseMs?: number;
  now?: () => number;
  policy?: Partial<BudgetPolicy>;
}

/** One kind of shared store, as the cases use it; what it makes is closed by its test file. */
export interface BudgetBackend {
  /** The server, in the cases' names: `Redis`, `Postgres`. */
  name: string;
  /** The test file's budgets' prefix (its cleanup removes every record under it). */
  prefix: string;
  /** A budget (leaseMs 10 s unless given); `separate`: on a connection of its own, as another process would have. */
  budget(options?: BudgetOverrides, separate?: boolean): Budget;
  /** A budget in a process that dies: `kill` closes it and its connections, observing nothing. */
  dying(options: BudgetOverrides): { budget: Budget; kill(): Promise<void> };
  /** A store (records kept 60 s); `separate`: on a connection of its own. */
  store(options?: { now?: () => number; separate?: boolean }): VersionedBudgetStore;
  /**
   * Another writer stores `record` at `version`; called from inside one of `store`'s updates,
   * its write arrives after the update's read and before its write.
   */
  interfere(store: VersionedBudgetStore, bucket: string, version: number, record: BucketRecord): void;
  /** The bucket's stored version. */
  version(bucket: string): Promise<number>;
  /** Stores what no budget can read as a record. */
  writeUnreadable(bucket: string): Promise<void>;
  /** The server's clock, whole seconds since 1970. */
  serverSeconds(): Promise<number>;
}

const HOUR = 3600_000;

/** An update that adds one lease (a token of the caller's) and counts its runs. */
export function addLease(id: string, runs: { n: number }) {
  return (rec: BucketRecord) => {
    runs.n++;
    return { record: { ...rec, leases: { ...rec.leases, [id]: 1 } }, result: Object.keys(rec.leases).length };
  };
}

export function budgetCases(b: BudgetBackend): void {
  describe(`${b.name} budget store`, () => {
    it('a write computed from a record someone else changed since is not written: the update runs again on the fresh one', async () => {
      const s = b.store();
      const runs: number[] = [];
      const result = await s.update('cas', (rec) => {
        runs.push(rec.state.remaining ?? 0);
        // Another writer gets in between the read and the write (same connection: it goes first).
        if (runs.length === 1) b.interfere(s, 'cas', 41, { ...emptyRecord(), state: { ...emptyRecord().state, remaining: 7 } });
        const remaining = (rec.state.remaining ?? 0) + 1;
        return { record: { ...rec, state: { ...rec.state, remaining } }, result: remaining };
      });
      expect(runs).toEqual([0, 7]);
      expect(result).toBe(8);
      expect(s.stats.conflicts).toBe(1);
      expect(await b.version('cas')).toBe(42);
      expect(await s.update('cas', (rec) => ({ record: rec, result: rec.state.remaining }))).toBe(8);
    });

    it('updates from several connections at once: none is lost, each saw the one before', async () => {
      const stores = Array.from({ length: 4 }, () => b.store({ separate: true }));
      const runs = { n: 0 };
      const seen = await Promise.all(stores.flatMap((s, i) => Array.from({ length: 25 }, (_, j) => s.update('many', addLease(`${i}.${j}`, runs)))));
      const leases = await stores[0]!.update('many', (rec) => ({ record: rec, result: rec.leases }));
      expect(Object.keys(leases)).toHaveLength(100);
      // As if one after another: each found as many leases as updates went before it.
      expect(seen.sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      // The connections did get in each other's way; each conflict ran its updates again.
      expect(stores.reduce((n, s) => n + s.stats.conflicts, 0)).toBeGreaterThan(0);
      expect(runs.n).toBeGreaterThan(100);
    });

    it(`decides on ${b.name} time, however wrong the local clock`, async () => {
      const s = b.store({ now: () => Date.now() + HOUR });
      const before = await b.serverSeconds();
      const clock = await s.update('clock', (rec, c) => ({ record: rec, result: c }));
      const after = await b.serverSeconds();
      expect(clock.nowMs).toBeGreaterThanOrEqual(before * 1000);
      expect(clock.nowMs).toBeLessThan((after + 1) * 1000);
      expect(clock.localMs - clock.nowMs).toBeGreaterThan(HOUR - 1000);
      expect(clock.localMs - clock.nowMs).toBeLessThan(HOUR + 1000);
    });

    it('a record it cannot read counts as none', async () => {
      await b.writeUnreadable('junk');
      expect(await b.budget().readState('junk')).toMatchObject({ mode: 'unknown', inFlight: 0, blockedUntilMs: 0 });
    });
  });

  describe(`${b.name} budget`, () => {
    it(`a Retry-After seen by one process holds back every other, on ${b.name} time, whatever their local clocks say`, async () => {
      const aheadClock = () => Date.now() + HOUR;
      const a1 = b.budget({ now: aheadClock }, true);
      const b1 = b.budget({ now: () => Date.now() - HOUR }, true);
      await a1.acquire('ra');
      const t0 = Date.now();
      await a1.observe('ra', { status: 429, blockedUntilMs: aheadClock() + 1500, sentAtMs: aheadClock() });
      const err = await b1.acquire('ra', { maxWaitMs: 100 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RateLimitedError);
      expect((err as RateLimitedError).waitMs).toBeGreaterThan(1300);
      expect((err as RateLimitedError).waitMs).toBeLessThanOrEqual(1510);
      // Progress output shows the block on the local clock.
      const shown = b1.snapshot().find((s) => s.bucket === 'ra');
      expect(shown).toMatchObject({ reason: 'retry-after' });
      expect(shown!.waitingUntilMs! - (Date.now() - HOUR)).toBeGreaterThan(1200);
      expect(shown!.waitingUntilMs! - (Date.now() - HOUR)).toBeLessThanOrEqual(1510);
      await b1.acquire('ra');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1490);
    });

    it('an observation in one process wakes the waiters of another at once', async () => {
      const a1 = b.budget({}, true);
      const b1 = b.budget({ policy: { pollMs: 30_000 } }, true);
      await a1.acquire('wake');
      // Nothing known yet: one probe at a time; b1 waits for its answer, polling only every 30 s.
      const waiting = b1.acquire('wake');
      await new Promise((r) => setTimeout(r, 200));
      expect(b1.snapshot().find((s) => s.bucket === 'wake')).toMatchObject({ waiters: 1, reason: 'probing the budget' });
      const t0 = Date.now();
      await a1.observe('wake', { status: 200, remaining: 50, resetAtMs: t0 + 10_000, sentAtMs: t0 - 200 });
      await waiting;
      expect(Date.now() - t0).toBeLessThan(300);
    });

    it('frees the slot of a process that died mid-request when its lease expires', async () => {
      const dead = b.dying({ leaseMs: 300 });
      const alive = b.budget();
      const first = await dead.budget.tryAcquire('lease');
      expect(first.grant).toBe(true);
      await dead.kill();
      // Nothing known yet: one probe at a time, and the dead process holds it.
      const held = await alive.tryAcquire('lease');
      expect(held).toMatchObject({ grant: false, reason: 'probing the budget' });
      expect(await alive.readState('lease')).toMatchObject({ inFlight: 1 });
      const t0 = Date.now();
      await alive.acquire('lease');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
      expect(Date.now() - t0).toBeLessThan(1500);
      expect(await alive.readState('lease')).toMatchObject({ inFlight: 1 });
    });

    it('two processes pacing one bucket: 60 requests against 20 per second, no 429', async () => {
      const key = canaryKey('gw');
      const sim = await startSimulator({ gatewayKeys: [key], rateLimits: { gateway: { limit: 20, windowMs: 1000 } }, latencyMs: [0, 20] });
      try {
        const logger = createTestLogger([key], 'warn').logger;
        const clients = [0, 1].map(() =>
          createUpstream({
            config: { app: undefined, gateway: { url: sim.url, apiKey: key }, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20, maxAttempts: 3, maxRateWaitMs: 60_000 },
            budget: b.budget({ prefix: `${b.prefix}:pace` }, true),
            recorder: new MemoryRecorder(),
            logger,
            retry: FAST_RETRY_POLICY,
          }),
        );
        const started = Date.now();
        const results = await Promise.all(Array.from({ length: 60 }, (_, i) => clients[i % 2]!.get({ route: 'gateway.tokens' })));
        expect(results.every((r) => r.status === 200)).toBe(true);
        expect(sim.requests.filter((r) => r.status === 429)).toHaveLength(0);
        // Three windows of 20 (each begins at its first request), plus the resets' safety margins.
        expect(Date.now() - started).toBeLessThan(10_000);
      } finally {
        await sim.close();
      }
    });

    it("two processes: one's 503 + Retry-After (an announced outage) holds the other off the bucket, and neither spends an attempt", async () => {
      const key = canaryKey('gw');
      const sim = await startSimulator({ gatewayKeys: [key], tokens: 4, historyDays: 5, outage: { bucket: 'gateway', seconds: 2, after: 3 }, latencyMs: [0, 10] });
      try {
        const logger = createTestLogger([key], 'warn').logger;
        const clients = [0, 1].map(() =>
          createUpstream({
            config: { app: undefined, gateway: { url: sim.url, apiKey: key }, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20, maxAttempts: 1, maxRateWaitMs: 60_000 },
            budget: b.budget({ prefix: `${b.prefix}:outage` }, true),
            recorder: new MemoryRecorder(),
            logger,
            retry: FAST_RETRY_POLICY,
          }),
        );
        // Each process asks one request at a time, so the outage's first answer goes to one of them.
        const results = await Promise.all(
          [0, 1].map(async (c) => {
            const statuses: number[] = [];
            for (let i = 0; i < 8; i++) statuses.push((await clients[c]!.get({ route: 'gateway.tokens' })).status);
            return statuses;
          }),
        );
        expect(results.flat().every((s) => s === 200)).toBe(true);
        const [w] = sim.outages;
        expect(w).toBeDefined();
        // Only what was on the way as the outage began arrived inside it.
        expect(sim.requests.filter((r) => r.at > w!.startedAt + 250 && r.at < w!.endsAt)).toEqual([]);
        expect(sim.requests.filter((r) => r.status === 503).length).toBeLessThanOrEqual(2);
        expect(sim.requests.filter((r) => r.at >= w!.endsAt).length).toBeGreaterThanOrEqual(2);
      } finally {
        await sim.close();
      }
    });

    it('two processes against a host that sends no reset time: zero 429s, the window learned together', async () => {
      const sim = await startSimulator({ rateLimits: { appPublic: { limit: 12, windowMs: 2000 } }, latencyMs: [0, 10] });
      try {
        const logger = createTestLogger([], 'warn').logger;
        const budgets = [0, 1].map(() => b.budget({ prefix: `${b.prefix}:app` }, true));
        const clients = budgets.map((budget) =>
          createUpstream({
            config: { app: { url: sim.url, apiKey: undefined }, gateway: undefined, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20, maxAttempts: 3, maxRateWaitMs: 60_000 },
            budget,
            recorder: new MemoryRecorder(),
            logger,
            retry: FAST_RETRY_POLICY,
          }),
        );
        const results = await Promise.all(Array.from({ length: 36 }, (_, i) => clients[i % 2]!.get({ route: i % 4 < 2 ? 'app.tokens' : 'app.metrics' })));
        expect(results.every((r) => r.status === 200)).toBe(true);
        expect(sim.requests.filter((r) => r.status === 429)).toHaveLength(0);
        expect(await budgets[0]!.readState('app-public')).toMatchObject({ mode: 'metered', inFlight: 0 });
        const { windowLoMs, windowHiMs } = await budgets[1]!.readState('app-public');
        expect(windowLoMs).toBeLessThan(2000);
        expect(windowHiMs).toBeGreaterThanOrEqual(2000);
      } finally {
        await sim.close();
      }
    });
  });
}
