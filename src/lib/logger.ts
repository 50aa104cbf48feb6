// One pino root logger. Secrets are removed twice over: known header/field paths are
// redacted structurally, and every serialized line is scrubbed of each secret value, so a
// key that slipped into a URL or an error message is still never written.
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';

const CENSOR = '[REDACTED]';

const REDACT_PATHS = [
  'authorization',
  'Authorization',
  'headers.authorization',
  'headers.Authorization',
  'headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers.Authorization',
  '*.headers["x-api-key"]',
  'apiKey',
  '*.apiKey',
  'password',
  '*.password',
];

/** Every form in which a secret could appear in a serialized line. */
function secretForms(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
  return [...forms].filter((f) => f.length >= 4);
}

/** Replaces every occurrence of each secret (raw, URL-encoded, JSON-escaped) with a marker. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    for (const form of secretForms(secret)) out = out.split(form).join(CENSOR);
  }
  // Bearer tokens we were not told about are still credentials.
  return out.replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{4,}/gi, `$1${CENSOR}`);
}

export interface LoggerSettings {
  level: string;
  secrets: readonly string[];
  /** Where lines go; stderr by default so stdout stays for command output. */
  destination?: DestinationStream;
  base?: Record<string, unknown>;
}

export function createLogger(settings: LoggerSettings): Logger {
  const secrets = [...settings.secrets];
  const debug = settings.level === 'debug' || settings.level === 'trace';
  const options: LoggerOptions = {
    level: settings.level,
    base: settings.base ?? { pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: CENSOR },
    hooks: { streamWrite: (line) => scrub(line, secrets) },
    // One shape for every `err`, whatever was thrown; stack traces are for developers: only at
    // debug and below.
    serializers: { err: (value: unknown) => serializeError(value, { stack: debug }) },
  };
  return pino(options, settings.destination ?? pino.destination({ fd: 2, sync: true }));
}

/** What a log line says of an error. */
export interface SerializedError {
  /** The error's class (`ProblemError`, `TypeError`), or what was thrown instead (`string`, `null`, `object`). */
  type: string;
  message: string;
  /** `ECONNREFUSED`, a Postgres SQLSTATE, an upstream problem code. */
  code?: string;
  stack?: string;
}

/** Causes followed, at most: a cycle of causes must not hang the logger. */
const MAX_CAUSES = 5;

/**
 * Pure: any `err` value (an Error, a string, a plain object, null) as `{ type, message, code?,
 * stack? }`. Only these fields: an error's other properties (a raw body, request options) stay
 * out of the log. Causes are appended to the message (and the stack). Secrets are not this
 * function's business: every line is scrubbed as it is written.
 */
export function serializeError(value: unknown, options: { stack?: boolean } = {}): SerializedError {
  if (value === null || value === undefined) return { type: String(value), message: String(value) };
  if (typeof value === 'string') return { type: 'string', message: value };
  if (typeof value !== 'object') return { type: typeof value, message: String(value) };
  const o = value as { name?: unknown; message?: unknown; code?: unknown; errors?: unknown; stack?: unknown };
  const ctor = (value as { constructor?: { name?: unknown } }).constructor?.name;
  const className = typeof ctor === 'string' && ctor !== 'Object' && ctor !== '' ? ctor : undefined;
  // A subclass that kept Error's `name` is still told apart by its class.
  const name = nonEmpty(o.name);
  const type = (name === 'Error' ? className : undefined) ?? name ?? className ?? 'object';
  const out: SerializedError = { type, message: messageOf(value, 0) };
  const code = typeof o.code === 'string' || typeof o.code === 'number' ? String(o.code) : undefined;
  if (code !== undefined && code !== '') out.code = code;
  if (options.stack) {
    const stack = stackOf(value, 0);
    if (stack) out.stack = stack;
  }
  return out;
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The message, else the inner errors' (Node's AggregateError of a refused connection has none), else the value as JSON. */
function messageOf(value: object, depth: number): string {
  const o = value as { message?: unknown; errors?: unknown; cause?: unknown };
  let message = nonEmpty(o.message);
  if (message === undefined && Array.isArray(o.errors) && o.errors.length > 0) {
    message = o.errors.map((e: unknown) => (typeof e === 'object' && e !== null ? messageOf(e, depth + 1) : String(e))).join('; ');
  }
  if (message === undefined) message = value instanceof Error ? '' : json(value);
  const cause = o.cause;
  if (cause !== undefined && cause !== null && depth < MAX_CAUSES) {
    const inner = typeof cause === 'object' ? messageOf(cause, depth + 1) : String(cause);
    if (inner) message = message ? `${message}: ${inner}` : inner;
  }
  return message;
}

function stackOf(value: object, depth: number): string | undefined {
  const o = value as { stack?: unknown; cause?: unknown };
  let stack = nonEmpty(o.stack);
  if (stack !== undefined && typeof o.cause === 'object' && o.cause !== null && depth < MAX_CAUSES) {
    const inner = stackOf(o.cause, depth + 1);
    if (inner) stack = `${stack}\ncaused by: ${inner}`;
  }
  return stack;
}

function json(value: object): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
