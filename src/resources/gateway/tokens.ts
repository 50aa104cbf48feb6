// /v1/tokens: the gateway's token catalog, root of the gateway walk. It plans the screener,
// the contract check and every token's page, history (per configured period) and charts.
// Tokens it stops listing get `delisted_at`, but only when the list came back whole.
//
// Change marker: the gateway serves every surface from one read plane and gives its items no
// version of their own; the catalog's `meta.asOf` is the read plane's as-of, and it moves
// whenever the data behind the token routes does. It is handed to each token's page, history
// and chart catalog, which skip their fetch while it is as at their last success (and for
// at most TE_MARKER_MAX_AGE_HOURS). No asOf, no marker: everything is fetched.
import { z } from 'zod';
import { gatewayTokens } from '../../schema/warehouse/gateway.ts';
import { readTokenList, type TokenListRead } from '../../engine/lists.ts';
import { rowMeta } from '../../engine/rows.ts';
import { wholeSet } from '../../engine/sets.ts';
import { fetchList } from '../../engine/fetch-list.ts';
import { wholeListOf } from '../../engine/not-found.ts';
import { defineJob, into, type JobContext, type JobRequest } from '../../engine/types.ts';
import { textOrNull } from './cells.ts';
import { gatewayChartsJob } from './charts.ts';
import { gatewayHistoryJob } from './history.ts';
import { gatewayPageJob } from './page.ts';

/** Pure: the catalog's rows (name and href are read from the item as sent). */
export function gatewayTokenRows(ctx: JobContext, list: TokenListRead, asOf: Date | null): (typeof gatewayTokens.$inferInsert)[] {
  return list.items.map(({ item, raw }) => {
    const r = raw as Record<string, unknown>;
    return {
      slug: item.slug,
      symbol: item.symbol ?? null,
      name: textOrNull(r.name),
      href: textOrNull(r.href),
      delistedAt: null,
      payload: raw,
      ...rowMeta(ctx, { asOf }),
    };
  });
}

/** Pure: the change marker of the token routes, from the catalog's meta.asOf (null without one). */
export function catalogMarker(asOf: Date | null): string | null {
  return asOf ? asOf.toISOString() : null;
}

/** Pure: the walk below the catalog; `marker` goes to every per-token job. */
export function gatewayFollowUps(slugs: readonly string[], periods: readonly string[], marker: string | null = null): JobRequest[] {
  const out: JobRequest[] = [
    { name: 'gateway.screener', payload: {} },
    { name: 'gateway.openapi', payload: {} },
  ];
  const m = marker ? { marker } : {};
  for (const slug of slugs) {
    out.push({ name: 'gateway.page', payload: { slug, ...m } });
    for (const period of periods) out.push({ name: 'gateway.history', payload: { slug, period, ...m } });
    out.push({ name: 'gateway.charts', payload: { slug, ...m } });
  }
  return out;
}

export const gatewayTokensJob = defineJob({
  name: 'gateway.tokens',
  root: true,
  source: 'gateway',
  group: 'tokens',
  payload: z.object({}),
  resource: () => 'tokens',
  async handle(ctx) {
    const f = await fetchList(ctx, { route: 'gateway.tokens' }, z.array(z.unknown()));
    const list = readTokenList(f.items ?? [], f.count);
    const rows = gatewayTokenRows(ctx, list, f.meta.asOf);
    const slugs = rows.map((r) => r.slug);
    const followUps = gatewayFollowUps(slugs, ctx.settings.gatewayHistoryPeriods, catalogMarker(f.meta.asOf));
    return {
      status: list.complete ? 'ok' : 'partial',
      asOf: f.meta.asOf,
      hash: f.sha256,
      details: { listed: rows.length, invalidItems: list.invalidItems, complete: list.complete, count: f.count ?? null, pages: f.pages.length },
      // A whole list delists the tokens it no longer lists (a failed or partial one never does).
      writes: [into(gatewayTokens, rows, { ...wholeSet(gatewayTokens, {}, list.complete), fromEach: list.items.map((i) => f.pageOf(i.raw)) })],
      followUps,
      // A whole list plans every token route that exists: one it leaves out is gone.
      ...(list.complete ? { wholeList: wholeListOf('token/', [gatewayPageJob, gatewayHistoryJob, gatewayChartsJob], followUps) } : {}),
    };
  },
});
