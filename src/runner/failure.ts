// What a failed job means for its resource: the status recorded, and whether running it
// again in this run could help.
import { InvalidResponseError, PermanentError, ProblemError, RateLimitedError } from '../errors.ts';

export interface FailureVerdict {
  /** resource_state.status */
  status: 'failed' | 'invalid' | 'rate_limited' | 'not_found';
  /** Worth another attempt within the same run (e.g. the database restarted). */
  retryable: boolean;
  /**
   * Upstream's answer about the resource rather than a failure (it does not exist): recorded
   * in its state and counted under its status, but the job is done and the run not partial.
   */
  answered?: boolean;
  message: string;
}

/**
 * Problem codes saying the token or chart asked for does not exist upstream (app host
 * snake_case, gateway kebab-case). Not a failure of tesync's: the list or catalog that planned
 * the request was ahead of (or behind) the route. The planners do not ask such a resource
 * again until their list says it exists again (jobs/app/not-found.ts, jobs/gateway/problems.ts).
 */
export const NOT_FOUND_CODES: ReadonlySet<string> = new Set(['token_not_found', 'chart_not_found', 'token-not-found', 'chart-item-not-found']);

/**
 * Pure: whether the error is a problem saying the token or chart does not exist (a 404 on
 * both hosts; the code decides, as everywhere). A route-level `not_found` / `not-found` is
 * not one of them: tesync asking for a route that does not exist is a bug to see, not a state.
 */
export function isNotFound(err: unknown): err is ProblemError {
  return err instanceof ProblemError && err.code !== undefined && NOT_FOUND_CODES.has(err.code);
}

export function judgeFailure(err: unknown): FailureVerdict {
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  if (isNotFound(err)) return { status: 'not_found', retryable: false, answered: true, message };
  if (err instanceof InvalidResponseError) return { status: 'invalid', retryable: false, message };
  if (err instanceof RateLimitedError) return { status: 'rate_limited', retryable: false, message };
  if (err instanceof PermanentError) return { status: 'failed', retryable: false, message };
  if (err instanceof Error && err.name === 'ZodError') return { status: 'invalid', retryable: false, message };
  // Upstream transient failures were already retried by the client; what is left is mostly
  // the warehouse going away for a moment (restart, failover), which a retry can ride out.
  return { status: 'failed', retryable: true, message };
}
