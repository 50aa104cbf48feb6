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
