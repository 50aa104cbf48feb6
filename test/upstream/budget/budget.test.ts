import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../../src/lib/errors.ts';
import { DEFAULT_BUDGET_POLICY } from '../../../src/upstream/budget/budget-state.ts';
import { Budget, InProcessBudget, type Sleep } from '../../../src/upstream/budget/budget.ts';
import { MemoryBudgetStore, type BudgetStore } from '../../../src/upstream/budget/budget-store.ts';

const DEFAULT_POLL_MS = DEFAULT_BUDGET_POLICY.pollMs;

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

/** A store whose clock runs `skewMs` ahead of the local one, as Redis time may. */
function skewedStore(now: () => number, skewMs: number): BudgetStore {
  const inner = new MemoryBudgetStore(() => now() + skewMs);
  return {
    update: (bucket, fn) => inner.update(bucket, (rec, clock) => fn(rec, { nowMs: clock.nowMs, localMs: now() })),
    onChange: () => {},
    close: async () => {},
  };
}

/** A store that decides at once but answers only when the gate opens: a round trip to a shared store. */
function slowStore(now: () => number) {
  const inner = new MemoryBudgetStore(now);
  let open!: () => void;
  let gate: Promise<void> | undefined;
  const store: BudgetStore = {
    update: (bucket, fn) => {
      const result = inner.update(bucket, fn);
      return gate ? gate.then(() => result) : Promise.resolve(result);
    },
    onChange: () => {},
    close: async () => {},
  };
  return {
    store,
    hold: () => (gate = new Promise<void>((r) => (open = r))),
    release: () => {
      gate = undefined;
      open();
    },
  };
}

describe('a 429 that arrives while a grant is on its way', () => {
  // The race the soak found: the store granted a slot, the 429 of another request of the
  // bucket arrived before the grant reached its caller, and the request went out 1 ms into
  // the Retry-After window.
  it('the grant is handed back unsent and the request waits for the window to end', async () => {
    const clock = fakeTime();
    const slow = slowStore(clock.now);
    const budget = new Budget(slow.store, { now: clock.now, sleep: clock.sleep, random: () => 0.5 });
    const t0 = clock.now();
    slow.hold();
    let sentAt: number | undefined;
    const request = budget.acquire('gateway').then(() => (sentAt = clock.now()));
    // The store has decided (a grant) but its answer is on the way when the 429 is read.
    const observed = budget.observe('gateway', { status: 429, blockedUntilMs: t0 + 3000, granted: false });
    slow.release();
    await observed;
    await clock.advanceTo(t0 + 2999);
    expect(sentAt).toBeUndefined();
    // The slot went back: nothing of the bucket is in flight while it waits.
    expect(await budget.readState('gateway')).toMatchObject({ inFlight: 0, blockedUntilMs: t0 + 3000 });
    await clock.advanceTo(t0 + 10_000);
    await request;
    expect(sentAt).toBeGreaterThanOrEqual(t0 + 3000);
  });

  it('with a shorter wait allowed, the caller gets RateLimitedError for the rest of the window', async () => {
    const clock = fakeTime();
    const slow = slowStore(clock.now);
    const budget = new Budget(slow.store, { now: clock.now, sleep: clock.sleep });
    const t0 = clock.now();
    slow.hold();
    const request = budget.acquire('gateway', { maxWaitMs: 1000 }).catch((e: unknown) => e);
    const observed = budget.observe('gateway', { status: 429, blockedUntilMs: t0 + 4000, granted: false });
    slow.release();
    await observed;
    const err = await request;
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ bucket: 'gateway', waitMs: 4000, reason: 'retry-after' });
    expect(await budget.readState('gateway')).toMatchObject({ inFlight: 0 });
  });
});

describe('Budget on a store of its own clock', () => {
  it('a local Retry-After end becomes store time as a duration; progress shows it on the local clock', async () => {
    for (const skew of [-3600_000, 5000]) {
      const clock = fakeTime(1_700_000_000_000);
      const budget = new Budget(skewedStore(clock.now, skew), { now: clock.now, sleep: clock.sleep });
      const t0 = clock.now();
      await budget.observe('gateway', { status: 429, blockedUntilMs: t0 + 3000, granted: false });
      const err = await budget.acquire('gateway', { maxWaitMs: 0 }).catch((e: unknown) => e);
      expect(err).toMatchObject({ bucket: 'gateway', waitMs: 3000 });
      expect(await budget.readState('gateway')).toMatchObject({ blockedUntilMs: t0 + skew + 3000 });
      expect(budget.snapshot().find((b) => b.bucket === 'gateway')).toMatchObject({ waitingUntilMs: t0 + 3000, reason: 'retry-after' });
    }
  });

  it('a send time is measured from the grant on the store clock', async () => {
    const clock = fakeTime();
    const skew = 5000;
    const budget = new Budget(skewedStore(clock.now, skew), { now: clock.now, sleep: clock.sleep });
    const t0 = clock.now();
    await budget.acquire('app-public');
    await clock.advanceTo(t0 + 10);
    await budget.observe('app-public', { status: 200, remaining: 5, sentAtMs: t0 + 10 });
    // The window opens with the request's send time, on the store clock.
    expect(await budget.readState('app-public')).toMatchObject({ mode: 'metered', inFlight: 0, windowFromMs: t0 + skew + 10, observedAtMs: t0 + skew + 10 });
  });

  it('a grant never observed frees its slot when its lease expires', async () => {
    const clock = fakeTime();
    const budget = new Budget(new MemoryBudgetStore(clock.now), { now: clock.now, sleep: clock.sleep, leaseMs: 300 });
    const t0 = clock.now();
    expect(await budget.tryAcquire('gateway')).toMatchObject({ grant: true });
    // Nothing known: one probe at a time, and the lost one holds it until its lease expires.
    expect(await budget.tryAcquire('gateway')).toMatchObject({ grant: false, reason: 'probing the budget' });
    let granted: number | undefined;
    const next = budget.acquire('gateway').then(() => (granted = clock.now()));
    await clock.advanceTo(t0 + 299);
    expect(granted).toBeUndefined();
    // Found by the next poll after the expiry.
    await clock.advanceTo(t0 + DEFAULT_POLL_MS + 100);
    await next;
    expect(granted).toBeGreaterThan(t0 + 300);
    expect(granted).toBeLessThanOrEqual(t0 + DEFAULT_POLL_MS);
    // The late answer of the expired grant releases nothing: the new probe still holds its slot.
    await budget.observe('gateway', { status: null, sentAtMs: t0 });
    expect(await budget.readState('gateway')).toMatchObject({ inFlight: 1 });
  });
});
