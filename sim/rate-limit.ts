// Fixed-window budgets per bucket. A window starts with the first request of its key (not at
// a wall-clock boundary) so tests that exhaust a budget see the full window, not a random rest.
//
// The budget is announced in one of three spellings (`budgetHeaders`): the seeds'
// X-RateLimit-*, or only the IETF fields, for a client that must read those to pace.
import type { BucketLimit, RateLimitFields, RateLimitOptions } from './types.ts';

export type LimitedBucket = 'app-public' | 'app-key' | 'gateway';

/** "unlimited" still answers with headers, just with a budget no test reaches */
const UNLIMITED: BucketLimit = { limit: 1_000_000, windowMs: 60_000 };

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** ms timestamp when the current window ends */
  resetAt: number;
  windowMs: number;
  /** counted after the window's remaining had reached 0 (an earlier answer announced it) */
  intoExhausted: boolean;
}

export const RATE_LIMIT_FIELDS: readonly RateLimitFields[] = ['x-ratelimit', 'ietf', 'ietf-legacy'];

export function rateLimitFieldsOption(value: RateLimitFields | undefined): RateLimitFields {
  if (value === undefined) return 'x-ratelimit';
  if (!RATE_LIMIT_FIELDS.includes(value)) throw new RangeError(`rateLimitFields must be one of ${RATE_LIMIT_FIELDS.join(', ')}, not ${JSON.stringify(value)}`);
  return value;
}

export class RateLimiter {
  private limits: Record<LimitedBucket, BucketLimit> = { 'app-public': UNLIMITED, 'app-key': UNLIMITED, gateway: UNLIMITED };
  private readonly windows = new Map<string, { start: number; count: number; exhausted: boolean }>();

  constructor(options?: RateLimitOptions) {
    this.configure(options);
  }

  /** replaces every limit and forgets the current windows */
  configure(options: RateLimitOptions | undefined): void {
    this.limits = {
      'app-public': options?.appPublic ?? UNLIMITED,
      'app-key': options?.appKey ?? UNLIMITED,
      gateway: options?.gateway ?? UNLIMITED,
    };
    this.windows.clear();
  }

  /** counts one request against the bucket key */
  take(bucket: LimitedBucket, key: string, now: number): LimitDecision {
    return this.decide(bucket, key, now, true);
  }

  /** the bucket's state without counting (for scripted answers) */
  peek(bucket: LimitedBucket, key: string, now: number): LimitDecision {
    return this.decide(bucket, key, now, false);
  }

  private decide(bucket: LimitedBucket, key: string, now: number, count: boolean): LimitDecision {
    const { limit, windowMs } = this.limits[bucket];
    const id = `${bucket}\u0000${key}`;
    let w = this.windows.get(id);
    if (!w || now >= w.start + windowMs) {
      w = { start: now, count: 0, exhausted: false };
      if (count) this.windows.set(id, w);
    }
    const intoExhausted = count && w.exhausted;
    if (count) w.count += 1;
    const remaining = Math.max(0, limit - w.count);
    if (count && remaining === 0) w.exhausted = true;
    return { allowed: w.count <= limit, limit, remaining, resetAt: w.start + windowMs, windowMs, intoExhausted };
  }
}

/** whole seconds until the window resets: rounded up, at least 1 */
export function secondsUntil(resetAt: number, now: number): number {
  return Math.max(1, Math.ceil((resetAt - now) / 1000));
}

/** Retry-After as delta-seconds or as an HTTP-date on the (possibly skewed) server clock */
export function retryAfterValue(form: 'seconds' | 'http-date', resetAt: number, now: number, skewMs: number): string {
  const seconds = secondsUntil(resetAt, now);
  if (form === 'seconds') return String(seconds);
  // an HTTP-date has whole seconds: round the instant up so the wait is never cut short
  return new Date(Math.ceil((now + skewMs) / 1000) * 1000 + seconds * 1000).toUTCString();
}

/** gateway X-RateLimit-Reset as delta-seconds or as epoch seconds of the reset instant */
export function resetValue(form: 'delta' | 'epoch', resetAt: number, now: number, skewMs: number): string {
  const seconds = secondsUntil(resetAt, now);
  return form === 'delta' ? String(seconds) : String(Math.ceil((now + skewMs) / 1000) + seconds);
}

/**
 * The budget's headers in one spelling. The app host's X-RateLimit-* is the remaining count
 * alone (as the seeds document it); a host that speaks the IETF fields states its whole
 * policy, as servers implementing those drafts do: the quota, the window, and the seconds to
 * its reset (`t` is delta-seconds by the draft; RateLimit-Reset follows `resetForm`).
 */
export function budgetHeaders(fields: RateLimitFields, api: 'app' | 'gateway', bucket: LimitedBucket, d: LimitDecision, now: number, skewMs: number, resetForm: 'delta' | 'epoch'): Record<string, string> {
  if (fields === 'ietf') {
    const name = JSON.stringify(bucket);
    return {
      'RateLimit-Policy': `${name};q=${d.limit};w=${Math.max(1, Math.ceil(d.windowMs / 1000))}`,
      RateLimit: `${name};r=${d.remaining};t=${secondsUntil(d.resetAt, now)}`,
    };
  }
  if (fields === 'ietf-legacy') {
    return { 'RateLimit-Limit': String(d.limit), 'RateLimit-Remaining': String(d.remaining), 'RateLimit-Reset': resetValue(resetForm, d.resetAt, now, skewMs) };
  }
  if (api === 'app') return { 'X-RateLimit-Remaining': String(d.remaining) };
  return { 'X-RateLimit-Limit': String(d.limit), 'X-RateLimit-Remaining': String(d.remaining), 'X-RateLimit-Reset': resetValue(resetForm, d.resetAt, now, skewMs) };
}
