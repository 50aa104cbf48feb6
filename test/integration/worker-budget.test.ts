// The Redis budget: the Lua port decides exactly like budget-state.ts, a Retry-After seen by
// one process holds back the others, a dead process's slot comes back, and two processes
// pacing one bucket together do not overrun it.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../src/errors.ts';
import { startSimulator } from '../../sim/index.ts';
import { decide, DEFAULT_BUDGET_POLICY, initialBucketState, observe, RESERVE_REASON, type BucketState, type Observation } from '../../src/upstream/budget-state.ts';
import { createUpstream, FAST_RETRY_POLICY, MemoryRecorder } from '../../src/upstream/index.ts';
import { RedisBudget } from '../../src/upstream/redis-budget.ts';
import { canaryKey, createTestLogger, redisServerUrl, uniqueName } from '../helpers/services.ts';
import { deleteRedisKeys } from '../helpers/workers.ts';
import { Rng } from '../../sim/random.ts';

let redisUrl: string;
let redis: Redis;
const prefix = uniqueName('tesync_budget');
const budgets: RedisBudget[] = [];

beforeAll(async () => {
  redisUrl = await redisServerUrl();
  redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  for (const b of budgets) await b.close();
  await deleteRedisKeys(redisUrl, prefix);
  await redis?.quit();
});

function budget(options: Partial<ConstructorParameters<typeof RedisBudget>[0]> = {}): RedisBudget {
  const b = new RedisBudget({ redis, prefix, leaseMs: 10_000, ...options });
  budgets.push(b);
  return b;
}

/** The simulator's seeded generator (the sequence is the same on every run); int(n) is in [0, n). */
function rng(seed: number) {
  const r = new Rng(seed);
  return { next: () => r.next(), int: (n: number) => Math.floor(r.next() * n), pick: <T>(xs: readonly T[]) => r.pick(xs) };
}

describe('Redis budget', () => {
  it('makes the same decisions as the pure state machine over random sequences', async () => {
    const reasons = new Set<string>();
    const instants = new Set<string>();
    for (let seed = 1; seed <= 12; seed++) {
      const r = rng(seed);
      let T = 1_700_000_000_000;
      // Reserves from none to more than any count below: the reserve's instants (common window
      // lengths, then bisection) are reached as well as the ways it is left out.
      const probeReserve = [0, 2, 3, 8][seed % 4]!;
      const policy = { ...DEFAULT_BUDGET_POLICY, probeConcurrency: 1 + (seed % 2), resetMarginMs: 250, unknownResetProbeMs: 700, probeReserve };
      const b = budget({ now: () => T, policy, leaseMs: 1e9 });
      const bucket = `eq-${seed}`;
      let s: BucketState = initialBucketState();
      const granted: number[] = [];
      for (let step = 0; step < 150; step++) {
        const op = r.pick(['acquire', 'acquire', 'observe', 'observe', 'advance'] as const);
        if (op === 'advance') {
          T += r.int(2500);
        } else if (op === 'acquire') {
          const d = decide(s, T, policy);
          const got = await b.tryAcquire(bucket);
          expect(got.grant, `seed ${seed} step ${step}`).toBe(d.grant);
          if (d.grant) granted.push(T);
          else if (!got.grant) expect([got.untilMs, got.reason]).toEqual([d.untilMs, d.reason]);
          if (!d.grant) reasons.add(d.reason);
          if (!d.grant && d.reason === RESERVE_REASON && d.untilMs !== undefined) instants.add(s.windowHiMs === undefined ? 'ladder' : 'bisection');
          s = d.state;
        } else if (granted.length > 0) {
          const sentAtMs = granted.splice(r.int(granted.length), 1)[0]!;
          const obs: Observation = r.pick<Observation>([
            { status: 200, remaining: r.int(6), limit: 5, resetAtMs: T + r.int(3000) - 200, sentAtMs },
            { status: 200, remaining: r.int(6), sentAtMs },
            { status: 200, sentAtMs },
            { status: 503, remaining: r.int(3), sentAtMs },
            { status: 429, blockedUntilMs: T + 1 + r.int(2000), sentAtMs },
            // a 429 that says when the window ends: the window length is learned from it
            ((end) => ({ status: 429, blockedUntilMs: end, resetAtMs: end, sentAtMs }))(T + 1 + r.int(2000)),
            { status: null, sentAtMs },
          ]);
          s = observe(s, obs, T);
          await b.observe(bucket, obs);
        }
        const shared = await b.readState(bucket);
        const { blockReason: _a, ...mine } = s;
        const { blockReason: _b, ...theirs } = shared;
        expect(theirs, `seed ${seed} step ${step} (${op})`).toEqual(mine);
      }
    }
    // The sequences reach every way of holding a request back.
    expect([...reasons].sort()).toEqual([
      'budget exhausted until reset',
      'budget exhausted until the learned window ends',
      'budget exhausted, reset unknown',
      RESERVE_REASON,
      'probing the budget',
      'retry-after',
    ]);
    expect([...instants].sort()).toEqual(['bisection', 'ladder']);
  });

  it('a Retry-After seen by one process holds back every other, on Redis time', async () => {
    const a = budget();
    const b = budget();
    await a.acquire('ra');
    const t0 = Date.now();
    await a.observe('ra', { status: 429, blockedUntilMs: t0 + 1500, sentAtMs: t0 });
    const err = await b.acquire('ra', { maxWaitMs: 100 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).waitMs).toBeGreaterThan(1300);
    expect((err as RateLimitedError).waitMs).toBeLessThanOrEqual(1510);
    await b.acquire('ra');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1490);
  });

  it('frees the slot of a process that died mid-request when its lease expires', async () => {
    const dead = budget({ leaseMs: 300 });
    const alive = budget();
    const first = await dead.tryAcquire('lease');
    expect(first.grant).toBe(true);
    // Nothing known yet: one probe at a time, and the dead process holds it.
    const held = await alive.tryAcquire('lease');
    expect(held).toMatchObject({ grant: false, reason: 'probing the budget' });
    const t0 = Date.now();
    await alive.acquire('lease');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it('two processes pacing one bucket: 60 requests against 20 per second, no 429', async () => {
    const key = canaryKey('gw');
    const sim = await startSimulator({ gatewayKeys: [key], rateLimits: { gateway: { limit: 20, windowMs: 1000 } }, latencyMs: [0, 20] });
    try {
      const logger = createTestLogger([key], 'warn').logger;
      const clients = [0, 1].map(() =>
        createUpstream({
          config: { app: undefined, gateway: { url: sim.url, apiKey: key }, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20, maxAttempts: 3, maxRateWaitMs: 60_000 },
          budget: budget({ prefix: `${prefix}:pace` }),
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
});
