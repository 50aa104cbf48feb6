// How the upstream client retries a request: backoff for transient failures, how a 429 without
// a usable Retry-After blocks its bucket, and the bounds on both (client.ts reads them).
export interface RetryPolicy {
  /** First backoff step for transient failures; doubles per attempt, with jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** 429s re-tried per request without spending an attempt. */
  maxRateLimitRetries: number;
  /** How long a 429 without a usable Retry-After (or reset) blocks the bucket; doubles. */
  rateLimitBaseDelayMs: number;
  rateLimitMaxDelayMs: number;
  /** A 200 whose body is not JSON is usually truncated: re-tried this often (within maxAttempts). */
  invalidJsonRetries: number;
  /** Error bodies are read only this far. */
  errorBodyMaxBytes: number;
  /** Redirects followed per attempt; one more fails the request with the redirect's status. */
  maxRedirects: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRateLimitRetries: 10,
  rateLimitBaseDelayMs: 1_000,
  rateLimitMaxDelayMs: 60_000,
  invalidJsonRetries: 2,
  errorBodyMaxBytes: 64 * 1024,
  maxRedirects: 5,
};

/** Delays small enough for end-to-end tests against the simulator (pass as `retry`). */
export const FAST_RETRY_POLICY: Partial<RetryPolicy> = {
  baseDelayMs: 10,
  maxDelayMs: 50,
  rateLimitBaseDelayMs: 50,
  rateLimitMaxDelayMs: 200,
};
