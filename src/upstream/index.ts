// The upstream client: routes table, safe URLs, rate budget, retries, request log.
export { ROUTES, BUCKETS, isRouteName, type Auth, type Bucket, type Route, type RouteName, type Source } from './routes.ts';
export { buildUrl, isSafePathParam, pathOf, pathParam, resolveLink, type Query, type ResolvedLink } from './safe-url.ts';
export { parseCount, parseHttpDate, parseReset, parseRetryAfter, readRateLimitHeaders, type RateLimitHeaders } from './budget/rate-limit-headers.ts';
export {
  decide,
  DEFAULT_BUDGET_POLICY,
  initialBucketState,
  observe,
  type BucketMode,
  type BucketState,
  type BucketStatus,
  type BudgetPolicy,
  type Decision,
  type Observation,
} from './budget/budget-state.ts';
export { InProcessBudget, realSleep, type AcquireOptions, type InProcessBudgetOptions, type RateBudget, type Sleep } from './budget/budget.ts';
export { isUpstreamProblem, parseProblem, problemError, type ErrorResponse } from './problem.ts';
export { backoffDelay, type BackoffPolicy } from './backoff.ts';
export { FETCH_BAD_PORTS, hostPort, SOURCE_URL_VARIABLE, UpstreamBadPortError, UpstreamRefusedError, UpstreamTlsError } from './connect-errors.ts';
export { jsonBodyHash, textBodyHash } from '../lib/hash.ts';
export {
  MemoryRecorder,
  NullRecorder,
  type RequestRecord,
  type RequestRecorder,
  type ResponseRecord,
} from '../ports/recorder.ts';
export { DEFAULT_RETRY_POLICY, FAST_RETRY_POLICY, type RetryPolicy } from './retry-policy.ts';
export { createUpstream } from './client.ts';
export type { Upstream, UpstreamConfig, UpstreamOptions, UpstreamRequest, UpstreamResponse } from './request.ts';
