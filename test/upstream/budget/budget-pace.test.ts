// The pace a bucket's budget allows (BucketStatus.windowMs, cycleMs, refillInMs), as the ETA
// of progress reads it.
import { describe, expect, it } from 'vitest';
import { decide, DEFAULT_BUDGET_POLICY, initialBucketState, observe, paceOf, type BucketState } from '../../../src/upstream/budget/budget-state.ts';
import { holdOf } from '../../../src/upstream/budget/hold.ts';
import { readRateLimitHeaders } from '../../../src/upstream/budget/rate-limit-headers.ts';
import { DEFAULT_RETRY_POLICY } from '../../../src/upstream/retry-policy.ts';

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

/** The same budget (3 left of 30, then none, 10 s to the reset) in each spelling a response may carry it. */
const SPELLINGS: [string, (remaining: number) => Record<string, string>][] = [
  ['X-RateLimit-*', (r) => ({ 'x-ratelimit-limit': '30', 'x-ratelimit-remaining': String(r), 'x-ratelimit-reset': '10' })],
  ['RateLimit-Policy / RateLimit', (r) => ({ 'ratelimit-policy': '"default";q=30;w=10', ratelimit: `"default";r=${r};t=10` })],
  ['RateLimit (draft 07)', (r) => ({ ratelimit: `limit=30, remaining=${r}, reset=10` })],
  ['RateLimit-Limit / -Remaining / -Reset', (r) => ({ 'ratelimit-limit': '30', 'ratelimit-remaining': String(r), 'ratelimit-reset': '10' })],
];

describe.each(SPELLINGS)('a budget announced as %s', (_name, fields) => {
  /** A response's headers through the path the client takes: read, hold, observed. */
  const answer = (s: BucketState, remaining: number, sentAtMs: number, at: number) => {
    const headers = readRateLimitHeaders(new Headers(fields(remaining)), at);
    const { observation } = holdOf({ status: 200, headers, receivedAtMs: at, sentAtMs, rateLimitHits: 0, policy: DEFAULT_RETRY_POLICY, random: () => 0 });
    return observe(s, observation, at);
  };

  it('paces: grants what is left, nothing once it is 0, until the reset and its margin', () => {
    let s: BucketState = { ...initialBucketState(), inFlight: 1 };
    s = answer(s, 3, T, T + 50);
    expect(s).toMatchObject({ mode: 'metered', remaining: 3, limit: 30, resetAtMs: T + 50 + 10_000 });
    expect(paceOf(s, T + 100, policy)).toMatchObject({ windowMs: 10_050, windowKnown: true });
    // Three go, the fourth waits for an answer.
    for (let i = 0; i < 3; i++) {
      const d = decide(s, T + 100, policy);
      expect(d.grant).toBe(true);
      s = d.state;
    }
    expect(decide(s, T + 100, policy).grant).toBe(false);
    // The answer that says none is left: nothing goes until the reset (plus the margin).
    s = answer(s, 0, T + 100, T + 200);
    s = { ...s, inFlight: 0 };
    const held = decide(s, T + 300, policy);
    expect(held).toMatchObject({ grant: false, untilMs: T + 200 + 10_000 + policy.resetMarginMs, reason: 'budget exhausted until reset' });
    expect(decide(s, T + 200 + 10_000 + policy.resetMarginMs - 1, policy).grant).toBe(false);
    expect(decide(s, T + 200 + 10_000 + policy.resetMarginMs, policy).grant).toBe(true);
  });
});
