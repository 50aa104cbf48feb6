import { describe, expect, it } from 'vitest';
import { answerMs, budgetMs, bucketEta, formatDuration, formatEta, walkEta } from '../../src/cli/eta.ts';
import type { BucketStatus } from '../../src/upstream/index.ts';

const status = (over: Partial<BucketStatus>): BucketStatus => ({
  bucket: 'gateway',
  mode: 'metered',
  remaining: 0,
  limit: 300,
  inFlight: 0,
  waiters: 0,
  waitingUntilMs: undefined,
  reason: undefined,
  windowMs: 60_000,
  windowKnown: true,
  cycleMs: 61_000,
  refillInMs: 20_000,
  ...over,
});

describe('the ETA arithmetic', () => {
  it('spends what the window has left at once, then a window of budget per cycle from the refill', () => {
    const pace = { free: 40, limit: 300, cycleMs: 61_000, refillInMs: 20_000 };
    expect(budgetMs(0, pace)).toBe(0);
    expect(budgetMs(40, pace)).toBe(0);
    // 41: one waits for the refill.
    expect(budgetMs(41, pace)).toBe(20_000);
    // 40 now, 300 at the refill.
    expect(budgetMs(340, pace)).toBe(20_000);
    // 40 now, 300 at the refill, 300 a cycle later, 1 a cycle after that.
    expect(budgetMs(641, pace)).toBe(20_000 + 2 * 61_000);
    expect(budgetMs(1000, { free: 0, limit: 100, cycleMs: 10_000, refillInMs: 0 })).toBe(9 * 10_000);
  });

  it('answers take their time, concurrency at once', () => {
    expect(answerMs(270, 4, 200)).toBe(68 * 200);
    expect(answerMs(3, 4, 200)).toBe(200);
    expect(answerMs(0, 4, 200)).toBe(0);
  });

  it('the issue: 270 requests at 300/min with 3 done is not `ETA 0s`', () => {
    // Budget enough for all of them: the answers set the pace, 4 at once, 150 ms each.
    const e = bucketEta({ bucket: 'app-public', needed: 267, status: status({ remaining: 297, refillInMs: 59_000 }), meanRequestMs: 150 }, 4);
    expect(e).toEqual({ ms: 67 * 150, known: true });
    // A window that allows fewer: the rest waits for the refill.
    const tight = bucketEta({ bucket: 'app-public', needed: 267, status: status({ remaining: 27, limit: 30, cycleMs: 11_000, refillInMs: 9_000 }), meanRequestMs: 150 }, 4);
    // 27 now, then 30 per 11 s: 240 more take 8 windows, the first at the refill.
    expect(tight).toEqual({ ms: 9_000 + 7 * 11_000, known: true });
  });

  it('requests in flight hold their slots: they are neither free nor still to be granted', () => {
    // 10 needed, 4 of them in flight; 6 left of the window, 4 of them held: 2 free, 4 wait for the refill.
    const e = bucketEta({ bucket: 'gateway', needed: 10, status: status({ remaining: 6, inFlight: 4, limit: 10, cycleMs: 11_000, refillInMs: 5_000 }) }, 4);
    expect(e.ms).toBe(5_000);
  });

  it('after a 429 the bucket waits for the Retry-After, then a window per cycle', () => {
    const e = bucketEta({ bucket: 'gateway', needed: 25, status: status({ mode: 'unknown', remaining: undefined, limit: 10, cycleMs: 11_000, refillInMs: 7_000 }) }, 4);
    expect(e).toEqual({ ms: 7_000 + 2 * 11_000, known: true });
  });

  it('a guessed window makes it a lower bound; nothing known of the budget makes it unknown', () => {
    expect(bucketEta({ bucket: 'app-public', needed: 50, status: status({ remaining: 10, limit: 30, windowKnown: false, cycleMs: 11_000, refillInMs: 3_000 }) }, 4)).toEqual({
      ms: 3_000 + 11_000,
      known: false,
    });
    expect(bucketEta({ bucket: 'app-public', needed: 5, status: status({ mode: 'unknown', limit: undefined, remaining: undefined }) }, 4)).toEqual({ ms: undefined, known: false });
    expect(bucketEta({ bucket: 'app-public', needed: 0 }, 4)).toEqual({ ms: 0, known: true });
  });

  it('an unmetered bucket goes at the pace of its answers', () => {
    expect(bucketEta({ bucket: 'gateway', needed: 8, status: status({ mode: 'unmetered', limit: undefined }), meanRequestMs: 100 }, 4)).toEqual({ ms: 200, known: true });
  });

  it('the walk ends with its slowest bucket, a lower bound while it may still plan work', () => {
    const work = [
      { bucket: 'app-public', needed: 100, status: status({ bucket: 'app-public', remaining: 0, limit: 30, cycleMs: 11_000, refillInMs: 2_000 }) },
      { bucket: 'gateway', needed: 10, status: status({ remaining: 100 }), meanRequestMs: 100 },
      { bucket: 'app-key', needed: 0 },
    ];
    // app-public: 100 at 30 per 11 s from a refill in 2 s: 4 windows.
    expect(walkEta(work, 4, false)).toEqual({ ms: 2_000 + 3 * 11_000, lowerBound: false, bucket: 'app-public' });
    expect(walkEta(work, 4, true)).toEqual({ ms: 2_000 + 3 * 11_000, lowerBound: true, bucket: 'app-public' });
    // A bucket with work whose budget is unknown: the others' time, at least.
    const unknown = [...work, { bucket: 'app-key', needed: 3, status: status({ bucket: 'app-key', mode: 'unknown', limit: undefined }) }];
    expect(walkEta(unknown, 4, false)).toMatchObject({ lowerBound: true, bucket: 'app-public' });
    // Nothing known of any bucket that has work: no figure at all.
    expect(walkEta([{ bucket: 'gateway', needed: 3 }], 4, true)).toBeUndefined();
    expect(walkEta([], 4, false)).toEqual({ ms: 0, lowerBound: false, bucket: undefined });
  });

  it('reads as whole seconds rounded up, `≥` for a lower bound', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(200)).toBe('1s');
    expect(formatDuration(59_001)).toBe('1m00s');
    expect(formatDuration(245_000)).toBe('4m05s');
    expect(formatDuration(7_500_000)).toBe('2h05m');
    expect(formatEta({ ms: 12_000, lowerBound: true, bucket: 'gateway' })).toBe('ETA ≥12s');
    expect(formatEta({ ms: 12_000, lowerBound: false, bucket: 'gateway' })).toBe('ETA 12s');
    expect(formatEta(undefined)).toBe('ETA …');
  });
});
