// What the gateway (`/v1`) sends, as zod schemas of the `data` member. Lenient where the seed
// leaves shapes open: decimal cells stay `unknown` and are read by readGatewayDecimal, the
// sub-shapes it does not show (kpis, streams, methodology, ...) stay `unknown`, and unknown
// fields are kept (loose objects) so they end up in `payload`.
import { z } from 'zod';
import { idLike } from './app.ts';

const text = z.string().nullish();
const cell = z.unknown().optional();

export const gatewayTokenItem = z.looseObject({ slug: z.string().min(1), symbol: text, name: text, href: text });
export type GatewayTokenItem = z.infer<typeof gatewayTokenItem>;

/** A row names its token by `slug`, by `token.slug` (or a bare `token` string), or only by `symbol`. */
export const gatewayScreenerRow = z.looseObject({
  slug: text,
  token: z.union([z.string(), z.looseObject({ slug: text, symbol: text, name: text })]).nullish(),
  symbol: text,
  name: text,
  priceUsd: cell,
  mcap: cell,
  effMcap: cell,
  effRatio: cell,
  revAnnualized: cell,
  multAnnualized: cell,
  windows: z.record(z.string(), z.unknown()).nullish(),
  streams: z.array(z.unknown()).nullish(),
  dataFreshness: z.unknown().optional(),
  fcfMomentum: cell,
});
export type GatewayScreenerRowIn = z.infer<typeof gatewayScreenerRow>;

export const gatewayWindow = z.looseObject({ rev: cell, mult: cell });
export const gatewayStream = z.looseObject({ key: idLike, label: text });

export const gatewayInsight = z.looseObject({
  id: idLike.optional(),
  type: text,
  title: text,
  tokenSlug: text,
  value: cell,
  window: text,
  generatedAt: z.unknown().optional(),
});

export const gatewaySection = z.looseObject({
  supported: z.boolean().nullish(),
  state: text,
  reason: text,
  asOf: z.unknown().optional(),
});

export const gatewayPageShell = z.looseObject({
  meta: z
    .looseObject({
      tokenId: z.unknown().optional(),
      symbol: text,
      name: text,
      slug: text,
      chain: text,
      protocolType: text,
      priceUsd: cell,
      imageUrl: text,
    })
    .nullish(),
  combinedRevenue: z.looseObject({ annualized: cell, allTime: cell, deltaPct: cell, deltaAbs: cell }).nullish(),
  sections: z.record(z.string(), z.unknown()).nullish(),
  chartDefs: z.unknown().optional(),
  kpis: z.unknown().optional(),
  revenueFunctions: z.unknown().optional(),
  fundamentals: z.unknown().optional(),
  methodology: z.unknown().optional(),
  verification: z.unknown().optional(),
});
export type GatewayPageShellIn = z.infer<typeof gatewayPageShell>;

/** TrendData, or null: the series is not materialized for that token and period. */
export const gatewayTrend = z
  .looseObject({
    times: z.array(z.unknown()),
    series: z.array(z.looseObject({ key: idLike, values: z.array(z.unknown()) })),
  })
  .nullable();
export type GatewayTrendIn = NonNullable<z.infer<typeof gatewayTrend>>;

export const gatewayChartSeries = z.looseObject({ key: idLike, label: text, render: text });

export const gatewayChartItem = z.looseObject({
  id: idLike.optional(),
  type: text,
  currentTimeframe: text,
  dataFrom: z.unknown().optional(),
  dataThrough: z.unknown().optional(),
  config: z.looseObject({ title: text, series: z.array(z.unknown()).nullish() }).nullish(),
  data: z.array(z.unknown()),
});
export type GatewayChartItemIn = z.infer<typeof gatewayChartItem>;

/** The product OpenAPI document: not an envelope; only `paths` matters for drift. */
export const openapiDocument = z.looseObject({
  openapi: text,
  info: z.looseObject({ version: z.unknown().optional() }).nullish(),
  paths: z.record(z.string(), z.unknown()),
});


