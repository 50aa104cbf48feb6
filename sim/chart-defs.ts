// Curated chart definitions. Chart keys and row schemas are token-specific upstream, so each
// token gets its own seeded pick from a pool, and 'revenue-by-stream' has one series per
// stream of that token.
import type { Timeframe } from './dataset-types.ts';
import { rngFor } from './random.ts';
import { componentStreams, type TokenDef } from './tokens.ts';

export interface SeriesDef {
  key: string;
  label: string;
  unit: 'USD' | 'x';
  kind: 'gauge' | 'rate' | 'ratio';
  render: 'line' | 'bar';
  /** typical magnitude of the values */
  scale: number;
  /** whether values can go below zero */
  signed: boolean;
}

export interface ChartDef {
  key: string;
  title: string;
  section: 'streams' | 'fundamentals' | 'valuation';
  series: SeriesDef[];
}

const usd = (key: string, label: string, scale: number, render: 'line' | 'bar' = 'bar', kind: 'rate' | 'gauge' = 'rate', signed = false): SeriesDef => ({
  key,
  label,
  unit: 'USD',
  kind,
  render,
  scale,
  signed,
});
const ratio = (key: string, label: string, scale: number): SeriesDef => ({ key, label, unit: 'x', kind: 'ratio', render: 'line', scale, signed: false });

const POOL: ChartDef[] = [
  { key: 'fcf-vs-mcap', title: 'Holder FCF vs effective market cap', section: 'valuation', series: [usd('holderFcf', 'Holder FCF', 2e6, 'bar', 'rate', true), usd('effectiveMarketCap', 'Effective market cap', 8e9, 'line', 'gauge')] },
  { key: 'buybacks', title: 'Buybacks', section: 'streams', series: [usd('buybackUsd', 'Buybacks (USD)', 4e5)] },
  { key: 'p-fcf-bands', title: 'P/FCF bands', section: 'valuation', series: [ratio('erm30d', 'P/FCF 30d', 25), ratio('erm365d', 'P/FCF 365d', 30)] },
  { key: 'burns', title: 'Token burns', section: 'streams', series: [usd('burnUsd', 'Burns (USD)', 1.5e5)] },
  { key: 'staking-yield', title: 'Staking yield', section: 'streams', series: [usd('stakingYieldUsd', 'Staking rewards (USD)', 3e5), ratio('stakingApr', 'Staking APR', 0.07)] },
  { key: 'fee-split', title: 'Fee split', section: 'streams', series: [usd('holderShare', 'Holder share', 6e5), usd('protocolShare', 'Protocol share', 4e5)] },
  { key: 'treasury', title: 'Treasury', section: 'fundamentals', series: [usd('treasuryUsd', 'Treasury (USD)', 2.5e8, 'line', 'gauge')] },
  { key: 'emissions', title: 'Emissions vs FCF', section: 'fundamentals', series: [usd('emissionsUsd', 'Emissions (USD)', 9e5), usd('holderFcf', 'Holder FCF', 2e6, 'line', 'rate', true)] },
];

const TIMEFRAMES: Timeframe[] = ['7d', '30d', '90d', '180d', '365d', '1y', 'all'];

function revenueByStream(t: TokenDef): ChartDef {
  return {
    key: 'revenue-by-stream',
    title: 'Revenue by stream',
    section: 'streams',
    series: componentStreams(t).map((s) => usd(`${s.key}Usd`, s.label, 5e5)),
  };
}

/** the token's charts, `count` of them; which and in what order depends on the seed */
export function chartsFor(seed: number, source: 'app' | 'gateway', t: TokenDef, count: number): ChartDef[] {
  if (count <= 0) return [];
  const rng = rngFor(seed, 'charts', source, t.slug);
  const picked = [revenueByStream(t), ...rng.shuffle(POOL)];
  const out = picked.slice(0, count);
  for (let i = out.length; i < count; i++) {
    out.push({ key: `custom-${i + 1}`, title: `Custom chart ${i + 1}`, section: 'fundamentals', series: [usd(`metric${i + 1}`, `Metric ${i + 1}`, 1e6, 'line')] });
  }
  return out;
}

/** the gateway timeframes a chart supports: always 30d and 90d, plus a seeded few */
export function chartTimeframes(seed: number, slug: string, chartKey: string): Timeframe[] {
  const rng = rngFor(seed, 'timeframes', slug, chartKey);
  return TIMEFRAMES.filter((tf) => tf === '30d' || tf === '90d' || rng.chance(0.6));
}
