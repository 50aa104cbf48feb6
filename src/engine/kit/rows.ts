// Columns and dates every resource's rows share.
import type { ReadInput } from './types.ts';

/** What a row's bookkeeping needs of the read: the run it belongs to. */
export type Stamp = Pick<ReadInput, 'runId'>;

/**
 * Columns every normalized row carries. Not `fetched_at`: known time is the warehouse
 * server's, the column's default (src/schema/warehouse/columns.ts).
 */
export function rowMeta(ctx: Stamp, extra: { asOf?: Date | null; freshness?: string | null; status?: string } = {}) {
  return {
    asOf: extra.asOf ?? null,
    freshness: extra.freshness ?? null,
    status: extra.status ?? 'ok',
    runId: ctx.runId,
  };
}

/** The UTC calendar date of a moment, for the daily archives. */
export function utcDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/**
 * Upstream's freshness verdicts of a list's rows, counted (`{ fresh: 11, stale: 1 }`): a list
 * resource (a screener) has no verdict of its own, its rows do. Kept in the resource state's
 * `details.freshness`, which analytics.data_age counts. Null when no row carries a verdict. Pure.
 */
export function verdictCounts(verdicts: readonly (string | null | undefined)[]): Record<string, number> | null {
  const out: Record<string, number> = {};
  for (const v of verdicts) if (typeof v === 'string' && /^[A-Za-z_-]+$/.test(v)) out[v] = (out[v] ?? 0) + 1;
  return Object.keys(out).length > 0 ? out : null;
}
