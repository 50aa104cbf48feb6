import { describe, expect, it } from 'vitest';
import { decide, DEFAULT_BUDGET_POLICY, initialBucketState, jitterFor, observe, type BucketState } from '../../../src/upstream/budget-state.ts';

const P = { ...DEFAULT_BUDGET_POLICY, probeConcurrency: 1, resetMarginMs: 100, unknownResetProbeMs: 1000 };
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

  it('a later, shorter 429 never shortens a block', () => {
    let s = observe(initialBucketState(), { status: 429, blockedUntilMs: T + 5000, granted: false }, T);
    s = observe(s, { status: 429, blockedUntilMs: T + 1000, granted: false }, T);
    expect(s.blockedUntilMs).toBe(T + 5000);
  });

  it('remaining 0 without a reset re-probes after a while', () => {
    const s = observe(grant(initialBucketState()), { status: 200, remaining: 0, sentAtMs: T }, T);
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
  /** The app host: X-RateLimit-Remaining on successes, Retry-After on a 429, nothing else. */
  function exhaust(s: BucketState, at: number): BucketState {
    return observe(grant(s, at), { status: 200, remaining: 0, sentAtMs: at }, at + 5);
  }

  it('learns the length from the window opener and the 429 that ends it, then waits for the next end', () => {
    const W = 60_000;
    // Window 1 opens with our first request; we spend it.
    let s = observe(grant(initialBucketState()), { status: 200, remaining: 2, sentAtMs: T }, T + 5);
    expect(s.windowFromMs).toBe(T);
    s = exhaust(s, T + 10);
    // Nothing learned yet: the probe goes out a while later and meets the 429.
    let d = decide(s, T + 20, P);
    expect(d).toMatchObject({ grant: false, reason: 'budget exhausted, reset unknown' });
    s = grant(s, T + 20 + P.unknownResetProbeMs);
    s = observe(s, { status: 429, blockedUntilMs: T + W, resetAtMs: T + W, sentAtMs: T + 1020 }, T + 1025);
    expect(s.windowMs).toBe(W);
    expect(s.windowFromMs).toBeUndefined();

    // Window 2 opens with the probe after the block; when it runs dry, the wait is to its end.
    const open2 = T + W + 3;
    s = observe(grant(s, open2), { status: 200, remaining: 5, sentAtMs: open2 }, open2 + 5);
    expect(s.windowFromMs).toBe(open2);
    s = exhaust(s, open2 + 100);
    d = decide(s, open2 + 200, P);
    expect(d).toMatchObject({ grant: false, untilMs: open2 + W + P.resetMarginMs, reason: 'budget exhausted until the learned window ends' });
    // No probe before then: the 429 that taught us is the only one.
    expect(decide(s, open2 + W + P.resetMarginMs - 1, P).grant).toBe(false);
    expect(decide(s, open2 + W + P.resetMarginMs, P).grant).toBe(true);
  });

  it('a count higher than the last one means a new window opened', () => {
    let s = observe(grant(initialBucketState()), { status: 200, remaining: 3, sentAtMs: T }, T + 5);
    s = observe(grant(s, T + 10), { status: 200, remaining: 2, sentAtMs: T + 10 }, T + 15);
    expect(s.windowFromMs).toBe(T);
    s = observe(grant(s, T + 900), { status: 200, remaining: 9, sentAtMs: T + 900 }, T + 905);
    expect(s.windowFromMs).toBe(T + 900);
  });

  it('a 429 whose wait is a backoff guess teaches nothing, and a window longer than an hour is not believed', () => {
    let s = observe(grant(initialBucketState()), { status: 200, remaining: 0, sentAtMs: T }, T + 5);
    s = observe(grant(s, T + 2000), { status: 429, blockedUntilMs: T + 4000, sentAtMs: T + 2000 }, T + 2005);
    expect(s.windowMs).toBeUndefined();
    s = observe(grant(s, T + 4000), { status: 200, remaining: 0, sentAtMs: T + 4000 }, T + 4005);
    const end = T + 4000 + 2 * 3600_000;
    s = observe(grant(s, T + 6000), { status: 429, blockedUntilMs: end, resetAtMs: end, sentAtMs: T + 6000 }, T + 6005);
    expect(s.windowMs).toBeUndefined();
  });

  it('a reset header, when sent, wins over a learned window', () => {
    const s: BucketState = { ...initialBucketState(), mode: 'metered', remaining: 0, resetAtMs: T + 500, observedAtMs: T, windowMs: 60_000, windowFromMs: T };
    expect(decide(s, T + 1, P)).toMatchObject({ grant: false, untilMs: T + 500 + P.resetMarginMs });
  });
});
