// /v1/tokens/{slug}: the token page shell: meta and combined revenue into columns, the
// sub-shapes the seed does not show (kpis, revenueFunctions, fundamentals, methodology,
// verification, chartDefs) as jsonb, and one row per section. A page without `sections`
// (or with `sections: null`) states nothing about them: it is refused, its body kept
// `invalid`, and the stored page and sections stay as they were.
import { z } from 'zod';
import { gatewayPageShell, gatewaySection } from '../../schema/upstream/gateway.ts';
import { isRecord, readInt, readTime } from '../../schema/upstream/values.ts';
import { gatewayTokenPages, gatewayTokenSections } from '../../schema/warehouse/gateway.ts';
import { rowMeta, type Stamp } from '../../engine/kit/rows.ts';
import { wholeSet } from '../../engine/kit/stated-set.ts';
import { CellTally } from '../../engine/kit/cell-tally.ts';
import { defineJob, into, refused } from '../../engine/kit/types.ts';
import { decimalReader, rowStatus } from './cells.ts';
import type { GatewayTokenItem } from './tokens.ts';

/** `marker`: what says the token's routes changed (see tokens.ts); absent, they are fetched. */
export const slugPayload = z.object({ slug: z.string().min(1), marker: z.string().nullish() });

/** Pure: the page row and its sections. */
export function normalizePage(input: Stamp, slug: string, data: z.infer<typeof gatewayPageShell>, raw: unknown, asOf: Date | null) {
  const m: Partial<NonNullable<typeof data.meta>> = data.meta ?? {};
  const c: Partial<NonNullable<typeof data.combinedRevenue>> = data.combinedRevenue ?? {};
  const dec = decimalReader();
  const jsonb = (v: unknown) => (v === undefined ? null : v);
  const page: typeof gatewayTokenPages.$inferInsert = {
    tokenSlug: slug,
    tokenId: readInt(m.tokenId) ?? null,
    symbol: m.symbol ?? null,
    name: m.name ?? null,
    chain: m.chain ?? null,
    protocolType: m.protocolType ?? null,
    priceUsd: dec.read(m.priceUsd, 'meta.priceUsd'),
    imageUrl: m.imageUrl ?? null,
    combinedAnnualized: dec.read(c.annualized, 'combinedRevenue.annualized'),
    combinedAllTime: dec.read(c.allTime, 'combinedRevenue.allTime'),
    combinedDeltaPct: dec.read(c.deltaPct, 'combinedRevenue.deltaPct'),
    combinedDeltaAbs: dec.read(c.deltaAbs, 'combinedRevenue.deltaAbs'),
    kpis: jsonb(data.kpis),
    revenueFunctions: jsonb(data.revenueFunctions),
    fundamentals: jsonb(data.fundamentals),
    methodology: jsonb(data.methodology),
    verification: jsonb(data.verification),
    chartDefs: jsonb(data.chartDefs),
    payload: raw,
    ...rowMeta(input, { asOf }),
  };
  // A token id that is not an integer stays in the payload only.
  if (m.tokenId !== undefined && m.tokenId !== null && page.tokenId === null) dec.invalid.push('meta.tokenId');
  page.status = rowStatus(dec);
  const sections = Object.entries(data.sections ?? {}).map(([section, value]): typeof gatewayTokenSections.$inferInsert => {
    // A JSON number parses as a LosslessNumber object: only a plain object is a section.
    const s = gatewaySection.safeParse(isRecord(value) ? value : null);
    const d = s.success ? s.data : null;
    return {
      tokenSlug: slug,
      section,
      supported: d?.supported ?? null,
      state: d?.state ?? null,
      reason: d?.reason ?? null,
      payload: value,
      ...rowMeta(input, { asOf: readTime(d?.asOf), status: s.success ? 'ok' : 'invalid' }),
    };
  });
  return { page, sections, invalid: dec.invalid };
}

export const gatewayPageJob = defineJob({
  name: 'gateway.page',
  route: 'gateway.token',
  source: 'gateway',
  group: 'page',
  plannedBy: 'gateway.tokens',
  each: (t: GatewayTokenItem) => [t],
  payload: slugPayload,
  resource: (p) => `token/${p.slug}/page`,
  token: (p) => p.slug,
  marker: (p) => p.marker,
  one: {
    request: (p) => ({ params: { slug: p.slug } }),
    schema: gatewayPageShell,
    read(input, f) {
      const p = input.payload;
      if (f.data.sections === undefined || f.data.sections === null) return refused('the page carries no `sections`: it states none of them');
      const raw = isRecord(f.body.data) ? f.body.data : {};
      const n = normalizePage(input, p.slug, f.data, raw, f.meta.asOf);
      const cells = new CellTally();
      for (let i = 0; i < n.invalid.length; i++) cells.cell(false);
      return {
        status: 'ok',
        details: n.invalid.length ? { invalid: n.invalid } : null,
        cells,
        writes: [
          into(gatewayTokenPages, [n.page]),
          // Sections belong to the page: one the page no longer has is removed with it.
          into(gatewayTokenSections, n.sections, wholeSet(gatewayTokenSections, { tokenSlug: p.slug }, true)),
        ],
      };
    },
  },
});
