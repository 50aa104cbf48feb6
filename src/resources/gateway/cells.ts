// Pure: reading the gateway's decimal cells of one object, remembering which were unreadable
// so the row can say `invalid` (its raw value stays in the row's payload).
import { createHash } from 'node:crypto';
import { readDecimal, stableMarker } from '../../schema/upstream/values.ts';

export interface DecimalReader {
  /** The exact text of a decimal cell, null when absent or unreadable. */
  read(v: unknown, path: string): string | null;
  /** Paths of the unreadable cells so far. */
  readonly invalid: string[];
}

export function decimalReader(): DecimalReader {
  const invalid: string[] = [];
  return {
    invalid,
    read(v, path) {
      const d = readDecimal(v);
      if (d.ok) return d.value;
      invalid.push(path);
      return null;
    },
  };
}

/** `ok`, or `invalid` when any cell could not be read. */
export function rowStatus(r: DecimalReader): 'ok' | 'invalid' {
  return r.invalid.length > 0 ? 'invalid' : 'ok';
}

/** A key for content that has no id of its own: the hash of its canonical JSON. */
export function contentKey(v: unknown): string {
  return `sha256:${createHash('sha256')
    .update(stableMarker(v) ?? 'null')
    .digest('hex')}`;
}

/** A non-empty string, else null. */
export function textOrNull(v: unknown): string | null {
  return typeof v === 'string' && v.length > 0 ? v : null;
}
