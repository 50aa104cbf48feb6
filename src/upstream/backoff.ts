// Exponential backoff with jitter, as a pure function of the attempt and a random draw.

export interface BackoffPolicy {
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * Delay before retry number `n` (1-based): "equal jitter", half fixed and half random, so
 * retries spread out yet never come back sooner than half the exponential step.
 */
export function backoffDelay(n: number, policy: BackoffPolicy, random: number): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, n - 1));
  return Math.round(step / 2 + (step / 2) * random);
}
