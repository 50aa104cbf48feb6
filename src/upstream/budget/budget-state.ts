// The rate budget of one bucket as pure state transitions: the only place its policy is
// written. budget.ts runs them against a store (memory for `tesync sync`, Redis shared by
// worker processes) on the store's clock.
//
// Modes:
//   unknown    nothing trustworthy known (start, after a 429 block, after a window reset):
//              only `probeConcurrency` requests go, their responses teach us the budget.
//   metered    upstream sends X-RateLimit-Remaining: grant while remaining - inFlight > 0.
//   unmetered  a success came back without rate-limit headers: no pacing beyond 429s.
//
// Responses arrive out of order, so an observation only replaces the state when its request
// was sent after the state's own observation arrived (it was served later). Otherwise it
// can only lower `remaining` (a stale, higher count must never raise the budget); when it
// does, it becomes the state's observation, since requests sent before it arrived may have
// been served before it, and their higher counts must not read as a refill.
//
// A host that sends X-RateLimit-Remaining but no reset time (the app host) still has a
// window. Its length is learned as an interval (windowLoMs, windowHiMs], counted from the
// window's opening (windowFromMs, the send time of its first request): an answer in the same
// window proves it longer than its request's elapsed time; an answer showing a refill (a
// count not below the last one, as every request counts; or any answer once the window ran
// dry) proves it no longer than the time that answer arrived; a 429 that states the window's
// end gives the length itself (one whose X-RateLimit-Remaining says requests are left does
// not). Waiting for that 429 would cost one per bucket, so while the interval is wider than
// 2 * resetMarginMs, the last `probeReserve` requests of each window go one at a time at chosen instants: where the next common window length
// (WINDOW_LADDER_MS) would end, or, once bounded above, the interval's middle. Each is a
// useful request that either spends budget the window still has (raising the lower bound) or
// shows the refill (lowering the upper one), so none is sent into a window that ran dry
// while the reserve lasts. A dry window waits for the upper bound, else for the next common
// length, and probes once: only a window longer than every length the reserve could try
// still meets a 429 (which then gives the length).

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
  /** The upstream's rate window (hosts that send no reset time) is longer than this. */
  windowLoMs: number | undefined;
  /** ... and no longer than this (both equal: the length a 429 stated). */
  windowHiMs: number | undefined;
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
  /** Remaining is 0, upstream gave no reset and no window length is left to try: probe again this long after the last observation. */
  unknownResetProbeMs: number;
  /** Waiters for a time add up to min(jitterMaxMs, jitterFraction * wait) of random delay. */
  jitterMaxMs: number;
  jitterFraction: number;
  /** Longest a waiter sleeps before looking at the state again (a change also wakes it). */
  pollMs: number;
  /**
   * While a window without a reset time is not known to within 2 * resetMarginMs, its last
   * this many requests go one at a time, at the instants that time it: the more of them, the
   * longer the windows that are learned without a 429 (docs/performance.md).
   */
  probeReserve: number;
}

export const DEFAULT_BUDGET_POLICY: BudgetPolicy = {
  probeConcurrency: 1,
  resetMarginMs: 1000,
  unknownResetProbeMs: 1000,
  jitterMaxMs: 500,
  jitterFraction: 0.1,
  pollMs: 1000,
  probeReserve: 8,
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
    windowLoMs: undefined,
    windowHiMs: undefined,
    windowFromMs: undefined,
  };
}

/** Longest window believed: a stale window start must not turn into a wait of hours. */
export const MAX_LEARNED_WINDOW_MS = 3600_000;

/** Common window lengths, tried in turn while nothing bounds the window from above. */
export const WINDOW_LADDER_MS: readonly number[] = [1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600].map((s) => s * 1000);

export const RESERVE_REASON = 'keeping a reserve to time the window';

/** Forget what we knew of the budget: the next requests are probes, and answers to requests sent before now are stale. */
function toUnknown(s: BucketState, nowMs: number): BucketState {
  return { ...s, mode: 'unknown', remaining: undefined, resetAtMs: undefined, observedAtMs: nowMs };
}

/** Why a bucket waits after its store lost writes (afterLostWrites). */
export const LOST_WRITES_REASON = 'the budget store may have lost its latest writes (a failover): waiting out the window they metered';

/**
 * The state to go on from when the store may have lost its latest writes (a Redis Cluster's
 * failover promotes a replica that had not received them all): the stored state may be older,
 * so more generous, than the one the holders last acted on, and the lost writes may have spent
 * the window to its end. Nothing of the budget is trusted then: the window that either the
 * store or this holder (`known`, the state it last read or wrote) was metering is waited out
 * as if it had run dry, and then, as at start, the next request is a probe, answers to
 * requests sent before now are stale (they cannot raise it), and the window is timed afresh
 * from the probe. No block that either held is dropped.
 */
export function afterLostWrites(stored: BucketState, known: BucketState | undefined, nowMs: number, policy: BudgetPolicy = DEFAULT_BUDGET_POLICY): BucketState {
  const holds = [stored, known].flatMap((s) => (s ? [{ until: s.blockedUntilMs, reason: s.blockReason }] : []));
  for (const s of [stored, known]) if (s?.mode === 'metered') holds.push({ until: exhaustedUntil(s, nowMs, policy).freshAt, reason: LOST_WRITES_REASON });
  const hold = holds.reduce((a, b) => (b.until > a.until ? b : a));
  return {
    ...toUnknown(stored, nowMs),
    blockedUntilMs: hold.until,
    blockReason: hold.reason,
    windowFromMs: undefined,
  };
}

/** Whether a request may go now; a grant reserves its slot (inFlight + 1). */
export function decide(s: BucketState, nowMs: number, policy: BudgetPolicy): Decision {
  if (nowMs < s.blockedUntilMs) {
    return { grant: false, state: s, untilMs: s.blockedUntilMs, reason: s.blockReason ?? 'retry-after' };
  }
  let state = s;
  if (state.mode === 'metered') {
    const left = (state.remaining ?? 0) - state.inFlight;
    if (left <= 0) {
      // Out of budget: wait for the reset, else the end of a learned window, else the next
      // likely end; then one probe (a 429 to it says when the window ends).
      const { freshAt, reason } = exhaustedUntil(state, nowMs, policy);
      if (nowMs < freshAt) return { grant: false, state, untilMs: freshAt, reason };
      // Answers still due were served in the old window: they must not read as the probe's.
      if (state.inFlight > 0) return { grant: false, state, untilMs: undefined, reason };
      state = toUnknown(state, nowMs);
    } else if (left <= policy.probeReserve) {
      const at = probeAt(state, policy);
      if (at !== undefined && state.inFlight > 0) return { grant: false, state, untilMs: undefined, reason: RESERVE_REASON };
      if (at !== undefined && nowMs < at) return { grant: false, state, untilMs: at, reason: RESERVE_REASON };
    }
  }
  if (state.mode === 'unknown' && state.inFlight >= policy.probeConcurrency) {
    return { grant: false, state, untilMs: undefined, reason: 'probing the budget' };
  }
  return { grant: true, state: { ...state, inFlight: state.inFlight + 1 } };
}

function exhaustedUntil(s: BucketState, nowMs: number, policy: BudgetPolicy): { freshAt: number; reason: string } {
  if (s.resetAtMs !== undefined) return { freshAt: s.resetAtMs + policy.resetMarginMs, reason: 'budget exhausted until reset' };
  if (s.windowHiMs !== undefined && s.windowFromMs !== undefined) {
    return { freshAt: s.windowFromMs + s.windowHiMs + windowMargin(s.windowHiMs, policy), reason: 'budget exhausted until the learned window ends' };
  }
  return { freshAt: ladderAt(s, policy) ?? (s.observedAtMs ?? nowMs) + policy.unknownResetProbeMs, reason: 'budget exhausted, reset unknown' };
}

/**
 * Slack after a window's end that we measured ourselves: it covers the opener being served
 * later than it was sent. At most a tenth of the window: resetMarginMs is sized for the
 * whole seconds of reset headers, and would cost a short window much of its rate (and put
 * the instant for one ladder rung exactly at the end of the next).
 */
function windowMargin(lengthMs: number, policy: BudgetPolicy): number {
  return Math.min(policy.resetMarginMs, Math.floor(lengthMs / 10));
}

/** Where the shortest common window longer than we know it to be would end. */
function ladderAt(s: BucketState, policy: BudgetPolicy): number | undefined {
  if (s.windowFromMs === undefined) return undefined;
  const lo = s.windowLoMs ?? 0;
  const rung = WINDOW_LADDER_MS.find((r) => r > lo);
  return rung === undefined ? undefined : s.windowFromMs + rung + windowMargin(rung, policy);
}

/** When the next request of the reserve may go; undefined: no reserve is kept (a reset time, or the window is known). */
function probeAt(s: BucketState, policy: BudgetPolicy): number | undefined {
  if (s.resetAtMs !== undefined || s.windowFromMs === undefined) return undefined;
  const lo = s.windowLoMs ?? 0;
  if (s.windowHiMs === undefined) return ladderAt(s, policy);
  if (s.windowHiMs - lo <= 2 * policy.resetMarginMs) return undefined;
  return s.windowFromMs + Math.floor((lo + s.windowHiMs) / 2);
}

function believable(ms: number): boolean {
  return ms > 0 && ms <= MAX_LEARNED_WINDOW_MS;
}

/** The window lasted longer than `ms`; a bound below that (from an earlier window) no longer holds. */
function longerThan(s: BucketState, ms: number): BucketState {
  if (!believable(ms)) return s;
  const lo = Math.max(s.windowLoMs ?? 0, ms);
  return { ...s, windowLoMs: lo, windowHiMs: s.windowHiMs !== undefined && s.windowHiMs < lo ? undefined : s.windowHiMs };
}

/** The window lasted at most `ms`; a lower bound above it gives way (waiting until `ms` is what is safe). */
function atMost(s: BucketState, ms: number): BucketState {
  if (!believable(ms)) return s;
  const hi = Math.min(s.windowHiMs ?? Number.POSITIVE_INFINITY, ms);
  return { ...s, windowHiMs: hi, windowLoMs: s.windowLoMs !== undefined && s.windowLoMs > hi ? hi : s.windowLoMs };
}

/** Folds a response (or its absence) into the state. */
export function observe(s: BucketState, obs: Observation, nowMs: number): BucketState {
  const inFlight = obs.granted === false ? s.inFlight : Math.max(0, s.inFlight - 1);
  const fresh = obs.sentAtMs === undefined || s.observedAtMs === undefined || obs.sentAtMs >= s.observedAtMs;
  let state: BucketState = { ...s, inFlight };

  if (obs.status === 429 || obs.blockedUntilMs !== undefined) {
    const until = Math.max(s.blockedUntilMs, obs.blockedUntilMs ?? nowMs);
    // A 429 that says requests are left (an overload, a burst limit) is not the window's end:
    // it holds the bucket for its Retry-After, and the window as known stays.
    if (obs.remaining !== undefined && obs.remaining > 0) return { ...state, blockedUntilMs: until, blockReason: 'retry-after' };
    // A 429 that says when the window ends, in a window whose opening we saw, measures it.
    const length = obs.resetAtMs !== undefined && s.windowFromMs !== undefined ? obs.resetAtMs - s.windowFromMs : undefined;
    const measured = length !== undefined && believable(length);
    return {
      ...toUnknown(state, nowMs),
      blockedUntilMs: until,
      blockReason: 'retry-after',
      limit: obs.limit ?? s.limit,
      windowLoMs: measured ? length : s.windowLoMs,
      windowHiMs: measured ? length : s.windowHiMs,
      // The next window opens with the first request after the block.
      windowFromMs: undefined,
    };
  }
  if (obs.status === null) return state;

  if (obs.remaining !== undefined) {
    if (fresh || state.mode === 'unmetered') {
      const sentAt = obs.sentAtMs ?? nowMs;
      // Every request counts, so one served later in the same window shows a lower count: a
      // count as high as the last one was served in a later window. So was any answer once a
      // window we saw open ran dry (unknown mode then keeps that opening).
      const refilled = state.mode === 'metered' ? obs.remaining >= (state.remaining ?? Number.POSITIVE_INFINITY) : state.mode === 'unknown' && state.windowFromMs !== undefined;
      const opened = state.mode !== 'metered' || refilled;
      if (state.windowFromMs !== undefined && refilled) state = atMost(state, nowMs - state.windowFromMs);
      else if (state.windowFromMs !== undefined && !opened) state = longerThan(state, sentAt - state.windowFromMs);
      const windowFromMs = opened ? sentAt : state.windowFromMs;
      state = { ...state, mode: 'metered', remaining: obs.remaining, resetAtMs: obs.resetAtMs, observedAtMs: nowMs, windowFromMs };
    } else if (state.mode === 'metered') {
      const resetAtMs = state.resetAtMs === undefined || obs.resetAtMs === undefined ? (state.resetAtMs ?? obs.resetAtMs) : Math.max(state.resetAtMs, obs.resetAtMs);
      state = { ...state, resetAtMs };
      // A lower count may have been served after requests sent before it arrived: their
      // higher counts must not read as a refill, so they become stale too.
      if (obs.remaining < (state.remaining ?? Number.POSITIVE_INFINITY)) state = { ...state, remaining: obs.remaining, observedAtMs: nowMs };
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
  /**
   * The rate window's length as far as known: `limit` requests per `windowMs`. From a reset
   * time (its end, counted from the window's first request), a 429 or the bounds learned;
   * else the common length the budget tries next (windowKnown false). Undefined: nothing yet.
   */
  windowMs: number | undefined;
  /** windowMs was stated by upstream or learned to within the margins, not a guess. */
  windowKnown: boolean;
  /** From one window's budget to the next as the budget paces them: the window and the margin it waits past its end. */
  cycleMs: number | undefined;
  /** How long until the bucket's budget is whole again (its window's end, a Retry-After's); 0: it may be now. */
  refillInMs: number | undefined;
}

/** Pure: how the budget paces a bucket (see BucketStatus), for ETAs and plain-words waits. */
export function paceOf(s: BucketState, nowMs: number, policy: BudgetPolicy): Pick<BucketStatus, 'windowMs' | 'windowKnown' | 'cycleMs' | 'refillInMs'> {
  let windowMs: number | undefined;
  let margin = 0;
  let windowKnown = false;
  if (s.resetAtMs !== undefined && s.windowFromMs !== undefined && believable(s.resetAtMs - s.windowFromMs)) {
    windowMs = s.resetAtMs - s.windowFromMs;
    margin = policy.resetMarginMs;
    windowKnown = true;
  } else if (s.windowHiMs !== undefined) {
    windowMs = s.windowHiMs;
    margin = windowMargin(windowMs, policy);
    windowKnown = s.windowHiMs - (s.windowLoMs ?? 0) <= 2 * policy.resetMarginMs;
  } else if (s.mode !== 'unmetered') {
    const lo = s.windowLoMs ?? 0;
    windowMs = WINDOW_LADDER_MS.find((r) => r > lo) ?? (lo > 0 ? lo : undefined);
    margin = windowMs === undefined ? 0 : windowMargin(windowMs, policy);
  }
  let refillAt: number | undefined;
  if (nowMs < s.blockedUntilMs) refillAt = s.blockedUntilMs;
  else if (s.resetAtMs !== undefined) refillAt = s.resetAtMs + policy.resetMarginMs;
  else if (s.windowFromMs !== undefined && windowMs !== undefined) refillAt = s.windowFromMs + windowMs + margin;
  return {
    windowMs,
    windowKnown,
    cycleMs: windowMs === undefined ? undefined : windowMs + margin,
    refillInMs: refillAt === undefined ? undefined : Math.max(0, refillAt - nowMs),
  };
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
    ...paceOf(s, nowMs, policy),
  };
}
