// Columns and dates every handler's rows share.
import type { JobContext } from '../types.ts';

/** Columns every normalized row carries. */
export function rowMeta(ctx: JobContext, extra: { asOf?: Date | null; freshness?: string | null; status?: string } = {}) {
  return {
    fetchedAt: ctx.now(),
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
