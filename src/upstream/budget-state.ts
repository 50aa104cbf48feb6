// The rate budget of one bucket as pure state transitions, so the in-process budget and a
// Redis-backed one (run under Redis time, in a script or a transaction) share one logic.
//
// Modes:
//   unknown    nothing trustworthy known (start, after a 429 block, after a window reset):
//              only `probeConcurrency` requests go, their responses teach us the budget.
//   metered    upstream sends X-RateLimit-Remaining: grant while remaining - inFlight > 0.
//   unmetered  a success came back without rate-limit headers: no pacing beyond 429s.
//
// Responses arrive out of order, so an observation only replaces the state when its request
// was sent after the state's own observation arrived (it was served later). Otherwise it
// can only lower `remaining` (a stale, higher count must never raise the budget).
//
// A host that sends X-RateLimit-Remaining but no reset time (the app host) still has a
// window. Its length is learned: the window opens with the first request after a reset
// (the probe) and a 429's Retry-After says when it ends. Once known, an exhausted budget
// waits for the predicted end instead of probing into another 429.

export type BucketMode = 'unknown' | 'metered' | 'unmetered';

export interface BucketState {
  mode: BucketMode;
  /** Requests granted whose response has not been observed yet. */
  inFlight: number;
  remaining: number | undefined;
  limit: number | undefined;
  resetAtMs: number | undefined;
  /** When the observation the state is based on arrived. */
  observedAtMs: number | undefined;
  /** No request before this (429 Retry-After). */
  blockedUntilMs: number;
  blockReason: string | undefined;
  /** Learned length of the upstream's rate window (hosts that send no reset time). */
  windowMs: number | undefined;
  /** When the current window opened, as far as we saw (the send time of its first request). */
  windowFromMs: number | undefined;
}

export interface BudgetPolicy {
  /** Requests allowed at once while the budget is unknown. */
  probeConcurrency: number;
  /**
   * Added to a reset time before the window is presumed fresh: X-RateLimit-Reset has
   * one-second resolution, and a server may round either way.
   */
  resetMarginMs: number;
  /** Remaining is 0 and upstream gave no reset: probe again this long after the last observation. */
  unknownResetProbeMs: number;
  /** Waiters for a time add up to min(jitterMaxMs, jitterFraction * wait) of random delay. */
  jitterMaxMs: number;
  jitterFraction: number;
  /** Longest a waiter sleeps before looking at the state again (a change also wakes it). */
  pollMs: number;
}

export const DEFAULT_BUDGET_POLICY: BudgetPolicy = {
  probeConcurrency: 1,
  resetMarginMs: 1000,
  unknownResetProbeMs: 1000,
  jitterMaxMs: 500,
  jitterFraction: 0.1,
  pollMs: 1000,
};

export interface Observation {
  /** HTTP status; null when no response arrived (network error, timeout, abort). */
  status: number | null;
  remaining?: number | undefined;
  limit?: number | undefined;
  /** When the window resets; on a 429, only when upstream said so (never a backoff guess). */
  resetAtMs?: number | undefined;
  /** Set on a 429: no request to the bucket before this. */
  blockedUntilMs?: number | undefined;
  /** When the observed request was sent; without it the observation is taken as fresh. */
  sentAtMs?: number | undefined;
  /** False for an observation that does not close a granted request (default true). */
  granted?: boolean;
}

export type Decision =
  | { grant: true; state: BucketState }
  /** untilMs undefined: wait for an observation (a probe is in flight). */
  | { grant: false; state: BucketState; untilMs: number | undefined; reason: string };

export function initialBucketState(): BucketState {
  return {
    mode: 'unknown',
    inFlight: 0,
    remaining: undefined,
    limit: undefined,
    resetAtMs: undefined,
    observedAtMs: undefined,
    blockedUntilMs: 0,
    blockReason: undefined,
    windowMs: undefined,
    windowFromMs: undefined,
  };
}

/** Longest window believed: a stale window start must not turn into a wait of hours. */
export const MAX_LEARNED_WINDOW_MS = 3600_000;

/** Forget what we knew of the window: the next requests are probes. */
function toUnknown(s: BucketState): BucketState {
  return { ...s, mode: 'unknown', remaining: undefined, resetAtMs: undefined };
}

/** Whether a request may go now; a grant reserves its slot (inFlight + 1). */
export function decide(s: BucketState, nowMs: number, policy: BudgetPolicy): Decision {
  if (nowMs < s.blockedUntilMs) {
    return { grant: false, state: s, untilMs: s.blockedUntilMs, reason: s.blockReason ?? 'retry-after' };
  }
  let state = s;
  if (state.mode === 'metered' && (state.remaining ?? 0) - state.inFlight <= 0) {
    // Out of budget: wait for the reset, else the end of a learned window, else re-probe
    // after a while (that probe's 429 says when the window ends).
    const { freshAt, reason } = exhaustedUntil(state, nowMs, policy);
    if (nowMs < freshAt) return { grant: false, state, untilMs: freshAt, reason };
    state = toUnknown(state);
  }
  if (state.mode === 'unknown' && state.inFlight >= policy.probeConcurrency) {
    return { grant: false, state, untilMs: undefined, reason: 'probing the budget' };
  }
  return { grant: true, state: { ...state, inFlight: state.inFlight + 1 } };
}

function exhaustedUntil(s: BucketState, nowMs: number, policy: BudgetPolicy): { freshAt: number; reason: string } {
  if (s.resetAtMs !== undefined) return { freshAt: s.resetAtMs + policy.resetMarginMs, reason: 'budget exhausted until reset' };
  if (s.windowMs !== undefined && s.windowFromMs !== undefined) {
    return { freshAt: s.windowFromMs + s.windowMs + policy.resetMarginMs, reason: 'budget exhausted until the learned window ends' };
  }
  return { freshAt: (s.observedAtMs ?? nowMs) + policy.unknownResetProbeMs, reason: 'budget exhausted, reset unknown' };
}

/** A 429 that says when the window ends, in a window whose opening we saw, measures it. */
function learnedWindow(s: BucketState, endsAtMs: number | undefined): number | undefined {
  if (endsAtMs === undefined || s.windowFromMs === undefined) return s.windowMs;
  const length = endsAtMs - s.windowFromMs;
  return length > 0 && length <= MAX_LEARNED_WINDOW_MS ? length : s.windowMs;
}

/** Folds a response (or its absence) into the state. */
export function observe(s: BucketState, obs: Observation, nowMs: number): BucketState {
  const inFlight = obs.granted === false ? s.inFlight : Math.max(0, s.inFlight - 1);
  const fresh = obs.sentAtMs === undefined || s.observedAtMs === undefined || obs.sentAtMs >= s.observedAtMs;
  let state: BucketState = { ...s, inFlight };

  if (obs.status === 429 || obs.blockedUntilMs !== undefined) {
    const until = Math.max(s.blockedUntilMs, obs.blockedUntilMs ?? nowMs);
    return {
      ...toUnknown(state),
      blockedUntilMs: until,
      blockReason: 'retry-after',
      observedAtMs: nowMs,
      limit: obs.limit ?? s.limit,
      // The next window opens with the first request after the block.
      windowMs: learnedWindow(s, obs.resetAtMs),
      windowFromMs: undefined,
    };
  }
  if (obs.status === null) return state;

  if (obs.remaining !== undefined) {
    if (fresh || state.mode === 'unmetered') {
      // A probe's answer, or a count higher than one served before it: a window opened.
      const opened = state.mode !== 'metered' || obs.remaining > (state.remaining ?? Number.POSITIVE_INFINITY);
      const windowFromMs = opened ? (obs.sentAtMs ?? nowMs) : state.windowFromMs;
      state = { ...state, mode: 'metered', remaining: obs.remaining, resetAtMs: obs.resetAtMs, observedAtMs: nowMs, windowFromMs };
    } else if (state.mode === 'metered') {
      const resetAtMs = state.resetAtMs === undefined || obs.resetAtMs === undefined ? (state.resetAtMs ?? obs.resetAtMs) : Math.max(state.resetAtMs, obs.resetAtMs);
      state = { ...state, remaining: Math.min(state.remaining ?? obs.remaining, obs.remaining), resetAtMs };
    }
    // A stale observation in unknown mode teaches nothing: the probe will.
    if (obs.limit !== undefined) state = { ...state, limit: obs.limit };
    return state;
  }
  // A fresh success without rate-limit headers: upstream does not meter this bucket.
  if (fresh && state.mode === 'unknown' && obs.status >= 200 && obs.status < 400) {
    return { ...state, mode: 'unmetered', observedAtMs: nowMs };
  }
  return state;
}

/** Random delay added to a timed wait so that waiters do not all fire at the same instant. */
export function jitterFor(waitMs: number, random: number, policy: BudgetPolicy): number {
  return Math.floor(random * Math.min(policy.jitterMaxMs, Math.max(0, waitMs) * policy.jitterFraction));
}

export interface BucketStatus {
  bucket: string;
  mode: BucketMode;
  remaining: number | undefined;
  limit: number | undefined;
  inFlight: number;
  waiters: number;
  /** When requests to the bucket may go again, if they are held back now. */
  waitingUntilMs: number | undefined;
  reason: string | undefined;
}

/** What a progress line shows for a bucket. */
export function describe(bucket: string, s: BucketState, nowMs: number, policy: BudgetPolicy, waiters: number): BucketStatus {
  const d = decide(s, nowMs, policy);
  return {
    bucket,
    mode: s.mode,
    remaining: s.remaining,
    limit: s.limit,
    inFlight: s.inFlight,
    waiters,
    waitingUntilMs: d.grant ? undefined : d.untilMs,
    reason: d.grant ? undefined : d.reason,
  };
}
