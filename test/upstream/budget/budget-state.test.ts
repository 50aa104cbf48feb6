import { describe, expect, it } from 'vitest';
import {
  decide,
  DEFAULT_BUDGET_POLICY,
  initialBucketState,
  jitterFor,
  observe,
  RESERVE_REASON,
  type BucketState,
  type BudgetPolicy,
} from '../../../src/upstream/budget/budget-state.ts';
import { Rng } from '../../../sim/random.ts';

const P = { ...DEFAULT_BUDGET_POLICY, probeConcurrency: 1, resetMarginMs: 100, unknownResetProbeMs: 1000, probeReserve: 3 };
const T = 1_000_000;

function grant(s: BucketState, now = T): BucketState {
  const d = decide(s, now, P);
  expect(d.grant).toBe(true);
  return d.state;
}

describe('budget state', () => {
  it('probes one request at a time while nothing is known', () => {
    let s = grant(initialBucketState());
    const d = decide(s, T, P);
    expect(d.grant).toBe(false);
    expect(d.grant === false && d.untilMs).toBeUndefined();
    s = observe(s, { status: 200, remaining: 3, limit: 20, resetAtMs: T + 2000, sentAtMs: T }, T + 5);
    expect(s.mode).toBe('metered');
    expect(s.inFlight).toBe(0);
  });

  it('never grants more than remaining, counting requests in flight', () => {
    let s = observe(grant(initialBucketState()), { status: 200, remaining: 3, resetAtMs: T + 2000, sentAtMs: T }, T);
    s = grant(s, T + 1);
    s = grant(s, T + 1);
    s = grant(s, T + 1);
    const d = decide(s, T + 1, P);
    expect(d.grant).toBe(false);
    // Waits until the reset plus the margin, not forever.
    expect(d.grant === false && d.untilMs).toBe(T + 2000 + P.resetMarginMs);
  });

  it('a stale (out of order) response never raises the budget', () => {
    let s = observe(grant(initialBucketState()), { status: 200, remaining: 10, resetAtMs: T + 2000, sentAtMs: T }, T + 10);
    // Two requests go; the later-served one answers first.
    s = grant(s, T + 20);
    s = grant(s, T + 20);
    s = observe(s, { status: 200, remaining: 8, resetAtMs: T + 2000, sentAtMs: T + 20 }, T + 30);
    s = observe(s, { status: 200, remaining: 9, resetAtMs: T + 2000, sentAtMs: T + 20 }, T + 31);
    expect(s.remaining).toBe(8);
    expect(s.inFlight).toBe(0);
  });

  it('a response to a request sent after the last observation is authoritative', () => {
    let s: BucketState = { ...initialBucketState(), mode: 'metered', remaining: 0, resetAtMs: T, observedAtMs: T - 500 };
    s = grant(s, T + P.resetMarginMs); // after the reset: a probe
    expect(s.mode).toBe('unknown');
    s = observe(s, { status: 200, remaining: 19, resetAtMs: T + 2000, sentAtMs: T + P.resetMarginMs }, T + 200);
    expect(s).toMatchObject({ mode: 'metered', remaining: 19, inFlight: 0 });
  });

  it('a 429 blocks the bucket until Retry-After, then probes again', () => {
    let s = grant(observe(initialBucketState(), { status: 200, remaining: 50, granted: false }, T));
    s = observe(s, { status: 429, blockedUntilMs: T + 3000, sentAtMs: T }, T + 10);
    const d = decide(s, T + 2999, P);
    expect(d.grant).toBe(false);
    expect(d.grant === false && d.untilMs).toBe(T + 3000);
    expect(s.mode).toBe('unknown');
    // A stale success from before the block does not lift it.
    s = observe(s, { status: 200, remaining: 40, sentAtMs: T - 5 }, T + 20);
    expect(decide(s, T + 2999, P).grant).toBe(false);
    s = grant(s, T + 3000);
    expect(decide(s, T + 3000, P).grant).toBe(false); // only one probe
  });

  it('any status with a stated wait (a 503 announcing maintenance) blocks the bucket as a 429 does, and a later success from before it does not lift it', () => {
    let s = grant(observe(initialBucketState(), { status: 200, remaining: 50, granted: false }, T));
    s = grant(s, T + 1);
    s = observe(s, { status: 503, blockedUntilMs: T + 25_000, sentAtMs: T }, T + 10);
    expect(s).toMatchObject({ blockedUntilMs: T + 25_000, blockReason: 'retry-after', inFlight: 1 });
    const d = decide(s, T + 24_999, P);
    expect(d.grant === false && d.untilMs).toBe(T + 25_000);
    s = observe(s, { status: 200, remaining: 49, sentAtMs: T + 1 }, T + 20);
    expect(decide(s, T + 24_999, P).grant).toBe(false);
    expect(decide(s, T + 25_000, P).grant).toBe(true);
    // A 503 without a stated wait holds nothing.
    expect(observe(initialBucketState(), { status: 503, granted: false }, T).blockedUntilMs).toBe(0);
  });

  it('a later, shorter 429 never shortens a block', () => {
    let s = observe(initialBucketState(), { status: 429, blockedUntilMs: T + 5000, granted: false }, T);
    s = observe(s, { status: 429, blockedUntilMs: T + 1000, granted: false }, T);
    expect(s.blockedUntilMs).toBe(T + 5000);
  });

  it('remaining 0 without a reset, in a window whose opening we did not see, re-probes after a while', () => {
    const s: BucketState = { ...initialBucketState(), mode: 'metered', remaining: 0, observedAtMs: T };
    const d = decide(s, T + 10, P);
    expect(d.grant === false && d.untilMs).toBe(T + P.unknownResetProbeMs);
    expect(decide(s, T + P.unknownResetProbeMs, P).grant).toBe(true);
  });

  it('a success without rate-limit headers means the bucket is not metered', () => {
    let s = observe(grant(initialBucketState()), { status: 200, sentAtMs: T }, T);
    expect(s.mode).toBe('unmetered');
    for (let i = 0; i < 50; i++) s = grant(s);
    expect(s.inFlight).toBe(50);
  });

  it('an error without headers teaches nothing; a network failure frees the slot', () => {
    let s = observe(grant(initialBucketState()), { status: 404, sentAtMs: T }, T);
    expect(s.mode).toBe('unknown');
    s = observe(grant(s), { status: null, sentAtMs: T }, T);
    expect(s.inFlight).toBe(0);
    expect(s.mode).toBe('unknown');
  });

  it('jitter is bounded and proportional', () => {
    expect(jitterFor(3000, 0, P)).toBe(0);
    expect(jitterFor(3000, 0.999, P)).toBeLessThanOrEqual(300);
    expect(jitterFor(100_000, 0.999, P)).toBeLessThanOrEqual(P.jitterMaxMs);
  });
});

describe('a window without a reset header', () => {
  // The app host: X-RateLimit-Remaining on successes, Retry-After on a 429, nothing else.
  // With P, a window's margin is min(resetMarginMs, a tenth of it) = 100 ms.

  /** A granted request at `sentAt` whose answer (a success with `remaining`) arrives at `at`. */
  function answer(s: BucketState, sentAt: number, remaining: number, at = sentAt + 5): BucketState {
    return observe(s, { status: 200, remaining, sentAtMs: sentAt }, at);
  }
  function held(s: BucketState, now: number, policy: BudgetPolicy = P) {
    const d = decide(s, now, policy);
    expect(d.grant).toBe(false);
    return d.grant ? undefined : { untilMs: d.untilMs, reason: d.reason };
  }

  /** Window 1 opens at T, is spent down to the reserve, then runs dry at the 1, 2 and 5 s rungs. */
  function dryFirstWindow(): BucketState {
    let s = answer(grant(initialBucketState()), T, 5);
    expect(s.windowFromMs).toBe(T);
    s = grant(grant(s, T + 10), T + 10);
    // 5 left, 2 in flight: the last 3 are the reserve, and go one at a time.
    expect(held(s, T + 10)).toEqual({ untilMs: undefined, reason: RESERVE_REASON });
    s = answer(s, T + 10, 4, T + 20);
    s = answer(s, T + 10, 3, T + 21);
    expect(s.windowLoMs).toBe(10);
    expect(held(s, T + 30)).toEqual({ untilMs: T + 1100, reason: RESERVE_REASON });
    s = answer(grant(s, T + 1100), T + 1100, 2);
    expect(s.windowLoMs).toBe(1100);
    expect(held(s, T + 1200)?.untilMs).toBe(T + 2100);
    s = answer(grant(s, T + 2100), T + 2100, 1);
    expect(held(s, T + 2200)?.untilMs).toBe(T + 5100);
    s = grant(s, T + 5100);
    // The last unit in flight: nothing else goes, not even at the next instant.
    expect(held(s, T + 20_000)?.untilMs).toBeUndefined();
    s = answer(s, T + 5100, 0);
    expect(s).toMatchObject({ windowLoMs: 5100, windowHiMs: undefined, windowFromMs: T });
    return s;
  }

  it('keeps a reserve and spends it one request at a time where common windows would end', () => {
    const s = dryFirstWindow();
    // Dry with nothing above: wait for the next common length (10 s), never into remaining 0.
    expect(held(s, T + 5200)).toEqual({ untilMs: T + 10_100, reason: 'budget exhausted, reset unknown' });
    expect(held(s, T + 10_099)?.untilMs).toBe(T + 10_100);
    expect(decide(s, T + 10_100, P).grant).toBe(true);
  });

  it('a success after the window ran dry shows a refill: the upper bound, and the new window', () => {
    let s = grant(dryFirstWindow(), T + 10_100);
    expect(s.mode).toBe('unknown');
    expect(held(s, T + 10_100)?.reason).toBe('probing the budget');
    s = answer(s, T + 10_100, 4, T + 10_150);
    // Served in a later window, answered 10 150 ms after window 1 opened: W <= 10 150 ms.
    expect(s).toMatchObject({ mode: 'metered', remaining: 4, windowLoMs: 5100, windowHiMs: 10_150, windowFromMs: T + 10_100 });
  });

  it('once bounded, the reserve bisects the interval, and a count higher than the last one is a refill', () => {
    let s = answer(grant(dryFirstWindow(), T + 10_100), T + 10_100, 4, T + 10_150);
    const w2 = T + 10_100;
    s = answer(grant(s, w2 + 100), w2 + 100, 3);
    expect(s.windowLoMs).toBe(5100); // 100 ms into window 2 proves nothing new
    // Middle of (5100, 10150].
    expect(held(s, w2 + 200)).toEqual({ untilMs: w2 + 7625, reason: RESERVE_REASON });
    s = answer(grant(s, w2 + 7625), w2 + 7625, 2);
    expect(s.windowLoMs).toBe(7625);
    expect(held(s, w2 + 7700)?.untilMs).toBe(w2 + 8887);
    // Served after window 2 ended: 9 > 2.
    s = answer(grant(s, w2 + 8887), w2 + 8887, 9, w2 + 8917);
    expect(s).toMatchObject({ windowLoMs: 7625, windowHiMs: 8917, windowFromMs: w2 + 8887, remaining: 9 });
  });

  it('a window known closely keeps no reserve, and a dry one waits for the upper bound', () => {
    const from = T + 50_000;
    let s: BucketState = { ...initialBucketState(), mode: 'metered', remaining: 2, observedAtMs: from + 5, windowFromMs: from, windowLoMs: 59_850, windowHiMs: 60_050 };
    s = grant(grant(s, from + 10), from + 10);
    const d = held(s, from + 10);
    expect(d).toEqual({ untilMs: from + 60_050 + 100, reason: 'budget exhausted until the learned window ends' });
    // Past that end, answers still due were served in the old window: they come first.
    expect(held(s, from + 60_150)).toEqual({ untilMs: undefined, reason: 'budget exhausted until the learned window ends' });
    s = answer(answer(s, from + 10, 1, from + 60_200), from + 10, 0, from + 60_201);
    expect(decide(s, from + 60_201, P).grant).toBe(true);
  });

  it('a 429 that states the window end still gives the exact length', () => {
    let s = answer(grant(initialBucketState()), T, 0);
    s = grant(s, T + 1100);
    s = observe(s, { status: 429, blockedUntilMs: T + 60_000, resetAtMs: T + 60_000, sentAtMs: T + 1100 }, T + 1105);
    expect(s).toMatchObject({ windowLoMs: 60_000, windowHiMs: 60_000, windowFromMs: undefined, mode: 'unknown' });
    // The next window opens with the probe after the block; known exactly, it keeps no reserve.
    const w2 = T + 60_003;
    s = answer(grant(s, w2), w2, 3);
    expect(s.windowFromMs).toBe(w2);
    for (let i = 0; i < 3; i++) s = grant(s, w2 + 10);
    expect(held(s, w2 + 10)).toEqual({ untilMs: w2 + 60_000 + 100, reason: 'budget exhausted until the learned window ends' });
  });

  // An overload's 429 (Retry-After 1-4 s while X-RateLimit-Remaining says 15 are left) taken for
  // a window's end would teach a window of a minute, and each window of a 10 s budget would
  // then wait a minute.
  it('a 429 that says requests are left holds the bucket for its Retry-After and teaches no window length', () => {
    let s = answer(grant(initialBucketState()), T, 10); // a window of ours opens at T
    s = answer(grant(s, T + 10), T + 10, 9);
    const before = { mode: s.mode, remaining: s.remaining, windowFromMs: s.windowFromMs, windowLoMs: s.windowLoMs, windowHiMs: s.windowHiMs };
    s = observe(grant(s, T + 57_000), { status: 429, blockedUntilMs: T + 60_000, resetAtMs: T + 60_000, remaining: 8, sentAtMs: T + 57_000 }, T + 57_005);
    expect(s).toMatchObject({ ...before, inFlight: 0, blockedUntilMs: T + 60_000, blockReason: 'retry-after' });
    expect(held(s, T + 59_999)).toEqual({ untilMs: T + 60_000, reason: 'retry-after' });
    expect(decide(s, T + 60_000, P).grant).toBe(true);
    // The same 429 with nothing left (or no count at all) is the window's end: it gives the length.
    for (const remaining of [0, undefined]) {
      let t = answer(grant(initialBucketState()), T, 10);
      t = observe(grant(t, T + 57_000), { status: 429, blockedUntilMs: T + 60_000, resetAtMs: T + 60_000, remaining, sentAtMs: T + 57_000 }, T + 57_005);
      expect(t).toMatchObject({ windowLoMs: 60_000, windowHiMs: 60_000, mode: 'unknown' });
    }
  });

  it('a 429 whose wait is a backoff guess teaches nothing, and a window longer than an hour is not believed', () => {
    let s = answer(grant(initialBucketState()), T, 0);
    s = observe(grant(s, T + 1100), { status: 429, blockedUntilMs: T + 4000, sentAtMs: T + 1100 }, T + 1105);
    expect([s.windowLoMs, s.windowHiMs]).toEqual([undefined, undefined]);
    s = answer(grant(s, T + 4000), T + 4000, 0);
    const end = T + 4000 + 2 * 3600_000;
    s = observe(grant(s, T + 5100), { status: 429, blockedUntilMs: end, resetAtMs: end, sentAtMs: T + 5100 }, T + 5105);
    expect([s.windowLoMs, s.windowHiMs]).toEqual([undefined, undefined]);
  });

  it('out-of-order answers do not move the bounds: a stale lower count makes earlier sends stale too', () => {
    let s = answer(grant(initialBucketState()), T, 10); // window opens at T
    s = grant(grant(grant(s, T + 10), T + 20), T + 20);
    s = answer(s, T + 10, 8, T + 30); // fresh: the state's observation
    s = grant(s, T + 40); // sent after it arrived
    // T+20's answers: one served before T+10's (a higher count, ignored), one served after T+40's.
    s = answer(s, T + 20, 9, T + 50);
    s = answer(s, T + 20, 5, T + 60);
    // T+40 was served before that 5 (so it shows 6): no refill, no upper bound.
    s = answer(s, T + 40, 6, T + 70);
    expect(s).toMatchObject({ remaining: 5, windowFromMs: T, windowHiMs: undefined, windowLoMs: 10, inFlight: 0 });
  });

  it('a bound that a later window contradicts gives way', () => {
    const base: BucketState = { ...initialBucketState(), mode: 'metered', remaining: 5, observedAtMs: T, windowFromMs: T, windowLoMs: 1000, windowHiMs: 1000 };
    // Served in the same window 1500 ms after its opening: longer than the 1000 believed.
    const longer = answer(grant(base, T + 1500), T + 1500, 4);
    expect([longer.windowLoMs, longer.windowHiMs]).toEqual([1500, undefined]);
    // A refill seen 800 ms after the opening: shorter than the 1000 believed.
    const shorter = answer(grant(base, T + 790), T + 790, 9, T + 800);
    expect([shorter.windowLoMs, shorter.windowHiMs]).toEqual([800, 800]);
  });

  it('a reset header, when sent, wins over a learned window', () => {
    const s: BucketState = { ...initialBucketState(), mode: 'metered', remaining: 0, resetAtMs: T + 500, observedAtMs: T, windowLoMs: 60_000, windowHiMs: 60_000, windowFromMs: T };
    expect(decide(s, T + 1, P)).toMatchObject({ grant: false, untilMs: T + 500 + P.resetMarginMs });
    // ... and no reserve is kept: the reset says when the window ends.
    const r: BucketState = { ...s, remaining: 2, windowLoMs: undefined, windowHiMs: undefined };
    expect(decide(r, T + 1, P).grant).toBe(true);
  });
});

describe('against a fixed-window upstream that sends no reset time', () => {
  /** The simulator's seeded generator: the same sequence on every run. */
  function rng(seed: number) {
    const r = new Rng(seed);
    return () => r.next();
  }

  /**
   * `workers` callers, each sending its next request when the last one is answered, against
   * a window that opens with the first request served after the previous one ended (as the
   * simulator's). Latency is random on both legs, so answers arrive out of order.
   */
  function run(limit: number, windowMs: number, requests: number, workers: number, latency: [number, number], seed: number) {
    const random = rng(seed);
    const policy = DEFAULT_BUDGET_POLICY;
    const leg = () => (latency[0] + random() * (latency[1] - latency[0])) / 2;
    let s = initialBucketState();
    let now = 0;
    let served = 0;
    let limited = 0;
    let window = { start: -Infinity, count: 0 };
    const events: { at: number; run: () => void }[] = [];
    const waiting: number[] = [];
    const wakeAt = new Map<number, number>();
    const schedule = (at: number, run: () => void) => events.push({ at, run });
    const tryAll = () => {
      for (const id of [...waiting]) {
        const d = decide(s, now, policy);
        s = d.state;
        if (d.grant) {
          waiting.splice(waiting.indexOf(id), 1);
          const sentAt = now;
          schedule(now + leg(), () => {
            if (now >= window.start + windowMs) window = { start: now, count: 0 };
            window.count++;
            const ok = window.count <= limit;
            const remaining = limit - window.count;
            // Retry-After: whole seconds to the window's end, rounded up.
            const retryAfterMs = Math.ceil((window.start + windowMs - now) / 1000) * 1000;
            schedule(now + leg(), () => {
              if (ok) {
                s = observe(s, { status: 200, remaining, sentAtMs: sentAt }, now);
                served++;
              } else {
                limited++;
                const until = now + retryAfterMs;
                s = observe(s, { status: 429, blockedUntilMs: until, resetAtMs: until, sentAtMs: sentAt }, now);
              }
              if (served < requests) waiting.push(id); // its next request, or this one again after a 429
              tryAll();
            });
          });
        } else {
          const at = d.untilMs !== undefined ? d.untilMs + jitterFor(d.untilMs - now, random(), policy) : now + policy.pollMs;
          wakeAt.set(id, at);
          schedule(at, () => wakeAt.get(id) === at && tryAll());
        }
      }
    };
    for (let id = 0; id < workers; id++) waiting.push(id);
    tryAll();
    while (served < requests && events.length > 0) {
      events.sort((a, b) => a.at - b.at);
      const e = events.shift()!;
      now = Math.max(now, e.at);
      e.run();
    }
    return { served, limited, ms: now };
  }

  it.each([
    // limit, window, requests, workers, latency (ms, both legs)
    [12, 2000, 55, 60, [0, 10]],
    [12, 3000, 55, 60, [0, 10]],
    [5, 1000, 40, 8, [20, 200]],
    [50, 7000, 300, 8, [20, 100]],
    [60, 10_000, 500, 8, [50, 150]],
    [300, 60_000, 550, 8, [50, 150]],
    [600, 60_000, 2900, 8, [50, 150]],
    [100, 45_000, 450, 8, [100, 1500]],
  ] as const)('%i per %i ms: no 429, and close to the time the budget needs', (limit, windowMs, requests, workers, latency) => {
    for (let seed = 1; seed <= 5; seed++) {
      const r = run(limit, windowMs, requests, workers, [...latency], seed);
      expect(r.served, `seed ${seed}`).toBe(requests);
      expect(r.limited, `seed ${seed}`).toBe(0);
      // The budget needs requests / limit windows; the first ones are spent timing the window.
      expect(r.ms, `seed ${seed}`).toBeLessThan(1.25 * (requests / limit) * windowMs + 2 * windowMs);
    }
  });
});
