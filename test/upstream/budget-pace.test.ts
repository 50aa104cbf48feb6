// The pace a bucket's budget allows (BucketStatus.windowMs, cycleMs, refillInMs), as the ETA
// of progress reads it.
import { describe, expect, it } from 'vitest';
import { DEFAULT_BUDGET_POLICY, initialBucketState, observe, paceOf, type BucketState } from '../../src/ports/budget-state.ts';

const policy = DEFAULT_BUDGET_POLICY;
const T = 1_000_000;

describe('the pace of a bucket', () => {
  it('knows nothing before an answer', () => {
    expect(paceOf(initialBucketState(), T, policy)).toMatchObject({ windowKnown: false, refillInMs: undefined });
  });

  it('a reset time gives the window, counted from its first request; the refill waits the margin past it', () => {
    let s: BucketState = { ...initialBucketState(), inFlight: 1 };
    s = observe(s, { status: 200, remaining: 29, limit: 30, resetAtMs: T + 10_000, sentAtMs: T }, T + 50);
    expect(paceOf(s, T + 4_000, policy)).toEqual({ windowMs: 10_000, windowKnown: true, cycleMs: 11_000, refillInMs: 10_000 + 1_000 - 4_000 });
    // Past the refill: it may be now.
    expect(paceOf(s, T + 20_000, policy).refillInMs).toBe(0);
  });

  it('without a reset time the window is the next common length until it is learned', () => {
    let s: BucketState = { ...initialBucketState(), inFlight: 1 };
    s = observe(s, { status: 200, remaining: 29, limit: 30, sentAtMs: T }, T + 50);
    // Nothing bounds it yet: the ladder's first rung (1 s) and a tenth of it as margin.
    expect(paceOf(s, T + 100, policy)).toMatchObject({ windowMs: 1_000, windowKnown: false, cycleMs: 1_100 });
    // Learned to within the margins: known.
    const learned = { ...s, windowLoMs: 59_500, windowHiMs: 60_000, windowFromMs: T };
    expect(paceOf(learned, T + 30_000, policy)).toEqual({ windowMs: 60_000, windowKnown: true, cycleMs: 61_000, refillInMs: 31_000 });
    // Bounded above only loosely: the budget waits for the bound, but it is not known.
    expect(paceOf({ ...learned, windowLoMs: 10_000 }, T + 30_000, policy)).toMatchObject({ windowMs: 60_000, windowKnown: false });
  });

  it('a Retry-After holds the refill until its end', () => {
    let s: BucketState = { ...initialBucketState(), inFlight: 1 };
    s = observe(s, { status: 429, limit: 30, blockedUntilMs: T + 7_000, resetAtMs: T + 7_000 }, T);
    expect(paceOf(s, T + 2_000, policy).refillInMs).toBe(5_000);
  });

  it('an unmetered bucket has no window', () => {
    let s: BucketState = { ...initialBucketState(), inFlight: 1 };
    s = observe(s, { status: 200, sentAtMs: T }, T + 50);
    expect(s.mode).toBe('unmetered');
    expect(paceOf(s, T + 100, policy)).toEqual({ windowMs: undefined, windowKnown: false, cycleMs: undefined, refillInMs: undefined });
  });
});
