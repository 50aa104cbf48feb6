// Pure readers of upstream cells. Bodies are parsed losslessly: a JSON number arrives as a
// LosslessNumber holding its literal text, so a decimal never passes through a JS number.
import { isLosslessNumber } from 'lossless-json';

/** What Postgres `numeric` accepts, minus NaN/Infinity (not data). */
export const DECIMAL_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A cell read as an exact decimal: its text, null for null/absent, or invalid. */
export type DecimalCell = { ok: true; value: string | null } | { ok: false; raw: unknown };

export function readDecimal(v: unknown): DecimalCell {
  if (v === null || v === undefined) return { ok: true, value: null };
  if (isLosslessNumber(v)) {
    const literal = (v as { value: string }).value;
    return fitsNumeric(literal) ? { ok: true, value: literal } : { ok: false, raw: v };
  }
  if (typeof v === 'string') {
    const t = v.trim();
    return DECIMAL_RE.test(t) && fitsNumeric(t) ? { ok: true, value: t } : { ok: false, raw: v };
  }
  // A parsed body has no JS numbers; one from code is exact only as a safe integer.
  if (typeof v === 'number' && Number.isSafeInteger(v)) return { ok: true, value: String(v) };
  if (typeof v === 'bigint') return { ok: true, value: v.toString() };
  return { ok: false, raw: v };
}

// Postgres `numeric` limits: 131072 digits before the point, 16383 after. A literal beyond
// them would fail the whole transaction, so it is invalid here instead.
const MAX_INT_DIGITS = 131_072;
const MAX_FRAC_DIGITS = 16_383;
const PLAIN_DECIMAL = /^[+-]?\d*\.?\d*$/;

/** Whether a decimal literal fits a `numeric` column. */
export function fitsNumeric(literal: string): boolean {
  // The usual case, cheaply: no exponent and too short to exceed either limit.
  if (literal.length <= MAX_FRAC_DIGITS && PLAIN_DECIMAL.test(literal)) return true;
  const m = /^[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!m) return false;
  const intDigits = (m[1] ?? '').replace(/^0+/, '').length;
  const fracDigits = (m[2] ?? '').replace(/0+$/, '').length;
  // An exponent too long to be a safe integer is out of range either way.
  const exp = m[3] === undefined ? 0 : Number(m[3]);
  if (!Number.isSafeInteger(exp)) return false;
  if (intDigits + fracDigits === 0) return true;
  return intDigits + exp <= MAX_INT_DIGITS && fracDigits - exp <= MAX_FRAC_DIGITS;
}

export function isNumberLike(v: unknown): boolean {
  return isLosslessNumber(v) || typeof v === 'number';
}

/** A JSON number (or numeric string) as a safe integer, else undefined. */
export function readInt(v: unknown): number | undefined {
  const d = readDecimal(v);
  if (!d.ok || d.value === null) return undefined;
  const n = Number(d.value);
  return Number.isSafeInteger(n) ? n : undefined;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * A time cell: ISO date (UTC midnight), ISO timestamp, or epoch seconds / milliseconds
 * (numbers below 1e11 are seconds: 1e11 s is the year 5138, 1e11 ms is 1973).
 */
export function readTime(v: unknown): Date | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') {
    const t = v.trim();
    if (ISO_DATE.test(t)) return validDate(new Date(`${t}T00:00:00Z`));
    if (ISO_TIMESTAMP.test(t)) return validDate(new Date(/Z|[+-]\d{2}:?\d{2}$/.test(t) ? t : `${t}Z`));
    if (/^\d+(\.\d+)?$/.test(t)) return fromEpoch(Number(t));
    return null;
  }
  if (isLosslessNumber(v) || typeof v === 'number') return fromEpoch(Number(isLosslessNumber(v) ? (v as { value: string }).value : v));
  return null;
}

function fromEpoch(n: number): Date | null {
  if (!Number.isFinite(n) || n < 0) return null;
  return validDate(new Date(n < 1e11 ? n * 1000 : n));
}

function validDate(d: Date): Date | null {
  return Number.isNaN(d.getTime()) ? null : d;
}

/** A short text, or undefined for anything that is not a string. */
export function readText(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A marker that compares equal when the value is the same (objects by sorted keys). */
export function stableMarker(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  return JSON.stringify(sortKeys(v));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (isLosslessNumber(v)) return (v as { value: string }).value;
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isLosslessNumber(v);
}

/**
 * A change marker only when the value can move with the data: it holds a date, a time or a
 * number (an asOf, a generatedAt, a version, a row count). A bare status such as `fresh`
 * stays the same while the data changes, so it marks nothing: null, and the resource is
 * fetched.
 */
export function versionMarker(v: unknown): string | null {
  const m = stableMarker(v);
  return m !== null && /\d/.test(m) ? m : null;
}
