// The numbers a command line gives, read one way by every command: digits only, in range,
// or exit 2 naming the flag and the value. Number() would take '' as 0, '0x10' as 16 and
// '1e3' as 1000, none of which anyone means as a count, a port or a number of hours.
import { UsageError } from './context.ts';

/** Pure: the value as given, for a message: quoted, cut short. */
export function shownValue(raw: string): string {
  return JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);
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
