// Pacing by advertised budget: with X-RateLimit-* headers read and requests in flight
// counted, a burst far larger than the budget never gets a 429. The simulator, the budget
// and the client share a clock that stands still while they work and jumps to the next
// wake-up once every request waits (test/helpers/fast-clock.ts): the windows are the same to
// all three, the client's own CPU time is no part of any, and the waits take no wall time.
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { createUpstream, FAST_RETRY_POLICY, InProcessBudget, MemoryRecorder } from '../../src/upstream/index.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';
import { idleClock } from '../helpers/fast-clock.ts';
import { patience } from '../helpers/patience.ts';

const GW_KEY = canaryKey('gw');
let sim: Simulator | undefined;

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function burst(resetForm: 'delta' | 'epoch', requests: number) {
  const clock = idleClock();
  sim = await startSimulator({ gatewayKeys: [GW_KEY], rateLimits: { gateway: { limit: 20, windowMs: 2000 } }, resetForm, latencyMs: [0, 15], now: clock.now });
  const recorder = new MemoryRecorder();
  const budget = new InProcessBudget({ now: clock.now, sleep: clock.sleep });
  const upstream = createUpstream({
    now: clock.now,
    sleep: clock.sleep,
    config: { app: undefined, gateway: { url: sim.url, apiKey: GW_KEY }, requestTimeoutMs: patience(5_000), maxResponseBytes: 1 << 20, maxAttempts: 3, maxRateWaitMs: 60_000 },
    budget,
    recorder,
    logger: createTestLogger([GW_KEY]).logger,
    retry: FAST_RETRY_POLICY,
  });
  const slugs = ['aurora', 'cobalt-dex', 'emberline', 'glacier-lend'];
  // Every request at once: the budget alone decides when each goes.
  const results = await Promise.all(
    Array.from({ length: requests }, (_, i) =>
      clock.track(() => upstream.get({ route: i % 2 ? 'gateway.tokens' : 'gateway.token', params: i % 2 ? {} : { slug: slugs[i % slugs.length] as string } })),
    ),
  );
  return { sim, results, recorder, budget };
}

describe('advertised budget', () => {
  it('a burst of 60 requests against 20 per 2 s gets zero 429s (X-RateLimit-Reset as delta-seconds)', async () => {
    const { sim, results, recorder } = await burst('delta', 60);
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(sim.requests).toHaveLength(60);
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
    expect(perWindow).toEqual(Array.from({ length: 3 }, () => 20));
  });

  it('the same with X-RateLimit-Reset as epoch seconds', async () => {
    const { sim, results } = await burst('epoch', 40);
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(sim.requests.filter((r) => r.status === 429)).toHaveLength(0);
  });
});

describe('a budget without a reset time (the app host)', () => {
  // X-RateLimit-Remaining only; nothing says when a window ends but a 429's Retry-After. The
  // budget keeps a reserve of each window to time it instead of meeting that 429.
  async function appBurst(limit: number, windowMs: number, requests: number) {
    const clock = idleClock();
    sim = await startSimulator({ rateLimits: { appPublic: { limit, windowMs } }, latencyMs: [0, 10], now: clock.now });
    const budget = new InProcessBudget({ now: clock.now, sleep: clock.sleep });
    const upstream = createUpstream({
      now: clock.now,
      sleep: clock.sleep,
      config: { app: { url: sim.url, apiKey: undefined }, gateway: undefined, requestTimeoutMs: patience(5_000), maxResponseBytes: 1 << 20, maxAttempts: 3, maxRateWaitMs: 60_000 },
      budget,
      recorder: new MemoryRecorder(),
      logger: createTestLogger([]).logger,
      retry: FAST_RETRY_POLICY,
    });
    const started = clock.now();
    const results = await Promise.all(Array.from({ length: requests }, (_, i) => clock.track(() => upstream.get({ route: i % 2 ? 'app.tokens' : 'app.metrics' }))));
    const ms = clock.now() - started;
    // The simulator's fixed windows, replayed: each opens with the first request after the last ended.
    const opened: number[] = [];
    for (const r of sim.requests) if (opened.length === 0 || r.at >= opened[opened.length - 1]! + windowMs) opened.push(r.at);
    return { sim, results, ms, opened, budget };
  }

  it('60 requests against 12 per 2 s: zero 429s, close to the rate the budget allows', async () => {
    const { sim, results, ms, budget } = await appBurst(12, 2000, 60);
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(sim.requests.filter((r) => r.status === 429)).toHaveLength(0);
    expect(sim.requests).toHaveLength(60);
    // 12 per 2 s is 10 s for 60; a known window waits for its end plus a tenth of it, and the
    // first is spent partly in probes (about 12 s in all).
    expect(ms).toBeLessThan(1.5 * (60 / 12) * 2000);
    expect(budget.snapshot().find((b) => b.bucket === 'app-public')?.mode).toBe('metered');
  });

  it('a window that is no common length (3 s): zero 429s, and later windows wait less than the first', async () => {
    const { sim, results, opened } = await appBurst(20, 3000, 40);
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(sim.requests.filter((r) => r.status === 429)).toHaveLength(0);
    // The first window is timed against common lengths: the 1 and 2 s ones were too short, the
    // 5 s one shows the refill. The next waits for the middle of (2, 5] s, which already shows it.
    const gaps = opened.slice(1).map((at, i) => at - opened[i]!);
    expect(gaps.length).toBeGreaterThanOrEqual(2);
    expect(gaps[0]).toBeGreaterThanOrEqual(5000);
    for (const gap of gaps.slice(1)) expect(gap).toBeLessThan(gaps[0]! - 1000);
  });
});
