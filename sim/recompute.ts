// Upstream recomputations: the same data computed again, served under later `asOf` and
// `generatedAt` instants (contract: volatile fields make no version). Applied to a response's
// whole JSON (data, siblings and meta) as it leaves, so the dataset, its truth (`sim.data`)
// and every value stay as they are; only those instants move. `servedAt` moves with the clock
// on every response anyway.

/** The members a recomputation moves, wherever they sit. */
export const RECOMPUTED_FIELDS: readonly string[] = ['asOf', 'generatedAt'];

/** which recomputation is served: a number (0: none), or a new one for every response */
export type Recomputation = number | 'eachResponse';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** one instant moved `minutes` later; a date-only value becomes that day's timestamp, moved */
export function movedInstant(value: string, minutes: number): string {
  const t = Date.parse(DATE_ONLY.test(value) ? `${value}T00:00:00.000Z` : value);
  return Number.isNaN(t) ? value : new Date(t + minutes * 60_000).toISOString();
}

/**
 * Pure: `value` with every string `asOf` and `generatedAt` moved `minutes` later, at any depth.
 * Plain objects and arrays are copied; anything else (a LosslessNumber) is kept as it is.
 */
export function recomputed(value: unknown, minutes: number): unknown {
  if (minutes === 0) return value;
  if (Array.isArray(value)) return value.map((v) => recomputed(v, minutes));
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = RECOMPUTED_FIELDS.includes(k) && typeof v === 'string' ? movedInstant(v, minutes) : recomputed(v, minutes);
  return out;
}

/** the minutes recomputation `r` moves instants by, for the response numbered `seq` */
export function recomputationMinutes(r: Recomputation, seq: number): number {
  return r === 'eachResponse' ? seq : r;
}
