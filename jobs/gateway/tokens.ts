// /v1/tokens: the gateway's token catalog, root of the gateway walk. It plans the screener,
// the contract check and every token's page, history (per configured period) and charts.
// Tokens it stops listing get `delisted_at`, but only when the list came back whole.
import { and, isNull, notInArray } from 'drizzle-orm';
import { z } from 'zod';
import { gatewayTokens } from '../../schema/warehouse/gateway.ts';
import { upsertRows } from '../../src/warehouse/upsert.ts';
import { readTokenList, type TokenListRead } from '../shared/lists.ts';
import { commit, rowMeta } from '../shared/commit.ts';
import { fetchData } from '../shared/fetch.ts';
import { defineJob, type JobContext, type JobRequest } from '../types.ts';
import { textOrNull } from './cells.ts';

/** Pure: the catalog's rows (name and href are read from the item as sent). */
export function gatewayTokenRows(ctx: JobContext, list: TokenListRead, asOf: Date | null): (typeof gatewayTokens.$inferInsert)[] {
  const now = ctx.now();
  return list.items.map(({ item, raw }) => {
    const r = raw as Record<string, unknown>;
    return {
      slug: item.slug,
      symbol: item.symbol ?? null,
      name: textOrNull(r.name),
      href: textOrNull(r.href),
      firstSeenAt: now,
      lastSeenAt: now,
      delistedAt: null,
      payload: raw,
      ...rowMeta(ctx, { asOf }),
    };
  });
}

/** Pure: the walk below the catalog. */
export function gatewayFollowUps(slugs: readonly string[], periods: readonly string[]): JobRequest[] {
  const out: JobRequest[] = [
    { name: 'gateway.screener', payload: {} },
    { name: 'gateway.openapi', payload: {} },
  ];
  for (const slug of slugs) {
    out.push({ name: 'gateway.page', payload: { slug } });
    for (const period of periods) out.push({ name: 'gateway.history', payload: { slug, period } });
    out.push({ name: 'gateway.charts', payload: { slug } });
  }
  return out;
}

export const gatewayTokensJob = defineJob({
  name: 'gateway.tokens',
  source: 'gateway',
  group: 'tokens',
  payload: z.object({}),
  resource: () => 'tokens',
  async handle(ctx) {
    const f = await fetchData(ctx, { route: 'gateway.tokens' }, z.array(z.unknown()));
    const list = readTokenList(f.data, f.meta.count);
    const rows = gatewayTokenRows(ctx, list, f.meta.asOf);
    const status = list.complete ? 'ok' : 'partial';
    const n = await commit(
      ctx,
      { source: 'gateway', resource: 'tokens', kind: 'tokens', status, asOf: f.meta.asOf, hash: f.response.sha256, details: { listed: rows.length, invalidItems: list.invalidItems, complete: list.complete, count: f.meta.count ?? null } },
      async (tx) => {
        const written = await upsertRows(tx, gatewayTokens, rows, { target: [gatewayTokens.slug], keep: ['firstSeenAt'] });
        if (list.complete) {
          await tx
            .update(gatewayTokens)
            .set({ delistedAt: ctx.now() })
            .where(and(isNull(gatewayTokens.delistedAt), notInArray(gatewayTokens.slug, rows.map((r) => r.slug))));
        }
        return written;
      },
    );
    const slugs = rows.map((r) => r.slug);
    return { status, rows: n, followUps: gatewayFollowUps(slugs, ctx.settings.gatewayHistoryPeriods) };
  },
});
