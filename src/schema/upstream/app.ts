// What the app host (`/api/v1`) sends, as zod schemas of the `data` member. Lenient where
// the seed leaves shapes open: numeric cells stay `unknown` and are read by values.ts,
// unknown fields are kept (loose objects) and end up in `payload`.
import { isLosslessNumber } from 'lossless-json';
import { z } from 'zod';

const text = z.string().nullish();
/** An id that may come as a string or a JSON number. */
export const idLike = z.union([z.string().min(1), z.custom<{ value: string }>((v) => isLosslessNumber(v)).transform((v) => v.value)]);

export const metricEntry = z.looseObject({ slug: z.string().min(1), unit: text, kind: text, group: text });
export const metricCatalog = z.array(z.unknown());

export const coverage = z.looseObject({
  screener: z.boolean().optional(),
  snapshot: z.boolean().optional(),
  metricHistory: z.boolean().optional(),
  trend: z.boolean().optional(),
  charts: z.boolean().optional(),
  backtests: z.boolean().optional(),
});

export const tokenItem = z.looseObject({
  slug: z.string().min(1),
  displayName: text,
  symbol: text,
  imageUrl: text,
  coverage: coverage.nullish(),
  freshness: z.unknown().optional(),
});
export type TokenItem = z.infer<typeof tokenItem>;

export const tokenRef = z.union([z.string().min(1), z.looseObject({ slug: z.string().min(1), displayName: text, symbol: text })]);

export const screenerRow = z.looseObject({ token: tokenRef, freshness: z.unknown().optional() });

export const snapshot = z.looseObject({
  token: z.looseObject({ slug: z.string().min(1), displayName: text, symbol: text }).optional(),
  row: z.looseObject({}).nullish(),
  sections: z.record(z.string(), z.unknown()).nullish(),
  combinedRevenue: z.looseObject({}).nullish(),
  fundamentals: z.looseObject({}).nullish(),
  streams: z
    .array(z.looseObject({ key: z.string().min(1), label: text, mixPercentLabel: text, annualizedRevenue: z.unknown().optional() }))
    .nullish(),
  freshness: z.looseObject({ generatedAt: z.unknown().optional(), status: text, warnings: z.unknown().optional() }).nullish(),
});

export const column = z.looseObject({ key: z.string().min(1), unit: text, kind: text, label: text });
export type Column = z.infer<typeof column>;
const tableRow = z.union([z.array(z.unknown()), z.record(z.string(), z.unknown())]);

export const history = z.looseObject({
  stream: text,
  interval: text,
  columns: z.array(column).min(1),
  rows: z.array(tableRow),
  freshness: z.unknown().optional(),
});
export type History = z.infer<typeof history>;
/** One MetricHistory, or (with `stream=all`) one per stream. */
export const historyData = z.union([history, z.array(history)]);

export const chartCatalogItem = z.looseObject({
  key: idLike.optional(),
  chartKey: idLike.optional(),
  id: idLike.optional(),
  title: text,
  section: text,
  freshness: z.unknown().optional(),
  rowCount: z.unknown().optional(),
  row_count: z.unknown().optional(),
  href: text,
  dataEndpoint: text,
  endpoint: text,
  links: z.looseObject({ data: text }).nullish(),
});
export type ChartCatalogItem = z.infer<typeof chartCatalogItem>;

export const chartData = z.looseObject({
  title: text,
  section: text,
  x: text,
  columns: z.array(column).min(1),
  rows: z.array(tableRow),
  freshness: z.unknown().optional(),
});

// The graph's arrays may be left out, but a bundle without one states nothing about it:
// absent is not empty (src/resources/app/bundle.ts refuses such a bundle rather than closing the graph).
export const bundle = z.looseObject({
  summary: z.unknown().optional(),
  valueDrivers: z.array(z.looseObject({ id: idLike, type: text, description: text, formula: text })).optional(),
  valueDriverEdges: z.array(z.looseObject({ fromValueDriverId: idLike, toValueDriverId: idLike })).optional(),
  tokenFunctions: z.array(z.looseObject({ id: idLike, type: text, description: text, parentId: idLike.nullish() })).optional(),
});
