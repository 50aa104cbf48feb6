// Small named errors that tell a runner what to do. Runners (in-process and BullMQ)
// decide by class, never by parsing messages. Messages never carry secrets or bodies.

/** Configuration is unusable; re-exported here so runners need one import. */
export { ConfigError } from './config.ts';

/** Retrying will not help (bad request, not found, validation failure). */
export class PermanentError extends Error {
  override readonly name: string = 'PermanentError';
}

/** Worth retrying with backoff (network error, timeout, 5xx, 503 unavailable). */
export class TransientError extends Error {
  override readonly name: string = 'TransientError';
}

/** The bucket is out of budget: wait `waitMs` before any request to it. Not a failed attempt. */
export class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError';
  constructor(
    readonly bucket: string,
    readonly waitMs: number,
    readonly reason: string,
  ) {
    super(`rate budget of ${bucket} exhausted (${reason}); wait ${Math.ceil(waitMs)} ms`);
  }
}

/** A response that failed validation: recorded as `invalid` with its raw body; not retried. */
export class InvalidResponseError extends PermanentError {
  override readonly name = 'InvalidResponseError';
  constructor(
    message: string,
    readonly rawBody?: string,
  ) {
    super(message);
  }
}

/** The warehouse could not be reached or written: the run cannot complete. */
export class WarehouseError extends Error {
  override readonly name = 'WarehouseError';
}
