// What every generator needs to know about the dataset being generated.
import { ANCHOR_DATE, addDays } from './calendar.ts';
import type { TokenDef } from './tokens.ts';

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
}

export interface GenParams {
  seed: number;
  tokens: number;
  historyDays: number;
  chartsPerToken: number;
}

export function genContext(p: GenParams, epoch: number): GenContext {
  const firstDate = addDays(ANCHOR_DATE, -(p.historyDays - 1));
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
  };
}

/** index of the token delisted from epoch 1 on ('cobalt-dex'); absent with fewer tokens */
export const DELISTED_INDEX = 2;
/** index of the token whose values and bundle change at epoch 1 ('aurora') */
export const REVISED_INDEX = 0;

export function isListed(ctx: GenContext, t: TokenDef): boolean {
  return !(ctx.epoch >= 1 && t.index === DELISTED_INDEX);
}
