// Small named errors that tell a runner what to do. Runners (in-process and BullMQ)
// decide by class, never by parsing messages. Messages never carry secrets or bodies.

import { ConfigError } from './config.ts';

/** Configuration is unusable; re-exported here so runners need one import. */
export { ConfigError };

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
  override readonly name: string = 'InvalidResponseError';
  constructor(
    message: string,
    readonly rawBody?: string,
  ) {
    super(message);
  }
}

/**
 * Rows of one response that the write path refused: two rows for one key with different
 * values, a column read as numeric whose cells are not numbers, a time that cannot be read.
 * The response was not understood; nothing of it is written (src/engine/fetch/understood.ts
 * keeps its body as `invalid`).
 */
export class NotUnderstoodError extends InvalidResponseError {
  override readonly name: string = 'NotUnderstoodError';
}

/** The warehouse could not be reached or written: the run cannot complete. */
export class WarehouseError extends Error {
  override readonly name = 'WarehouseError';
}

// --- Upstream client errors (src/upstream) ---------------------------------------------

/** What an upstream error response said (RFC 9457 fields, or what could be read of a non-problem body). */
export interface UpstreamProblemFields {
  status: number;
  /** `code` of the problem document: snake_case on the app host, kebab-case on the gateway. */
  code: string | undefined;
  type: string | undefined;
  title: string | undefined;
  detail: string | undefined;
  instance: string | undefined;
  /** The `scope` extension of a 403 `missing_scope`. */
  scope: string | undefined;
  /** Body `requestId` / `request_id`, else the `X-Request-Id` header. */
  requestId: string | undefined;
  /** Every other member of the problem document. */
  extensions: Record<string, unknown>;
  /** Path and query of the request (no host, no key). */
  path: string;
  /** The hash the raw archive keeps a refusal's (4xx) body under, with `path`: what a row refused by it links to. */
  sha256?: string | undefined;
}

function problemMessage(p: UpstreamProblemFields): string {
  const what = [p.code, p.title].filter(Boolean).join(': ');
  return `GET ${p.path} failed with ${p.status}${what ? ` ${what}` : ''}${p.requestId ? ` (request id ${p.requestId})` : ''}`;
}

// A mixin's constructor must take `...args: any[]` (TypeScript's rule for class mixins).
type ErrorClass = new (...args: any[]) => Error;

/**
 * The fields of an upstream error response, declared once for the two classes that carry
 * them (a 4xx is permanent, a 5xx transient: they extend different bases). They are own
 * properties, so loggers and `toMatchObject` see them as before; `problem` is the same
 * fields as one object.
 */
function withUpstreamProblem<B extends ErrorClass>(Base: B) {
  abstract class UpstreamProblem extends Base implements UpstreamProblemFields {
    readonly status: number;
    readonly code: string | undefined;
    readonly type: string | undefined;
    readonly title: string | undefined;
    readonly detail: string | undefined;
    readonly instance: string | undefined;
    readonly scope: string | undefined;
    readonly requestId: string | undefined;
    readonly extensions: Record<string, unknown>;
    readonly path: string;
    readonly sha256: string | undefined;
    constructor(...args: any[]) {
      const p = args[0] as UpstreamProblemFields;
      super(problemMessage(p));
      ({ status: this.status, code: this.code, type: this.type, title: this.title, detail: this.detail } = p);
      ({ instance: this.instance, scope: this.scope, requestId: this.requestId, extensions: this.extensions, path: this.path, sha256: this.sha256 } = p);
    }

    /** The fields as one object (what the error was built from). */
    get problem(): UpstreamProblemFields {
      const { status, code, type, title, detail, instance, scope, requestId, extensions, path, sha256 } = this;
      return { status, code, type, title, detail, instance, scope, requestId, extensions, path, sha256 };
    }
  }
  // A mixin's own signature is `...args: any[]`: say what it takes.
  return UpstreamProblem as unknown as abstract new (p: UpstreamProblemFields) => InstanceType<B> & UpstreamProblem;
}

/** A 3xx/4xx error response (other than 429): retrying will not help. */
export class ProblemError extends withUpstreamProblem(PermanentError) {
  override readonly name = 'ProblemError';
}

/** A 5xx error response (500, 503 `engine_data_unavailable` / `service-unavailable`, ...): worth retrying later. */
export class UpstreamServerError extends withUpstreamProblem(TransientError) {
  override readonly name = 'UpstreamServerError';
}

/** Pure: whether the error carries an upstream problem (a 3xx/4xx or 5xx response). */
export function isUpstreamProblem(err: unknown): err is ProblemError | UpstreamServerError {
  return err instanceof ProblemError || err instanceof UpstreamServerError;
}

/** A request that tesync refuses to send: a hostile path parameter, a path outside the routes table. */
export class UnsafeRequestError extends PermanentError {
  override readonly name = 'UnsafeRequestError';
}

/** The route needs a source URL or key that is not configured. Nothing was sent. */
export class UpstreamNotConfiguredError extends PermanentError {
  override readonly name = 'UpstreamNotConfiguredError';
  constructor(
    readonly source: string,
    readonly missing: 'url' | 'apiKey',
  ) {
    super(missing === 'url' ? `the ${source} source is not configured (no base URL)` : `the ${source} route needs an API key, and none is configured`);
  }
}

/** The body exceeded the configured maximum size (counted while streaming): not retried. */
export class ResponseTooLargeError extends PermanentError {
  override readonly name = 'ResponseTooLargeError';
  constructor(
    readonly path: string,
    readonly limitBytes: number,
    /** The variable that sets the limit: one body's (TE_MAX_RESPONSE_BYTES), or what a list's byte budget had left (TE_MAX_LIST_BYTES). */
    variable = 'TE_MAX_RESPONSE_BYTES',
  ) {
    super(`GET ${path}: response body exceeds the limit of ${limitBytes} bytes (${variable})`);
  }
}

/** No complete response within the request timeout (headers and body together). */
export class UpstreamTimeoutError extends TransientError {
  override readonly name = 'UpstreamTimeoutError';
  constructor(
    readonly path: string,
    readonly timeoutMs: number,
    readonly phase: 'headers' | 'body',
  ) {
    super(`GET ${path}: no complete response within ${timeoutMs} ms (timed out waiting for the ${phase}; TE_REQUEST_TIMEOUT_MS)`);
  }
}

/** The connection failed, was reset, or the body ended early. */
export class UpstreamNetworkError extends TransientError {
  override readonly name = 'UpstreamNetworkError';
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`GET ${path}: ${reason}`);
  }
}

/**
 * The warehouse mirrors another upstream than the one configured (sync.upstream_bindings):
 * bad configuration, exit 2, like any other. The message names both, never a key.
 */
export class UpstreamMismatchError extends ConfigError {
  constructor(variable: string, message: string) {
    super(variable, message);
    this.message = message;
  }
}
