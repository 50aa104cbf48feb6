// Understood or refused: the checks every resource's rows pass before they are written.
//
// A reader records how each cell it read went (`CellTally`, kit/cell-tally.ts); the lifecycle
// judges the tally before it writes: a column read as numeric none of whose cells is a number,
// or a time it could not read, means the response was not understood, and nothing of it is
// written; single unreadable cells make the resource `partial`. The other sign, two rows for
// one key with different values, is what the write preparation returns as a refusal
// (prepareUpsert in src/store/write/upsert.ts), a value, never an error thrown up to here.
import { NotUnderstoodError } from '../../lib/errors.ts';
import type { JobContext } from '../kit/types.ts';
import { invalid } from './fetch.ts';
import type { ReadResponse } from './findings.ts';

/**
 * The error that refuses what this job read: its bodies kept as `invalid` (with the reason
 * logged once), the resource recorded `invalid` by the runner unless the job recovers (the
 * history's stream-by-stream fallback). A body already kept is only marked seen again.
 */
export function refuse(ctx: JobContext, reason: string): NotUnderstoodError {
  // Those read since the last refusal: what went before was judged already.
  return keepRefused(ctx, ctx.findings.takeReceived(), reason, `not understood: ${reason}`);
}

/** Keeps `list` as `invalid` (the last one's reason logged: `lastReason`); the error the job records. */
export function keepRefused(ctx: JobContext, list: readonly ReadResponse[], reason: string, lastReason = reason): NotUnderstoodError {
  const last = list.at(-1);
  for (const { route, response } of list.slice(0, -1)) invalid(ctx, route, response, reason, { quiet: true });
  if (last) {
    const err = invalid(ctx, last.route, last.response, lastReason);
    return new NotUnderstoodError(err.message, err.rawBody);
  }
  ctx.logger.warn({ reason }, 'rows refused: not understood');
  return new NotUnderstoodError(reason);
}
