// What a failed job means for its resource: the status recorded, whether running it again
// in this run could help, and what is known of the failure as data (class, upstream code,
// HTTP status, bucket). Hints, `tesync status` and metrics read those fields; `message` is
// for people only, and nothing decides anything by reading it.
import {
  InvalidResponseError,
  isUpstreamProblem,
  PermanentError,
  ProblemError,
  RateLimitedError,
  TransientError,
} from './errors.ts';
import { errorLine, recordable, RECORD_CHARS, reportedError } from './recordable.ts';

export type FailureStatus = 'failed' | 'invalid' | 'rate_limited' | 'not_found';

export interface Failure {
  /** resource_state.status */
  status: FailureStatus;
  /** Worth another attempt within the same run (e.g. the database restarted). */
  retryable: boolean;
  /**
   * Upstream's answer about the resource rather than a failure (it does not exist): recorded
   * in its state and counted under its status, but the job is done and the run not partial.
   */
  answered?: boolean;
  /** The error's class name (`ProblemError`, `UpstreamTimeoutError`, `ZodError`, ...); `unknown` for a non-Error. */
  type: string;
  /** Upstream's problem code (`token_not_found`, `missing_scope`, `service-unavailable`, ...). */
  code?: string;
  /** Upstream's HTTP status, when an error response arrived. */
  httpStatus?: number;
  /** The rate budget bucket: RateLimitedError's own; the job lifecycle fills it in for others. */
  bucket?: string;
  /** Of an upstream problem: what the gateway kept in `details.problem` before these fields existed. */
  requestId?: string;
  instance?: string;
  detail?: string;
  /** Path and query of the failed request (no host, no key), for any upstream error that has one. */
  path?: string;
  /**
   * `${name}: ${message}`, for people: never parsed. Recordable (src/lib/recordable.ts): no
   * U+0000 or unpaired surrogate, at most 300 characters (MESSAGE_CHARS); of a failed query, the driver's
   * error, never drizzle's message with the query's parameters.
   */
  message: string;
}

/**
 * Problem codes saying the token or chart asked for does not exist upstream (app host
 * snake_case, gateway kebab-case). Not a failure of tesync's: the list or catalog that planned
 * the request was ahead of (or behind) the route. The planners do not ask such a resource
 * again until their list says it exists again (the one 404 rule, src/engine/job/not-found.ts).
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

/** Pure: what the failed job means for its resource, and what is known of the failure. */
export function judgeFailure(err: unknown): Failure {
  const facts = failureFacts(err);
  if (isNotFound(err)) return { status: 'not_found', retryable: false, answered: true, ...facts };
  if (err instanceof InvalidResponseError) return { status: 'invalid', retryable: false, ...facts };
  if (err instanceof RateLimitedError) return { status: 'rate_limited', retryable: false, ...facts };
  // Permanent: a 4xx, an unsafe request, and a connection refused or a port fetch will not
  // use (src/upstream/connect-errors.ts): the same answer on every try, so one try, at once.
  if (err instanceof PermanentError) return { status: 'failed', retryable: false, ...facts };
  if (err instanceof Error && err.name === 'ZodError') return { status: 'invalid', retryable: false, ...facts };
  // Upstream transient failures (timeouts, resets, a DNS name or host not reached) were
  // already retried by the client, and may clear up by the next try; what is left is mostly
  // the warehouse going away for a moment (restart, failover), which a retry can ride out.
  return { status: 'failed', retryable: true, ...facts };
}

type FailureFacts = Omit<Failure, 'status' | 'retryable' | 'answered'>;

/**
 * Pure: the data an error carries, whatever its verdict, each text recordable (upstream's
 * fields too: they go to sync.resource_state as they are). A failed query is said by the
 * driver's error it wraps (its class and SQLSTATE message), not by drizzle's wrapper.
 */
function failureFacts(err: unknown): FailureFacts {
  if (!(err instanceof Error)) return { type: 'unknown', message: recordable(err) };
  const said = reportedError(err);
  const type = said instanceof Error ? said.name || 'Error' : err.name || 'Error';
  const facts: FailureFacts = { type: recordable(type), message: recordable(errorLine(err)) };
  if (isUpstreamProblem(err)) {
    facts.httpStatus = err.status;
    if (err.code !== undefined) facts.code = recordable(err.code);
    if (err.requestId !== undefined) facts.requestId = recordable(err.requestId);
    if (err.instance !== undefined) facts.instance = recordable(err.instance);
    if (err.detail !== undefined) facts.detail = recordable(err.detail);
    facts.path = recordable(err.path, RECORD_CHARS);
  } else if (err instanceof RateLimitedError) {
    facts.bucket = err.bucket;
  } else {
    const path = requestPath(err);
    if (path !== undefined) facts.path = recordable(path, RECORD_CHARS);
  }
  return facts;
}

/**
 * The request path of one of tesync's own upstream errors (a timeout, a network error, a
 * refused connection, a body too large: each carries `path`, the path and query without the
 * host). Only tesync's error classes: another error's `path` (a file's, on a system error)
 * is not a request's.
 */
function requestPath(err: Error): string | undefined {
  if (!(err instanceof PermanentError || err instanceof TransientError)) return undefined;
  const path = (err as { path?: unknown }).path;
  return typeof path === 'string' ? path : undefined;
}
