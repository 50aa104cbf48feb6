// What a failed job means for its resource: the status recorded, and whether running it
// again in this run could help.
import { InvalidResponseError, PermanentError, RateLimitedError } from '../errors.ts';

export interface FailureVerdict {
  /** resource_state.status */
  status: 'failed' | 'invalid' | 'rate_limited';
  /** Worth another attempt within the same run (e.g. the database restarted). */
  retryable: boolean;
  message: string;
}

export function judgeFailure(err: unknown): FailureVerdict {
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  if (err instanceof InvalidResponseError) return { status: 'invalid', retryable: false, message };
  if (err instanceof RateLimitedError) return { status: 'rate_limited', retryable: false, message };
  if (err instanceof PermanentError) return { status: 'failed', retryable: false, message };
  if (err instanceof Error && err.name === 'ZodError') return { status: 'invalid', retryable: false, message };
  // Upstream transient failures were already retried by the client; what is left is mostly
  // the warehouse going away for a moment (restart, failover), which a retry can ride out.
  return { status: 'failed', retryable: true, message };
}
