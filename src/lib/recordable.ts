// Text tesync records (sync.runs, sync.resource_state, a run's stats) or prints, whatever an
// error said. Postgres text cannot hold U+0000, jsonb cannot hold U+0000 nor an unpaired
// surrogate, and a failed query's message (drizzle's: its SQL and every parameter) runs to
// kilobytes: a record that cannot be written is how a run was once left `running`. Pure, but
// for the secrets the process keeps out of every such text (src/lib/secrets.ts keepSecretsOut).
import { scrubRecorded } from './secrets.ts';

/** The most characters kept of one error's message (judgeFailure's, a printed error). */
export const MESSAGE_CHARS = 300;
/** The most characters of a recorded text built around a message (last_error, a run's error). */
export const RECORD_CHARS = 500;

/**
 * Pure, never throws: `value` as text that can be recorded and shown. First the process's
 * secrets are scrubbed from it (keepSecretsOut), whole, before any cut. U+0000, the other C0
 * control characters but tab and newline, and unpaired surrogates are written as visible
 * `\uXXXX` escapes (pairs are kept); the text is cut to at most `max` UTF-16 code units (so at
 * most `max` characters in Postgres) at a code point boundary, ending with `…` and the count of
 * characters left out. A non-string is said as String() says it.
 */
export function recordable(value: unknown, max: number = MESSAGE_CHARS): string {
  const text = scrubRecorded(asText(value));
  const limit = typeof max === 'number' && !Number.isNaN(max) ? Math.max(0, Math.floor(max)) : MESSAGE_CHARS;
  let length = 0;
  let count = 0;
  for (let i = 0; i < text.length; i += unitsAt(text, i)) {
    length += pieceAt(text, i).length;
    count++;
  }
  if (length <= limit) return escapeFrom(text, 0, Infinity).head;
  // The longest suffix the cut can need: the kept part fits beside it whatever is left out.
  const budget = limit - leftOut(count).length;
  if (budget < 0) return limit >= 1 ? '…' : '';
  const { head, kept } = escapeFrom(text, 0, budget);
  return `${head}${leftOut(count - kept)}`;
}

const leftOut = (n: number) => `… (${n} more characters)`;

/** The escaped text from `start`, as many whole pieces as fit in `budget` code units, and how many code points they are. */
function escapeFrom(text: string, start: number, budget: number): { head: string; kept: number } {
  const parts: string[] = [];
  let used = 0;
  let kept = 0;
  for (let i = start; i < text.length; i += unitsAt(text, i)) {
    const piece = pieceAt(text, i);
    if (used + piece.length > budget) break;
    parts.push(piece);
    used += piece.length;
    kept++;
  }
  return { head: parts.join(''), kept };
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** The code units of the code point at `i`: 2 for a surrogate pair, else 1 (an unpaired surrogate is one). */
function unitsAt(text: string, i: number): number {
  return isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
}

/** The code point at `i` as it is recorded: itself, or its `\uXXXX` escape. */
function pieceAt(text: string, i: number): string {
  const c = text.charCodeAt(i);
  if (isHigh(c) && isLow(text.charCodeAt(i + 1))) return text.slice(i, i + 2);
  if (isHigh(c) || isLow(c) || (c < 0x20 && c !== 0x09 && c !== 0x0a)) return `\\u${c.toString(16).padStart(4, '0')}`;
  return text.charAt(i);
}

/** Any value as text, without throwing (an object whose toString throws, a revoked proxy). */
function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return String(value);
  } catch {
    try {
      return Object.prototype.toString.call(value);
    } catch {
      return `[${typeof value}]`;
    }
  }
}

/**
 * Pure: a JSON value (a run's stats, a resource's details) with every string, keys included,
 * made recordable (recordable above; each string value cut to `maxString`), as a plain copy.
 * Throws what JSON.stringify throws (a BigInt, a cycle): such a value cannot be recorded.
 */
export function recordableJson(value: unknown, maxString = Infinity): unknown {
  const json = JSON.stringify(value);
  if (json === undefined) return null;
  return clean(JSON.parse(json) as unknown, maxString);
}

function clean(value: unknown, maxString: number): unknown {
  if (typeof value === 'string') return recordable(value, maxString);
  if (Array.isArray(value)) return value.map((v) => clean(v, maxString));
  if (typeof value === 'object' && value !== null) {
    // fromEntries defines own properties: a `__proto__` key stays a key.
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [recordable(k, Infinity), clean(v, maxString)]));
  }
  return value;
}

/**
 * Drizzle's error for a failed query (DrizzleQueryError: its message is `Failed query: <sql>
 * \nparams: <every value>`, its `params` the values, its `cause` the driver's error). Told by
 * its shape: an Error with a string `query`, a `params` list and a cause.
 */
export function isQueryError(err: unknown): err is Error & { query: string; params: unknown; cause: unknown } {
  try {
    if (!(err instanceof Error)) return false;
    const e = err as { query?: unknown; params?: unknown; cause?: unknown };
    return typeof e.query === 'string' && Array.isArray(e.params) && e.cause !== undefined && e.cause !== null;
  } catch {
    return false;
  }
}

/** The error to say of `err`: a failed query's driver error (its SQLSTATE message), never drizzle's wrapper with the parameters. */
export function reportedError(err: unknown): unknown {
  let e = err;
  for (let depth = 0; depth < 5 && isQueryError(e); depth++) e = e.cause;
  return e;
}

/**
 * Pure, never throws: the message of an error (reportedError's; any object's string
 * `message`), or the value as text, with
 * any `params: ...` of a failed query that another error's message quoted taken out. Not cut:
 * recordable does that.
 */
export function errorMessage(err: unknown): string {
  const e = reportedError(err);
  let message: unknown;
  try {
    message = typeof e === 'object' && e !== null && typeof (e as { message?: unknown }).message === 'string' ? (e as { message: string }).message : asText(e);
  } catch {
    message = asText(e);
  }
  return withoutQueryParams(asText(message));
}

/** `<class>: <message>` of an error (reportedError's), the value as text otherwise; never throws. */
export function errorLine(err: unknown): string {
  const e = reportedError(err);
  try {
    if (e instanceof Error) return `${e.name || 'Error'}: ${errorMessage(e)}`;
  } catch {
    // a getter that throws: said as text below
  }
  return errorMessage(e);
}

// `Failed query: <sql>\nparams: <values>`, wherever a message quotes it: the values go.
const QUERY_PARAMS = /(Failed query: [\s\S]*?)\nparams: [\s\S]*$/;

function withoutQueryParams(message: string): string {
  return message.replace(QUERY_PARAMS, '$1 (parameters not shown)');
}
