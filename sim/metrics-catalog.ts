// The app host's metric catalog: every metric slug the app responses use, with its unit and
// kind. The number forms 'number' and 'string' drop the MetricValue wrapper, so this is the
// only place a client learns units and kinds from then.
import type { AppMetricEntry, Window } from './dataset-types.ts';

export const WINDOWS: readonly Window[] = ['7d', '30d', '90d', '180d', '365d'];
export const HISTORY_METRICS = ['holderFcf', 'effectiveMarketCap', 'erm7d', 'erm30d', 'erm90d', 'erm180d', 'erm365d'] as const;

const entries: AppMetricEntry[] = [
  { slug: 'effectiveMarketCap', unit: 'USD', kind: 'gauge', group: 'screener' },
  { slug: 'effectiveRatio', unit: 'x', kind: 'ratio', group: 'screener' },
  { slug: 'annualizedRevenue', unit: 'USD', kind: 'rate', group: 'screener' },
  ...WINDOWS.map((w): AppMetricEntry => ({ slug: `multiple.${w}`, unit: 'x', kind: 'ratio', group: 'screener' })),
  ...WINDOWS.map((w): AppMetricEntry => ({ slug: `revenue.${w}`, unit: 'USD', kind: 'rate', group: 'screener' })),
  { slug: 'stream.annualizedRevenue', unit: 'USD', kind: 'rate', group: 'screener' },
  { slug: 'combinedRevenue.annualized', unit: 'USD', kind: 'rate', group: 'snapshot' },
  { slug: 'fundamentals.fdvToRevenue', unit: 'x', kind: 'ratio', group: 'snapshot' },
  { slug: 'fundamentals.mcapToFcf', unit: 'x', kind: 'ratio', group: 'snapshot' },
  { slug: 'fundamentals.treasuryUsd', unit: 'USD', kind: 'gauge', group: 'snapshot' },
  { slug: 'holderFcf', unit: 'USD', kind: 'rate', group: 'history' },
  ...WINDOWS.map((w): AppMetricEntry => ({ slug: `erm${w}`, unit: 'x', kind: 'ratio', group: 'history' })),
  ...['buybackUsd', 'burnUsd', 'stakingYieldUsd', 'holderShare', 'protocolShare', 'emissionsUsd', 'treasuryUsd'].map(
    (slug): AppMetricEntry => ({ slug: `chart.${slug}`, unit: 'USD', kind: slug === 'treasuryUsd' ? 'gauge' : 'rate', group: 'charts' }),
  ),
  { slug: 'chart.stakingApr', unit: 'x', kind: 'ratio', group: 'charts' },
];

export const METRIC_CATALOG: readonly AppMetricEntry[] = entries;
const bySlug = new Map(entries.map((e) => [e.slug, e]));

export function metricEntry(slug: string): AppMetricEntry {
  const e = bySlug.get(slug);
  if (!e) throw new Error(`metric ${slug} missing from the catalog`);
  return e;
}
