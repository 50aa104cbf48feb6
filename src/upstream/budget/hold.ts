// What a response tells the rate budget of its bucket, as a pure function of its status and
// rate-limit headers: the observation to fold in, and how long it holds the bucket for every
// caller (a 429's wait, or any other response's Retry-After).
import { backoffDelay } from '../backoff.ts';
import type { Observation } from './budget-state.ts';
import type { RateLimitHeaders } from './rate-limit-headers.ts';
import type { RetryPolicy } from '../retry-policy.ts';

export interface HoldInput {
  status: number;
  headers: RateLimitHeaders;
  /** When the status and headers arrived (local clock): a stated wait counts from then. */
  receivedAtMs: number;
  sentAtMs: number;
  /** 429s this request has had so far, this one included: its backoff step when upstream said no wait. */
  rateLimitHits: number;
  policy: Pick<RetryPolicy, 'rateLimitBaseDelayMs' | 'rateLimitMaxDelayMs'>;
  /** Draws in [0, 1) for the backoff's jitter; drawn only when the backoff is used. */
  random: () => number;
}

/** The observation, and the hold (undefined when the response holds nothing). */
export function holdOf(h: HoldInput): { observation: Observation; heldMs: number | undefined } {
  const rl = h.headers;
  const counts = { remaining: rl.remaining ?? undefined, limit: rl.limit ?? undefined, sentAtMs: h.sentAtMs };
  if (h.status === 429) {
    const exhausted = rl.remaining === null || rl.remaining === 0;
    const saidMs = rl.retryAfterMs ?? (exhausted && rl.resetAtMs !== null && rl.resetAtMs > h.receivedAtMs ? rl.resetAtMs - h.receivedAtMs : null);
    const waitMs = saidMs ?? backoffDelay(h.rateLimitHits, { baseDelayMs: h.policy.rateLimitBaseDelayMs, maxDelayMs: h.policy.rateLimitMaxDelayMs }, h.random());
    // Only a wait upstream stated marks the window's end (the budget learns its length).
    const observation = { status: 429, blockedUntilMs: h.receivedAtMs + waitMs, resetAtMs: saidMs === null ? undefined : h.receivedAtMs + saidMs, ...counts };
    return { observation, heldMs: waitMs };
  }
  if (rl.retryAfterMs !== null) {
    // Not a rate window's end (a maintenance window, an overload): it holds the bucket and
    // says nothing of the window's length, so no reset goes with it.
    return { observation: { status: h.status, blockedUntilMs: h.receivedAtMs + rl.retryAfterMs, ...counts }, heldMs: rl.retryAfterMs };
  }
  return { observation: { status: h.status, resetAtMs: rl.resetAtMs ?? undefined, ...counts }, heldMs: undefined };
}
