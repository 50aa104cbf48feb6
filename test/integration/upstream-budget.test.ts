// Pacing by advertised budget: with X-RateLimit-* headers read and requests in flight
// counted, a burst far larger than the budget never gets a 429.
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/index.ts';
import { createUpstream, FAST_RETRY_POLICY, InProcessBudget, MemoryRecorder } from '../../src/upstream/index.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';

const GW_KEY = canaryKey('gw');
let sim: Simulator | undefined;

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function burst(resetForm: 'delta' | 'epoch', requests: number) {
  sim = await startSimulator({ gatewayKeys: [GW_KEY], rateLimits: { gateway: { limit: 20, windowMs: 2000 } }, resetForm, latencyMs: [0, 15] });
  const recorder = new MemoryRecorder();
  const budget = new InProcessBudget();
  const upstream = createUpstream({
    config: { app: undefined, gateway: { url: sim.url, apiKey: GW_KEY }, requestTimeoutMs: 5_000, maxResponseBytes: 1 << 20, maxAttempts: 3, maxRateWaitMs: 60_000 },
    budget,
    recorder,
    logger: createTestLogger([GW_KEY]).logger,
    retry: FAST_RETRY_POLICY,
  });
  const slugs = ['aurora', 'cobalt-dex', 'emberline', 'glacier-lend'];
  // Every request at once: the budget alone decides when each goes.
  const results = await Promise.all(
    Array.from({ length: requests }, (_, i) => upstream.get({ route: i % 2 ? 'gateway.tokens' : 'gateway.token', params: i % 2 ? {} : { slug: slugs[i % slugs.length] as string } })),
  );
  return { sim, results, recorder, budget };
}

describe('advertised budget', () => {
  it('a burst of 200 requests against 20 per 2 s gets zero 429s (X-RateLimit-Reset as delta-seconds)', async () => {
    const { sim, results, recorder } = await burst('delta', 200);
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(sim.requests).toHaveLength(200);
    expect(sim.requests.filter((r) => r.status === 429)).toHaveLength(0);
    expect(recorder.requests.every((r) => r.httpStatus === 200 && r.attempt === 1)).toBe(true);
    // Replay the simulator's fixed windows (each starts at its first request): every full
    // window carried exactly the advertised 20, so the budget was used, never overrun.
    const perWindow: number[] = [];
    let start = -Infinity;
    for (const r of sim.requests) {
      if (r.at >= start + 2000) {
        start = r.at;
        perWindow.push(0);
      }
      perWindow[perWindow.length - 1]! += 1;
    }
    expect(perWindow).toEqual(Array.from({ length: 10 }, () => 20));
  });

  it('the same with X-RateLimit-Reset as epoch seconds', async () => {
    const { sim, results } = await burst('epoch', 40);
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(sim.requests.filter((r) => r.status === 429)).toHaveLength(0);
  });
});

describe('a budget without a reset time (the app host)', () => {
  it('one 429 teaches the window: the windows after it get none, and each is spent in full', async () => {
    // X-RateLimit-Remaining only; a 429's Retry-After is the one place the window's end shows.
    sim = await startSimulator({ rateLimits: { appPublic: { limit: 12, windowMs: 2000 } }, latencyMs: [0, 10] });
    const recorder = new MemoryRecorder();
    const budget = new InProcessBudget();
    const upstream = createUpstream({
      config: { app: { url: sim.url, apiKey: undefined }, gateway: undefined, requestTimeoutMs: 5_000, maxResponseBytes: 1 << 20, maxAttempts: 3, maxRateWaitMs: 60_000 },
      budget,
      recorder,
      logger: createTestLogger([]).logger,
      retry: FAST_RETRY_POLICY,
    });
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => upstream.get({ route: i % 2 ? 'app.tokens' : 'app.metrics' })));
    expect(results.every((r) => r.status === 200)).toBe(true);

    const limited = sim.requests.filter((r) => r.status === 429);
    expect(limited).toHaveLength(1);
    // The 429 came in the first window; every request after it was served.
    const after = sim.requests.slice(sim.requests.indexOf(limited[0]!) + 1);
    expect(after.length).toBeGreaterThanOrEqual(48);
    expect(after.every((r) => r.status === 200)).toBe(true);
    expect(budget.snapshot().find((b) => b.bucket === 'app-public')?.mode).toBe('metered');
  });
});
