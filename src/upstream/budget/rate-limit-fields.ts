// The budget a response announces, read from each standard spelling into one shape
// ({ remaining, limit, resetAtMs }), and the rule that picks one when a response carries
// several. Every spelling goes the same way into the rate budget afterwards (hold.ts), so a
// bucket told it has nothing left waits for its reset whichever spelling told it.
//
// Spellings (docs/reliability.md, "Pacing from every standard rate-limit form"):
//   ietf         draft-ietf-httpapi-ratelimit-headers 08+: `RateLimit-Policy: "p";q=100;w=60`
//                and `RateLimit: "p";r=5;t=30`, Structured Field Lists, several policies
//   ietf-draft7  draft 07 (express-rate-limit's `draft-7`): `RateLimit: limit=100,
//                remaining=5, reset=30`, a Structured Field Dictionary
//   ietf-legacy  drafts up to 06 (`draft-6`): `RateLimit-Limit`, `RateLimit-Remaining`,
//                `RateLimit-Reset`
//   x-ratelimit  the seeds' `X-RateLimit-Limit`, `-Remaining`, `-Reset`
//
// Deny by default: a field that does not parse as its spelling says, or an item whose
// remaining count is not a non-negative integer, is refused whole (that spelling then says
// nothing), never read in part: a policy we could not read might be the one with nothing
// left. A policy counted in another unit than requests (`qu` other than "requests") does not
// apply to a request budget and is left out.
import { isItem, parseDictionary, parseItem, parseList, type BareItem, type Item, type Member } from '../structured-fields.ts';

export type RateLimitForm = 'ietf' | 'ietf-draft7' | 'ietf-legacy' | 'x-ratelimit';

/** In order of preference when two spellings announce the same remaining count. */
export const RATE_LIMIT_FORMS: readonly RateLimitForm[] = ['ietf', 'ietf-draft7', 'ietf-legacy', 'x-ratelimit'];

export interface RateLimitReading {
  form: RateLimitForm;
  remaining: number | null;
  limit: number | null;
  /** Absolute, on our clock. */
  resetAtMs: number | null;
}

type HeaderGetter = { get(name: string): string | null };

/** A reset value (delta-seconds, or an epoch) as an absolute time on our clock, or null. */
export type ResetReader = (value: string) => number | null;

/** A count the way RFC 8941 writes one: a non-negative Integer. */
function count(b: BareItem | undefined): number | null {
  return b?.type === 'integer' && b.value >= 0 && Number.isSafeInteger(b.value) ? b.value : null;
}

/** Seconds until a reset: a non-negative Integer (a Decimal too: some servers send fractions). */
function seconds(b: BareItem | undefined, reset: ResetReader): number | null | undefined {
  if (b === undefined) return undefined;
  if ((b.type !== 'integer' && b.type !== 'decimal') || b.value < 0) return null;
  return reset(String(b.value));
}

function nameOf(m: Member): string | null {
  if (!isItem(m)) return null;
  return m.item.type === 'string' || m.item.type === 'token' ? m.item.value : null;
}

/** The unit a policy counts in: requests unless it says otherwise (`qu`). */
function countsRequests(policy: Item | undefined): boolean {
  const qu = policy?.params.get('qu');
  if (qu === undefined) return true;
  return (qu.type === 'string' || qu.type === 'token') && qu.value === 'requests';
}

/** draft 08+: the most restrictive of the `RateLimit` field's policies that count requests. */
export function readCurrentDraft(headers: HeaderGetter, reset: ResetReader): RateLimitReading | null {
  const raw = headers.get('ratelimit');
  if (raw === null) return null;
  const items = parseList(raw);
  if (items === null || items.length === 0) return null;
  const policyRaw = headers.get('ratelimit-policy');
  const policyList = policyRaw === null ? [] : parseList(policyRaw);
  if (policyList === null) return null;
  const policies = new Map<string, Item>();
  for (const p of policyList) {
    const name = nameOf(p);
    if (name === null) return null;
    policies.set(name, p as Item);
  }
  let best: RateLimitReading | null = null;
  for (const m of items) {
    const name = nameOf(m);
    if (name === null) return null;
    const item = m as Item;
    const policy = policies.get(name);
    if (!countsRequests(policy)) continue;
    const remaining = count(item.params.get('r'));
    const resetAtMs = seconds(item.params.get('t'), reset);
    if (remaining === null || resetAtMs === null) return null;
    const reading: RateLimitReading = { form: 'ietf', remaining, limit: count(policy?.params.get('q')), resetAtMs: resetAtMs ?? null };
    if (best === null || moreRestrictive(reading, best)) best = reading;
  }
  return best;
}

/** draft 07: `RateLimit: limit=100, remaining=5, reset=30`. */
export function readDraft7(headers: HeaderGetter, reset: ResetReader): RateLimitReading | null {
  const raw = headers.get('ratelimit');
  // A List that parses is the current draft's; only a value that is not one can be draft 07's.
  if (raw === null || parseList(raw) !== null) return null;
  const dict = parseDictionary(raw);
  if (dict === null) return null;
  const member = (key: string): BareItem | undefined => {
    const m = dict.get(key);
    return m !== undefined && isItem(m) ? m.item : undefined;
  };
  const remaining = count(member('remaining'));
  const resetAtMs = seconds(member('reset'), reset);
  if (remaining === null || resetAtMs === null) return null;
  return { form: 'ietf-draft7', remaining, limit: count(member('limit')), resetAtMs: resetAtMs ?? null };
}

/** drafts up to 06: `RateLimit-Limit` (an Integer, or a List whose first member is the current limit), `-Remaining`, `-Reset`. */
export function readLegacy(headers: HeaderGetter, reset: ResetReader): RateLimitReading | null {
  const [limitRaw, remainingRaw, resetRaw] = [headers.get('ratelimit-limit'), headers.get('ratelimit-remaining'), headers.get('ratelimit-reset')];
  if (limitRaw === null && remainingRaw === null && resetRaw === null) return null;
  const first = parseList(limitRaw)?.[0];
  const limit = first !== undefined && isItem(first) ? count(first.item) : null;
  const remaining = count(parseItem(remainingRaw)?.item);
  const resetItem = parseItem(resetRaw);
  const resetAtMs = resetItem === null ? null : seconds(resetItem.item, reset) ?? null;
  if (remaining === null && limit === null && resetAtMs === null) return null;
  return { form: 'ietf-legacy', remaining, limit, resetAtMs };
}

/** The seeds' `X-RateLimit-*`. */
export function readXRateLimit(headers: HeaderGetter, reset: ResetReader): RateLimitReading | null {
  const remaining = xCount(headers.get('x-ratelimit-remaining'));
  const limit = xCount(headers.get('x-ratelimit-limit'));
  const resetRaw = headers.get('x-ratelimit-reset');
  const resetAtMs = resetRaw === null ? null : reset(resetRaw);
  if (remaining === null && limit === null && resetAtMs === null) return null;
  return { form: 'x-ratelimit', remaining, limit, resetAtMs };
}

/** A non-negative Integer, its parameters tolerated (`19;w=2`), as a structured Item; or null. */
export function xCount(value: string | null | undefined): number | null {
  return count(parseItem(value)?.item);
}

/**
 * Whether `a` leaves less to spend than `b`: a lower remaining count; at the same count, the
 * later reset (both must be obeyed, so the longer wait binds); a reset known over one unknown.
 */
function moreRestrictive(a: RateLimitReading, b: RateLimitReading): boolean {
  if (a.remaining !== b.remaining) return (a.remaining ?? Number.POSITIVE_INFINITY) < (b.remaining ?? Number.POSITIVE_INFINITY);
  if (a.resetAtMs === null || b.resetAtMs === null) return a.resetAtMs !== null && b.resetAtMs === null;
  return a.resetAtMs > b.resetAtMs;
}

/**
 * One reading from whatever spellings a response carries: the most restrictive of those that
 * state a remaining count (whole, never a limit of one spelling with the count of another);
 * else the first in RATE_LIMIT_FORMS that says anything (a limit or a reset alone).
 */
export function readRateLimitFields(headers: HeaderGetter, reset: ResetReader): RateLimitReading | null {
  const readings = [readCurrentDraft, readDraft7, readLegacy, readXRateLimit].map((read) => read(headers, reset)).filter((r): r is RateLimitReading => r !== null);
  let best: RateLimitReading | null = null;
  for (const r of readings) if (r.remaining !== null && (best === null || moreRestrictive(r, best))) best = r;
  return best ?? readings[0] ?? null;
}
