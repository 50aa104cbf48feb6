// Fixed-window budgets per bucket. A window starts with the first request of its key (not at
// a wall-clock boundary) so tests that exhaust a budget see the full window, not a random rest.
import type { BucketLimit, RateLimitOptions } from './types.ts';

export type LimitedBucket = 'app-public' | 'app-key' | 'gateway';

/** "unlimited" still answers with headers, just with a budget no test reaches */
const UNLIMITED: BucketLimit = { limit: 1_000_000, windowMs: 60_000 };

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** ms timestamp when the current window ends */
  resetAt: number;
}

export class RateLimiter {
  private limits: Record<LimitedBucket, BucketLimit> = { 'app-public': UNLIMITED, 'app-key': UNLIMITED, gateway: UNLIMITED };
  private readonly windows = new Map<string, { start: number; count: number }>();

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
      w = { start: now, count: 0 };
      if (count) this.windows.set(id, w);
    }
    if (count) w.count += 1;
    return { allowed: w.count <= limit, limit, remaining: Math.max(0, limit - w.count), resetAt: w.start + windowMs };
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
