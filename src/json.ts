// Exact JSON. Upstream numbers are money and ratios: a JS number would round them, so every
// JSON number is parsed to a LosslessNumber (its literal text) and written back unchanged.
import { isLosslessNumber, LosslessNumber, parse, stringify } from 'lossless-json';

export { isLosslessNumber, LosslessNumber };

/**
 * Parses JSON text; every number becomes a LosslessNumber. Throws SyntaxError on invalid JSON.
 * A duplicate key keeps the last value, as JSON.parse and Postgres jsonb do.
 */
export function parseJson(text: string): unknown {
  return parse(text, null, {
    parseNumber: (literal) => new LosslessNumber(literal),
    onDuplicateKey: ({ newValue }) => newValue,
  });
}

/** Writes a value as JSON; LosslessNumbers come out as the literals they were parsed from. */
export function stringifyJson(value: unknown): string {
  const out = stringify(value);
  if (out === undefined) throw new TypeError('value cannot be represented as JSON');
  return out;
}

const DECIMAL = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** The outcome of reading a decimal: its exact text, an absent value, or something that is not a number. */
export type DecimalRead = { ok: true; text: string | null } | { ok: false; reason: string };

/**
 * Reads a value headed for a `numeric` column without ever going through a JS number:
 * a LosslessNumber or a numeric string gives its exact text; null/undefined give null;
 * anything else is `{ ok: false }` so the caller can record the row as `invalid`.
 * Safe JS integers are accepted (they are exact); other JS numbers are not, because by the
 * time they got here they may already have been rounded.
 */
export function readDecimal(v: unknown): DecimalRead {
  if (v === null || v === undefined) return { ok: true, text: null };
  if (isLosslessNumber(v)) return { ok: true, text: v.value };
  if (typeof v === 'string') {
    const s = v.trim();
    return DECIMAL.test(s) ? { ok: true, text: s } : { ok: false, reason: `not a decimal: ${JSON.stringify(v.slice(0, 40))}` };
  }
  if (typeof v === 'number' && Number.isSafeInteger(v)) return { ok: true, text: String(v) };
  if (typeof v === 'bigint') return { ok: true, text: v.toString() };
  return { ok: false, reason: `not a decimal: ${typeof v === 'number' ? 'an inexact JS number' : typeof v}` };
}

/** Thrown by decimalText for a value that is not a decimal; carries the offending value. */
export class InvalidDecimalError extends TypeError {
  override readonly name = 'InvalidDecimalError';
  constructor(
    readonly value: unknown,
    reason: string,
  ) {
    super(reason);
  }
}

/** The exact decimal text of a value, null when absent; throws InvalidDecimalError otherwise. */
export function decimalText(v: unknown): string | null {
  const r = readDecimal(v);
  if (!r.ok) throw new InvalidDecimalError(v, r.reason);
  return r.text;
}
