// How long a walk still takes, from the work it still has and the pace each bucket's budget
// allows: never from the bar's recent speed, which knows nothing of a window about to run dry
// or of the follow-ups a token list is about to plan.
//
// Per bucket: the requests still needed (its jobs queued and running; a job makes one request,
// or none when its marker says nothing changed) go as the budget lets them: what is left of
// the current window at once, then `limit` per window from the window's refill on. Answers
// take time too: `concurrency` at once, each as long as the bucket's answers took so far.
// Buckets run side by side, so the walk ends with its slowest bucket. The figure is a lower
// bound (shown `≥`) while jobs that plan more work are still queued or running, or while a
// bucket's window is not known yet.
import type { BucketStatus } from '../upstream/index.ts';

export interface BucketWork {
  bucket: string;
  /** Requests still needed: the bucket's jobs queued and running. */
  needed: number;
  /** The bucket's budget now; absent: nothing known of it yet. */
  status?: BucketStatus | undefined;
  /** The mean time of the bucket's answers so far; absent: none yet. */
  meanRequestMs?: number | undefined;
}

export interface Eta {
  ms: number;
  /** The walk takes at least `ms`: it may still plan work, or a bucket's pace is not fully known. */
  lowerBound: boolean;
  /** The bucket that takes longest. */
  bucket: string | undefined;
}

/** The part of a bucket's budget an ETA needs. */
export interface BudgetPace {
  /** Requests the current window still allows. */
  free: number;
  /** Requests per window. */
  limit: number;
  /** From one window's refill to the next. */
  cycleMs: number;
  /** Until the current window's refill. */
  refillInMs: number;
}

/** Pure: how long `needed` requests wait for budget: `free` go now, then `limit` per cycle from the refill on. */
export function budgetMs(needed: number, pace: BudgetPace): number {
  if (needed <= pace.free) return 0;
  const windows = Math.ceil((needed - pace.free) / Math.max(1, pace.limit));
  return pace.refillInMs + (windows - 1) * pace.cycleMs;
}

/** Pure: how long `needed` requests take to be answered, `concurrency` at once, each `meanMs`. */
export function answerMs(needed: number, concurrency: number, meanMs: number): number {
  return Math.ceil(needed / Math.max(1, concurrency)) * meanMs;
}

/** Pure: one bucket's time; `ms` undefined when its budget is not known at all yet. `known` false: at least this. */
export function bucketEta(work: BucketWork, concurrency: number): { ms: number | undefined; known: boolean } {
  if (work.needed <= 0) return { ms: 0, known: true };
  const answers = work.meanRequestMs === undefined ? 0 : answerMs(work.needed, concurrency, work.meanRequestMs);
  const s = work.status;
  if (s?.mode === 'unmetered') return { ms: answers, known: work.meanRequestMs !== undefined };
  if (!s || s.limit === undefined) return { ms: work.meanRequestMs === undefined ? undefined : answers, known: false };
  // Requests in flight hold their slots already: they are among those needed and not among the free.
  const toGrant = Math.max(0, work.needed - s.inFlight);
  const free = s.mode === 'metered' ? Math.max(0, (s.remaining ?? 0) - s.inFlight) : 0;
  const cycleMs = s.cycleMs ?? 0;
  const refillInMs = s.refillInMs ?? cycleMs;
  const budget = budgetMs(toGrant, { free, limit: s.limit, cycleMs, refillInMs });
  return { ms: Math.max(budget, answers), known: s.windowKnown && s.cycleMs !== undefined };
}

/** Pure: the walk's ETA, the slowest of its buckets; undefined while nothing is known of any bucket that has work. */
export function walkEta(work: readonly BucketWork[], concurrency: number, stillPlanning: boolean): Eta | undefined {
  let ms: number | undefined;
  let bucket: string | undefined;
  let lowerBound = stillPlanning;
  for (const w of work) {
    const e = bucketEta(w, concurrency);
    if (!e.known) lowerBound = true;
    if (e.ms !== undefined && (ms === undefined || e.ms > ms)) {
      ms = e.ms;
      bucket = w.needed > 0 ? w.bucket : bucket;
    }
  }
  if (ms === undefined) return work.some((w) => w.needed > 0) ? undefined : { ms: 0, lowerBound, bucket: undefined };
  return { ms, lowerBound, bucket };
}

/** `12s`, `4m05s`, `2h05m`: whole seconds, rounded up (an ETA of 0.2 s is `1s`, not `0s`). */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  if (total < 60) return `${total}s`;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : `${m}m${String(s).padStart(2, '0')}s`;
}

/** `ETA ≥4m05s`, `ETA 12s`, `ETA …` (nothing known yet). */
export function formatEta(eta: Eta | undefined): string {
  if (!eta) return 'ETA …';
  return `ETA ${eta.lowerBound ? '≥' : ''}${formatDuration(eta.ms)}`;
}
