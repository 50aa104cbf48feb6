import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../../src/errors.ts';
import { InProcessBudget, type Sleep } from '../../../src/upstream/budget.ts';

/** A clock that only moves when someone sleeps; sleeps resolve in time order. */
function fakeTime(start = 1_000_000) {
  let t = start;
  const sleepers: { until: number; resolve: () => void }[] = [];
  const sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      const entry = { until: t + ms, resolve };
      sleepers.push(entry);
      signal?.addEventListener('abort', () => {
        sleepers.splice(sleepers.indexOf(entry), 1);
        reject(signal.reason);
      });
    });
  return {
    now: () => t,
    sleep,
    /** Runs pending sleeps in order until none is left before `until`. */
    async advanceTo(until: number) {
      for (;;) {
        await new Promise((r) => setImmediate(r));
        sleepers.sort((a, b) => a.until - b.until);
        const next = sleepers[0];
        if (!next || next.until > until) break;
        sleepers.shift();
        t = Math.max(t, next.until);
        next.resolve();
      }
      t = Math.max(t, until);
      await new Promise((r) => setImmediate(r));
    },
  };
}

describe('InProcessBudget', () => {
  it('holds every caller of a bucket until a 429 block ends, other buckets go on', async () => {
    const clock = fakeTime();
    const budget = new InProcessBudget({ now: clock.now, sleep: clock.sleep, random: () => 0.5 });
    const t0 = clock.now();
    budget.observe('gateway', { status: 429, blockedUntilMs: t0 + 3000, granted: false });
    const granted: number[] = [];
    const waits = Array.from({ length: 8 }, () =>
      budget.acquire('gateway').then(() => {
        granted.push(clock.now());
        budget.observe('gateway', { status: 200, remaining: 100, sentAtMs: clock.now() });
      }),
    );
    await expect(budget.acquire('app-public')).resolves.toEqual({ waitedMs: 0 });
    await clock.advanceTo(t0 + 2999);
    expect(granted).toEqual([]);
    await clock.advanceTo(t0 + 10_000);
    await Promise.all(waits);
    expect(granted).toHaveLength(8);
    expect(Math.min(...granted)).toBeGreaterThanOrEqual(t0 + 3000);
    expect(budget.snapshot().find((b) => b.bucket === 'gateway')).toMatchObject({ mode: 'metered', inFlight: 0 });
  });

  it('throws RateLimitedError instead of waiting past maxWaitMs', async () => {
    const clock = fakeTime();
    const budget = new InProcessBudget({ now: clock.now, sleep: clock.sleep });
    budget.observe('gateway', { status: 429, blockedUntilMs: clock.now() + 60_000, granted: false });
    const err = await budget.acquire('gateway', { maxWaitMs: 5_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ bucket: 'gateway', waitMs: 60_000 });
  });

  it('paces a burst to the advertised remaining, then waits for the reset', async () => {
    const clock = fakeTime();
    const budget = new InProcessBudget({ now: clock.now, sleep: clock.sleep, random: () => 0, policy: { resetMarginMs: 0 } });
    const t0 = clock.now();
    await budget.acquire('gateway');
    budget.observe('gateway', { status: 200, remaining: 3, limit: 4, resetAtMs: t0 + 2000, sentAtMs: t0 });
    let granted = 0;
    const all = Array.from({ length: 6 }, () => budget.acquire('gateway').then(() => granted++));
    await clock.advanceTo(t0 + 1999);
    expect(granted).toBe(3);
    expect(budget.snapshot().find((b) => b.bucket === 'gateway')).toMatchObject({ inFlight: 3, waiters: 3, reason: 'budget exhausted until reset' });
    // The three in flight answer; the window resets; one probe goes, its answer lets the rest go.
    for (let i = 0; i < 3; i++) budget.observe('gateway', { status: 200, remaining: 2 - i, resetAtMs: t0 + 2000, sentAtMs: t0 + 1 });
    await clock.advanceTo(t0 + 2000);
    expect(granted).toBe(4);
    budget.observe('gateway', { status: 200, remaining: 3, resetAtMs: t0 + 4000, sentAtMs: t0 + 2000 });
    await clock.advanceTo(t0 + 2001);
    await Promise.all(all);
    expect(granted).toBe(6);
  });

  it('an aborted wait rejects with the signal reason and leaves no waiter behind', async () => {
    const clock = fakeTime();
    const budget = new InProcessBudget({ now: clock.now, sleep: clock.sleep });
    budget.observe('gateway', { status: 429, blockedUntilMs: clock.now() + 3000, granted: false });
    const ac = new AbortController();
    const p = budget.acquire('gateway', { signal: ac.signal });
    await clock.advanceTo(clock.now() + 10);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(budget.snapshot().find((b) => b.bucket === 'gateway')?.waiters).toBe(0);
  });
});
