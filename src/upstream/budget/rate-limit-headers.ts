// Pure parsing of rate-limit headers against a clock passed in. Upstream may send
// Retry-After as delta-seconds or an HTTP-date, a reset (X-RateLimit-Reset, RateLimit-Reset,
// the IETF `t`) as delta-seconds or epoch seconds. Dates are read relative to the response's
// own `Date` header when there is one, so a server whose clock is off from ours still gets the
// wait it asked for. Which spelling of the budget a response carries: rate-limit-fields.ts.
import { readRateLimitFields, xCount, type RateLimitForm } from './rate-limit-fields.ts';

/** No single wait is believed beyond this: a bogus header must not block a bucket for years. */
export const MAX_HEADER_WAIT_MS = 24 * 3600_000;

const SECONDS = /^\d+(\.\d+)?$/;

/** An HTTP-date (IMF-fixdate, RFC 850 or asctime) in ms, or null. */
export function parseHttpDate(value: string | null | undefined): number | null {
  if (!value) return null;
  const v = value.trim();
  // Date.parse accepts almost anything ("3" is a year): insist on a time of day and a name.
  if (!/\d{1,2}:\d{2}:\d{2}/.test(v) || !/[A-Za-z]{3}/.test(v)) return null;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * Milliseconds to wait from `nowMs`, or null meaning "not usable: fall back to backoff"
 * (absent, `0`, a past date, garbage). `serverDateMs` is the response's Date header.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number, serverDateMs?: number | null): number | null {
  if (value === null || value === undefined) return null;
  const v = value.trim();
  let ms: number;
  if (SECONDS.test(v)) {
    ms = Number(v) * 1000;
  } else {
    const at = parseHttpDate(v);
    if (at === null) return null;
    ms = at - (serverDateMs ?? nowMs);
  }
  if (!Number.isFinite(ms) || ms <= 0) return null;
  return Math.min(Math.ceil(ms), MAX_HEADER_WAIT_MS);
}

/**
 * When the rate window resets, as an absolute time on our clock, or null when unknown.
 * Values above 1e12 are epoch milliseconds, above 1e9 epoch seconds, else delta-seconds.
 */
export function parseReset(value: string | null | undefined, nowMs: number, serverDateMs?: number | null): number | null {
  if (value === null || value === undefined) return null;
  const v = value.trim();
  if (!SECONDS.test(v)) return null;
  const n = Number(v);
  let deltaMs: number;
  if (n > 1e12) deltaMs = n - (serverDateMs ?? nowMs);
  else if (n > 1e9) deltaMs = n * 1000 - (serverDateMs ?? nowMs);
  else deltaMs = n * 1000;
  // An epoch a little in the past (clock skew, second rounding) means "resets now".
  if (!Number.isFinite(deltaMs) || deltaMs < -5_000) return null;
  return nowMs + Math.min(Math.max(0, Math.ceil(deltaMs)), MAX_HEADER_WAIT_MS);
}

/** A non-negative integer count (X-RateLimit-Remaining / -Limit), or null. */
export function parseCount(value: string | null | undefined): number | null {
  // A structured Integer: its parameters ("19;w=2") tolerated, anything after it refused.
  return xCount(value);
}

export interface RateLimitHeaders {
  remaining: number | null;
  limit: number | null;
  /** Absolute, on our clock. */
  resetAtMs: number | null;
  /** The spelling the three above were read from (null: none announced a budget). */
  form: RateLimitForm | null;
  /** Wait from now, or null when absent or unusable. */
  retryAfterMs: number | null;
  serverDateMs: number | null;
}

type HeaderGetter = { get(name: string): string | null };

export function readRateLimitHeaders(headers: HeaderGetter, nowMs: number): RateLimitHeaders {
  const serverDateMs = parseHttpDate(headers.get('date'));
  const budget = readRateLimitFields(headers, (v) => parseReset(v, nowMs, serverDateMs));
  return {
    remaining: budget?.remaining ?? null,
    limit: budget?.limit ?? null,
    resetAtMs: budget?.resetAtMs ?? null,
    form: budget?.form ?? null,
    retryAfterMs: parseRetryAfter(headers.get('retry-after'), nowMs, serverDateMs),
    serverDateMs,
  };
}
