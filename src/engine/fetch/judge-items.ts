// The engine's half of refusing items alone (the rules: kit/item-refusals.ts): a response the
// client found strings Postgres cannot hold in is judged before its reader reads it, each such
// string placed in an item (that item refused) or outside every item (the response refused
// whole, its bodies kept `invalid` in the try's findings).
import { z } from 'zod';
import type { UpstreamRequest } from '../../upstream/index.ts';
import { locateInItems } from '../kit/item-refusals.ts';
import type { Fetched, FetchedList, ItemsLocator, JobContext } from '../kit/types.ts';
import { invalid } from './fetch.ts';

/**
 * The list with its items that hold strings Postgres cannot store marked refused (`refused`),
 * judged page by page; a list none of whose pages holds one is returned as it is. Throws
 * InvalidResponseError, every page kept `invalid`, when such a string lies outside every item.
 */
export function judgeItems(
  ctx: JobContext,
  route: UpstreamRequest['route'],
  list: FetchedList,
  schema: z.ZodType = z.unknown(),
  listOf: (data: unknown) => unknown[] | undefined = (d) => (Array.isArray(d) ? d : undefined),
): FetchedList {
  if (!list.pages.some((p) => (p.unholdable?.length ?? 0) > 0)) return list;
  const refused = new Map<unknown, string>();
  for (const [n, page] of list.pages.entries()) {
    const [first] = page.unholdable ?? [];
    if (first === undefined) continue;
    const data = (page.body as { data?: unknown } | null)?.data;
    const parsed = schema.safeParse(data);
    const items = list.items !== undefined && parsed.success ? listOf(parsed.data) : undefined;
    const located = items ? locateInItems(page.body, page.unholdable!, items) : { whole: `${first.path} ${first.what}, and the response holds no list` };
    const at = list.pages.length > 1 ? `page ${n + 1}: ` : '';
    if ('whole' in located) {
      const reason = `not understood: ${at}${located.whole}`;
      for (const p of list.pages.slice(0, -1)) invalid(ctx, route, p, reason, { quiet: true });
      throw invalid(ctx, route, list.pages.at(-1)!, reason);
    }
    for (const [index, reason] of located.refused) refused.set(items![index], `${at}${reason}`);
  }
  return { ...list, refused };
}

/**
 * A response that is not a list, whose items its reader located (`Ask.items`: a chart's
 * rows), with the items that hold strings Postgres cannot store marked refused (`refused`,
 * keyed by the items as the schema read them); returned as it is when none holds one. Throws
 * InvalidResponseError, the body kept `invalid`, when such a string lies outside every item.
 */
export function judgeResponse<T>(ctx: JobContext, route: UpstreamRequest['route'], fetched: Fetched<T>, itemsOf: ItemsLocator): Fetched<T> {
  const { response } = fetched;
  const [first] = response.unholdable ?? [];
  if (first === undefined) return fetched;
  const served = itemsOf((response.body as { data?: unknown } | null)?.data);
  const read = itemsOf(fetched.data);
  // The items as served and as read must be the same places, else no item can be told apart.
  const located = served && read && served.length === read.length ? locateInItems(response.body, response.unholdable!, served) : { whole: `${first.path} ${first.what}, and the response holds no items` };
  if ('whole' in located) throw invalid(ctx, route, response, `not understood: ${located.whole}`);
  return { ...fetched, refused: new Map([...located.refused].map(([index, reason]) => [read![index], reason])) };
}
