// One pino root logger. Secrets are removed twice over: known header/field paths are
// redacted structurally, and every serialized line is scrubbed of each secret value, so a
// key that slipped into a URL or an error message is still never written. Lines are JSON;
// beside a progress line on a terminal they are said in words instead (logLineInWords).
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { errorMessage, isQueryError, recordable, reportedError } from './recordable.ts';
import { REDACTED, scrubberFor } from './secrets.ts';

export type { Logger } from 'pino';

const CENSOR = REDACTED;

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

/**
 * Replaces each secret, in every form it could take (src/lib/secrets.ts: as sent, percent-,
 * JSON- or HTML-escaped, cut), with a marker; Bearer credentials nobody configured too.
 */
export function scrub(text: string, secrets: readonly string[]): string {
  const out = scrubberFor(secrets)(text);
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
    // debug and below. The message is cut short, so it is scrubbed first: a cut must not leave
    // the start of a secret where the line's scrub would no longer know it.
    serializers: { err: (value: unknown) => serializeError(value, { stack: debug, secrets }) },
  };
  return pino(options, settings.destination ?? pino.destination({ fd: 2, sync: true }));
}

/**
 * A child of `base` whose lines go to `destination` instead of `base`'s, at `level` (never
 * below `base`'s own level). Everything `base` does to a line still happens before it is
 * written: redaction, serializers, and the secrets scrub of `hooks.streamWrite` (pino calls
 * the hook, then the stream the logger holds under `pino.symbols.streamSym`: the child's own
 * stream shadows its parent's, and its children inherit it).
 */
export function redirectLogger(base: Logger, destination: DestinationStream, level?: string): Logger {
  const stricter = level !== undefined && base.levels.values[level] !== undefined && base.levels.values[level] < base.levelVal ? base.level : level;
  const child = base.child({}, stricter === undefined ? undefined : { level: stricter });
  (child as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] = destination;
  return child;
}

const LEVEL_WORDS: Readonly<Record<number, string>> = { 10: 'trace', 20: 'debug', 30: '', 40: 'warning', 50: 'error', 60: 'fatal' };
/** Fields a person at a terminal does not need, or that the words say otherwise. */
const UNSAID = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'err', 'error', 'type', 'runId', 'job', 'resource']);
/** Fields in milliseconds, and how each is said. */
const DURATIONS: Readonly<Record<string, string>> = { delayMs: 'next try in', waitMs: 'waiting', ms: 'after', durationMs: 'took' };
/** Terminal escape sequences, then other control characters (carriage returns, newlines): never on the screen, and a line stays one line. */
const ESCAPES = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[@-_]|\u009b[0-9;?]*[ -/]*[@-~]/g;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]+/g;

/**
 * Pure: one pino JSON line in words, for a person at a terminal: the level (`warning:`, none
 * for info), the message, what it is about (the resource and its job), the cause (the error's
 * message), then the other fields in parentheses (`attempt 2, retrying in 0.4 s`). A field the
 * words already say is not repeated. The line as it came, made one line, when it is not JSON.
 * The line is the one pino wrote: already scrubbed of secrets.
 */
export function logLineInWords(line: string): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    entry = undefined;
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return oneLine(line);
  const e = entry as Record<string, unknown>;
  const level = typeof e.level === 'number' ? (LEVEL_WORDS[e.level] ?? `level ${e.level}`) : typeof e.level === 'string' ? e.level : '';
  const msg = text(e.msg);
  const err = typeof e.err === 'object' && e.err !== null ? (e.err as Record<string, unknown>) : undefined;
  const cause = text(err?.message) ?? text(e.err) ?? text(e.error);
  // What it is about, as the run's summary says a failure (`token/x/history (app.history)`),
  // less what the message or the cause names already.
  const unsaid = (v: string | undefined) => (v !== undefined && !msg?.includes(v) && !cause?.includes(v) ? v : undefined);
  const resource = unsaid(text(e.resource));
  const job = unsaid(text(e.job));
  const subject = resource !== undefined ? `${resource}${job !== undefined ? ` (${job})` : ''}` : job;
  const parts = [msg, subject, cause].filter((p): p is string => p !== undefined);
  // Each part once, and not when another says it already.
  const words = parts.filter((p, i) => parts.indexOf(p) === i && !parts.some((q) => q !== p && q.includes(p))).join(': ');
  const details: string[] = [];
  const code = text(err?.code);
  if (code !== undefined && !words.includes(code)) details.push(`code ${code}`);
  for (const [key, value] of Object.entries(e)) {
    if (UNSAID.has(key) || value === undefined || value === null) continue;
    const duration = DURATIONS[key];
    if (duration !== undefined && typeof value === 'number') {
      details.push(`${duration} ${formatMs(value)}`);
      continue;
    }
    const shown = describeValue(value);
    if (shown === '' || (typeof value !== 'number' && typeof value !== 'boolean' && words.includes(shown))) continue;
    if (key === 'code' && words.includes(shown)) continue;
    if (key === 'httpStatus' && typeof value === 'number' && words.includes(String(value))) continue;
    details.push(`${key} ${shown}`);
  }
  const body = `${words || '(no message)'}${details.length > 0 ? ` (${details.join(', ')})` : ''}`;
  return oneLine(level ? `${level}: ${body}` : body);
}

function text(v: unknown): string | undefined {
  if (typeof v === 'string') return v === '' ? undefined : v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A field's value in a few words: lists joined (the first few), objects as short JSON. */
function describeValue(value: unknown): string {
  if (Array.isArray(value)) {
    const shown = value.slice(0, 5).map((v) => (typeof v === 'object' && v !== null ? clip(json(v), 40) : String(v)));
    return `${shown.join(', ')}${value.length > 5 ? ` and ${value.length - 5} more` : ''}`;
  }
  if (typeof value === 'object' && value !== null) return clip(json(value), 80);
  return String(value);
}

function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

function oneLine(s: string): string {
  return s.replace(ESCAPES, '').replace(CONTROL, ' ').trim();
}

/** What a log line says of an error. */
export interface SerializedError {
  /** The error's class (`ProblemError`, `TypeError`), or what was thrown instead (`string`, `null`, `object`). */
  type: string;
  /** At most LOGGED_MESSAGE_CHARS, control characters escaped (src/lib/recordable.ts). */
  message: string;
  /** `ECONNREFUSED`, a Postgres SQLSTATE, an upstream problem code. */
  code?: string;
  /** Of a failed query: the start of its SQL, never its parameters. */
  query?: string;
  stack?: string;
}

/** Causes followed, at most: a cycle of causes must not hang the logger. */
const MAX_CAUSES = 5;
/** The most characters of an error's message (its causes' included) in a log line. */
const LOGGED_MESSAGE_CHARS = 1000;
/** The most characters of a failed query's SQL in a log line. */
const LOGGED_QUERY_CHARS = 120;

/**
 * Pure: any `err` value (an Error, a string, a plain object, null) as `{ type, message, code?,
 * query?, stack? }`. Only these fields: an error's other properties (a raw body, request
 * options, a failed query's parameters) stay out of the log. Causes are appended to the message
 * (and the stack); a failed query (drizzle's DrizzleQueryError, whose message lists every
 * parameter) is said by its driver's error, with the start of its SQL. The message is
 * recordable (src/lib/recordable.ts): control characters escaped, cut to
 * LOGGED_MESSAGE_CHARS, after `secrets` are scrubbed from it. Every line is scrubbed again as
 * it is written.
 */
export function serializeError(value: unknown, options: { stack?: boolean; secrets?: readonly string[] } = {}): SerializedError {
  const said = (text: string) => recordable(options.secrets ? scrub(text, options.secrets) : text, LOGGED_MESSAGE_CHARS);
  if (value === null || value === undefined) return { type: String(value), message: String(value) };
  if (typeof value === 'string') return { type: 'string', message: said(value) };
  if (typeof value !== 'object') return { type: typeof value, message: said(String(value)) };
  const o = value as { name?: unknown; message?: unknown; code?: unknown; errors?: unknown; stack?: unknown };
  const ctor = (value as { constructor?: { name?: unknown } }).constructor?.name;
  const className = typeof ctor === 'string' && ctor !== 'Object' && ctor !== '' ? ctor : undefined;
  // A subclass that kept Error's `name` is still told apart by its class.
  const name = nonEmpty(o.name);
  const type = (name === 'Error' ? className : undefined) ?? name ?? className ?? 'object';
  const out: SerializedError = { type, message: said(messageOf(value, 0)) };
  const code = codeOf(o.code) ?? codeOf((reportedError(value) as { code?: unknown } | null)?.code);
  if (code !== undefined) out.code = code;
  if (isQueryError(value)) out.query = recordable(value.query.replace(/\s+/g, ' ').trim(), LOGGED_QUERY_CHARS);
  if (options.stack) {
    const stack = stackOf(value, 0);
    if (stack) out.stack = options.secrets ? scrub(stack, options.secrets) : stack;
  }
  return out;
}

function codeOf(v: unknown): string | undefined {
  return (typeof v === 'string' || typeof v === 'number') && v !== '' ? String(v) : undefined;
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * The message, else the inner errors' (Node's AggregateError of a refused connection has none),
 * else the value as JSON; a failed query's is its driver error's (errorMessage), at every depth.
 */
function messageOf(value: object, depth: number): string {
  if (isQueryError(value)) {
    const cause = value.cause;
    return depth < MAX_CAUSES && typeof cause === 'object' && cause !== null ? messageOf(cause, depth + 1) : errorMessage(value);
  }
  const o = value as { message?: unknown; errors?: unknown; cause?: unknown };
  let message = nonEmpty(o.message) === undefined ? undefined : errorMessage(value);
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

/** The stack, its causes' appended; a failed query's is its driver error's (drizzle's first line lists the parameters). */
function stackOf(value: object, depth: number): string | undefined {
  if (isQueryError(value)) {
    const cause = value.cause;
    return depth < MAX_CAUSES && typeof cause === 'object' && cause !== null ? stackOf(cause, depth + 1) : undefined;
  }
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
