// How long a walk still takes: an estimate that says its error, from the work still planned and
// the pace measured.
//
// The work: each kind of job still to settle (queued or running), as long as the settled jobs
// of its kind took each (a history is not a chart); and the jobs the pending planners will
// still plan, as many as the settled planners of their kind planned each, as long as a job
// took on the whole. The pace: how many jobs ran at once, measured as the settled jobs' time
// per time passed over the last WINDOW_MS, counted only while jobs were waiting for a slot
// (while few jobs exist, as when only the token lists run, it is not the pace the rest will
// go at). On a busy machine the writes, not the requests, set it, and it is measured so.
// Its range is the error of each mean (±1/√n of the settled it was taken from) and of the pace
// (the jobs it was measured on, ±1/√n). While a planner of a kind none of which has settled is
// pending, what it plans is unknown: the estimate is then a lower bound (`≥`). Nothing
// measured yet: no figure (`ETA …`), rather than one that is surely wrong.
//
// The rate budget is the floor: the requests still needed cannot go faster than each bucket's
// budget lets them (what is left of the current window at once, then `limit` per window from
// the window's refill on; answers `concurrency` at once, each as long as the bucket's answers
// took so far), the walk ending with its slowest bucket.
import type { KindTally } from '../runners/in-process.ts';
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

/** What the rate budget allows: the least time the requests still needed take. */
export interface Pace {
  ms: number;
  /** The requests take at least `ms`: the walk may still plan work, or a bucket's pace is not fully known. */
  lowerBound: boolean;
  /** The bucket that takes longest. */
  bucket: string | undefined;
}

/** The estimate of a walk's time left. */
export interface Eta {
  /** The estimate itself. */
  ms: number;
  /** Its range: the rate's error and the planners' (lowMs ≤ ms ≤ highMs). */
  lowMs: number;
  highMs: number;
  /** More work may come than it counts (a pending planner of an unknown kind): the walk takes at least `lowMs`. */
  lowerBound: boolean;
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

/** Pure: the walk's pace by the budget, the slowest of its buckets; undefined while nothing is known of any bucket that has work. */
export function walkEta(work: readonly BucketWork[], concurrency: number, stillPlanning: boolean): Pace | undefined {
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

/** `ETA 15–24s`, `ETA 12s` (a range too narrow to show), `ETA ≥4m05s` (a lower bound), `ETA …` (nothing measured yet). */
export function formatEta(eta: Eta | undefined): string {
  if (!eta) return 'ETA …';
  if (eta.lowerBound) return `ETA ≥${formatDuration(eta.lowMs)}`;
  const low = formatDuration(eta.lowMs);
  const high = formatDuration(eta.highMs);
  if (low === high) return `ETA ${low}`;
  // Both in seconds: the unit once (`12–22s`).
  return /^\d+s$/.test(low) && /^\d+s$/.test(high) ? `ETA ${low.slice(0, -1)}–${high}` : `ETA ${low}–${high}`;
}

/** The span the pace is measured over. */
export const WINDOW_MS = 10_000;
/** Fewer settled jobs than this in the window measure no pace. */
export const MIN_SETTLED = 4;
/** The widest the pace's error is taken to be (±): beyond it, the range would say nothing. */
const MAX_PACE_ERROR = 0.5;

/** One look at a walk, for the estimate. */
export interface WalkObservation {
  /** Since the walk began (this process's clock: it only times the pace). */
  atMs: number;
  /** Jobs settled so far (done or failed). */
  settled: number;
  /** Jobs planned so far. */
  planned: number;
  /** Per kind of job: pending, settled, their time, what they planned (PendingWork.kinds). */
  kinds: Readonly<Record<string, KindTally>>;
  /** Some job waits for a slot: the pace measured from this look on is the walk's full pace. */
  busy: boolean;
  /** What the rate budget allows the requests still needed, when known. */
  pace?: Pace | undefined;
  /** A bucket's budget holds requests back now: its pace is the walk's, whatever else is measured. */
  held?: boolean | undefined;
}

/** What the estimate keeps of a look. */
type Kept = Pick<WalkObservation, 'atMs' | 'settled' | 'busy'> & { jobMs: number };

/** Pure: the settled jobs' time so far, all kinds. */
function jobMsOf(kinds: Readonly<Record<string, KindTally>>): number {
  return Object.values(kinds).reduce((sum, k) => sum + k.ms, 0);
}

/** Pure: what the pending planners will still plan: the expected jobs, their error (±), and whether some of it is unknown. */
export function stillToPlan(kinds: Readonly<Record<string, KindTally>>): { expected: number; error: number; unknown: boolean } {
  let expected = 0;
  let error = 0;
  let unknown = false;
  for (const k of Object.values(kinds)) {
    if (!k.planner || k.pending <= 0) continue;
    if (k.settled === 0) {
      unknown = true;
      continue;
    }
    const jobs = (k.pending * k.planned) / k.settled;
    expected += jobs;
    error += jobs / Math.sqrt(k.settled);
  }
  return { expected, error: Math.min(expected, error), unknown };
}

/** Pure: the job time still to spend (ms of one slot), and its error: each kind's pending at its mean, the jobs still to plan at the mean of all. */
export function workLeft(kinds: Readonly<Record<string, KindTally>>): { ms: number; error: number; unknown: boolean } {
  const all = Object.values(kinds);
  const settled = all.reduce((n, k) => n + k.settled, 0);
  const mean = settled > 0 ? jobMsOf(kinds) / settled : 0;
  let ms = 0;
  let error = 0;
  for (const k of all) {
    if (k.pending <= 0) continue;
    const own = k.settled > 0 ? k.ms / k.settled : mean;
    ms += k.pending * own;
    // A kind none of which has settled takes the mean of all, give or take all of it.
    error += k.pending * own * (k.settled > 0 ? 1 / Math.sqrt(k.settled) : 1);
  }
  const plan = stillToPlan(kinds);
  return { ms: ms + plan.expected * mean, error: Math.min(ms, error) + plan.error * mean, unknown: plan.unknown };
}

/** Pure: the estimate from the looks kept (oldest first) and the look now, as the header says. */
export function estimateEta(looks: readonly Kept[], now: WalkObservation): Eta | undefined {
  const floor = now.pace?.ms ?? 0;
  const work = workLeft(now.kinds);
  if (now.planned - now.settled <= 0 && work.ms === 0 && !work.unknown) return { ms: 0, lowMs: 0, highMs: 0, lowerBound: false };
  // The pace: job time per time passed, over the intervals that began with a job waiting for a slot.
  let spent = 0;
  let passed = 0;
  let settled = 0;
  const jobMs = jobMsOf(now.kinds);
  const kept = [...looks, { atMs: now.atMs, settled: now.settled, busy: now.busy, jobMs }];
  for (let i = 1; i < kept.length; i++) {
    const [a, b] = [kept[i - 1]!, kept[i]!];
    if (!a.busy) continue;
    spent += b.jobMs - a.jobMs;
    passed += b.atMs - a.atMs;
    settled += b.settled - a.settled;
  }
  // No pace yet: no figure, unless the budget holds the walk back now (then its floor is what
  // sets the pace, and the least it takes). A floor the budget does not enforce yet would be a
  // lower bound far below the truth: a walk's first seconds are its lists'.
  if (settled < MIN_SETTLED || passed <= 0 || spent <= 0) return now.held && floor > 0 ? { ms: floor, lowMs: floor, highMs: floor, lowerBound: true } : undefined;
  const atOnce = spent / passed;
  const paceError = Math.min(MAX_PACE_ERROR, 1 / Math.sqrt(settled));
  const ms = Math.max(floor, work.ms / atOnce);
  const lowMs = Math.max(floor, (work.ms - work.error) / (atOnce * (1 + paceError)));
  const highMs = Math.max(floor, (work.ms + work.error) / (atOnce * (1 - paceError)));
  return { ms, lowMs: Math.min(lowMs, ms), highMs: Math.max(highMs, ms), lowerBound: work.unknown };
}

/**
 * An estimator of a walk's time left, fed a look at a time (a few a second): keeps the looks of
 * the last WINDOW_MS (and the one just before it, so the window is whole) and estimates from
 * them (estimateEta).
 */
export function createEtaEstimator(): (look: WalkObservation) => Eta | undefined {
  const looks: Kept[] = [];
  return (look) => {
    const eta = estimateEta(looks, look);
    looks.push({ atMs: look.atMs, settled: look.settled, busy: look.busy, jobMs: jobMsOf(look.kinds) });
    while (looks.length > 1 && looks[0]!.atMs < look.atMs - WINDOW_MS) looks.shift();
    return eta;
  };
}
