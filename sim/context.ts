// What every generator needs to know about the dataset being generated.
import { ANCHOR_DATE, addDays } from './calendar.ts';
import type { TokenDef } from './tokens.ts';
import type { HistoryStreams } from './types.ts';

export interface GenContext {
  seed: number;
  historyDays: number;
  chartsPerToken: number;
  tokenCount: number;
  epoch: number;
  /** historyDays + epoch: history grows by a day per epoch, the first day stays put */
  days: number;
  firstDate: string;
  lastDate: string;
  asOf: string;
  historyStreams: HistoryStreams;
}

export interface GenParams {
  seed: number;
  tokens: number;
  historyDays: number;
  chartsPerToken: number;
  /** the last history day at epoch 0 (ANCHOR_DATE when absent) */
  lastDate?: string;
  /** every token's freshness verdict (as seeded when absent) */
  freshness?: 'fresh' | 'stale';
  /** the history streams' metadata ('alike' when absent) */
  historyStreams?: HistoryStreams;
}

/** The `historyStreams` option, checked at start. */
export function historyStreams(value: string): HistoryStreams {
  if (value !== 'alike' && value !== 'distinct') throw new RangeError(`simulator option historyStreams must be 'alike' or 'distinct', got ${String(value)}`);
  return value;
}

export function genContext(p: GenParams, epoch: number): GenContext {
  const firstDate = addDays(p.lastDate ?? ANCHOR_DATE, -(p.historyDays - 1));
  const days = p.historyDays + epoch;
  const lastDate = addDays(firstDate, days - 1);
  return {
    seed: p.seed,
    historyDays: p.historyDays,
    chartsPerToken: p.chartsPerToken,
    tokenCount: p.tokens,
    epoch,
    days,
    firstDate,
    lastDate,
    asOf: `${lastDate}T00:00:00.000Z`,
    historyStreams: p.historyStreams ?? 'alike',
  };
}

/** index of the token delisted at epoch 1 and listed again from epoch 2 on ('cobalt-dex'); absent with fewer tokens */
export const DELISTED_INDEX = 2;
/** index of the token whose values and bundle change at epochs 1 and 2 ('aurora') */
export const REVISED_INDEX = 0;
/** the revision epoch: it relists the delisted token and revises past history; later epochs keep its changes */
export const REVISION_EPOCH = 2;
/** the driver the revised token's research bundle loses at the revision epoch, with its edges */
export const REMOVED_DRIVER_ID = 'vd-2';

export function isListed(ctx: GenContext, t: TokenDef): boolean {
  return !(ctx.epoch === 1 && t.index === DELISTED_INDEX);
}

/** whether this is the revised token at or after the revision epoch */
export function isRevision(ctx: GenContext, t: TokenDef): boolean {
  return ctx.epoch >= REVISION_EPOCH && t.index === REVISED_INDEX;
}

/** a past day the revision epoch rewrites: its index from firstDate, and the factor applied to its values */
export interface RevisedDay {
  index: number;
  date: string;
  /** where it stands relative to a 7-day overlap ending at the revision epoch's last day */
  position: 'insideOverlap' | 'outsideOverlap';
  factor: number;
}

/**
 * The past days revised from the revision epoch on, fixed whatever the later epoch: the
 * revision epoch's lastDate minus 2 days (epoch 0's last day, inside a 7-day overlap), and
 * firstDate plus 3 days (only with at least 9 days of history, so it lies outside the overlap).
 */
export function revisedDays(ctx: GenContext): RevisedDay[] {
  const inside = ctx.historyDays + REVISION_EPOCH - 3;
  const out: RevisedDay[] = [{ index: inside, date: addDays(ctx.firstDate, inside), position: 'insideOverlap', factor: 1.0425 }];
  if (ctx.historyDays >= 9) out.push({ index: 3, date: addDays(ctx.firstDate, 3), position: 'outsideOverlap', factor: 0.9575 });
  return out;
}
