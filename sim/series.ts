// Daily series. A series is a seeded random walk generated from its first day, so the value
// of a day depends only on earlier days: a later epoch (one more day) keeps every old value
// (but those the revision epoch rewrites on purpose, see README.md).
import { decimalFromFloat } from './decimal.ts';
import { rngFor, type Rng } from './random.ts';

export interface WalkOptions {
  /** typical magnitude */
  scale: number;
  /** daily volatility of the level */
  vol?: number;
  /** whether daily values can dip below zero */
  signed?: boolean;
}

export function walk(seed: number, key: string, days: number, o: WalkOptions): number[] {
  const rng = rngFor(seed, 'walk', key);
  const vol = o.vol ?? 0.03;
  let level = o.scale * rng.range(0.5, 1.5);
  const out: number[] = new Array(days);
  for (let i = 0; i < days; i++) {
    // mean-reverting log walk keeps long histories within a plausible band
    level *= Math.exp(vol * rng.normal() - 0.02 * Math.log(level / o.scale));
    const noise = rng.normal();
    out[i] = o.signed ? level * (0.7 + 0.45 * noise) : level * (1 + 0.08 * noise);
  }
  return out;
}

export interface FormatOptions {
  /** significant digits, or a [min, max] drawn per cell */
  digits: number | [number, number];
  /** share of cells that are null */
  nullRate?: number;
}

/** decimal strings for a float series; nulls drawn per cell, always the same draws per day */
export function formatSeries(seed: number, key: string, values: readonly (number | null)[], o: FormatOptions): (string | null)[] {
  const rng = rngFor(seed, 'format', key);
  return values.map((v) => formatCell(rng, v, o));
}

function formatCell(rng: Rng, v: number | null, o: FormatOptions): string | null {
  // draw the same number of values before the digits whatever the outcome: keeps the
  // sequence aligned for the days that follow
  const isNull = rng.next() < (o.nullRate ?? 0);
  const digits = typeof o.digits === 'number' ? o.digits : rng.int(o.digits[0], o.digits[1]);
  if (v === null || isNull) return null;
  return decimalFromFloat(v, digits, rng);
}

/** trailing means over up to `window` days ending at each day; null with fewer than `min` days */
export function trailingMeans(values: readonly number[], window: number, min: number): (number | null)[] {
  const prefix = new Float64Array(values.length + 1);
  for (let i = 0; i < values.length; i++) prefix[i + 1] = (prefix[i] ?? 0) + (values[i] ?? 0);
  return values.map((_, i) => {
    const from = Math.max(0, i - window + 1);
    const n = i - from + 1;
    return n < min ? null : ((prefix[i + 1] ?? 0) - (prefix[from] ?? 0)) / n;
  });
}
