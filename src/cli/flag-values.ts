// The numbers a command line gives, read one way by every command: digits only, in range,
// or exit 2 naming the flag and the value. Number() would take '' as 0, '0x10' as 16 and
// '1e3' as 1000, none of which anyone means as a count, a port or a number of hours.
import { UsageError } from './context.ts';

/** Pure: the value as given, for a message: quoted, cut short. */
export function shownValue(raw: string): string {
  return JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);
}

/**
 * Pure: `--tokens -5` as `--tokens=-5` for each of `flags` (those that take a number), so that
 * a negative number is judged as a value, and refused naming the flag and what it must be,
 * rather than taken by the argument parser for an option ("argument is ambiguous").
 */
export function joinNegativeValues(argv: readonly string[], flags: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    if (flags.includes(a) && next !== undefined && /^-[\d.]/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** Pure: a whole number in decimal digits, from `min` to `max`. */
export function wholeNumberFlag(flag: string, raw: string, min: number, max: number, unit?: string): number {
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}${unit ? ` (${unit})` : ''}, not ${shownValue(raw)}`);
  }
  return n;
}

/** Pure: a number greater than 0 in decimal digits, a fraction allowed (`24`, `1.5`). */
export function positiveNumberFlag(flag: string, raw: string, unit: string, example: string): number {
  const n = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : NaN;
  if (!(n > 0) || !Number.isFinite(n)) throw new UsageError(`${flag} must be a number of ${unit} greater than 0 (e.g. ${flag} ${example}), not ${shownValue(raw)}`);
  return n;
}
