// The gateway's data for one token. Decimals carry 25 to 32 significant digits: more than a
// double (and more than the app host) so any float round trip shows.
import type {
  Decimal,
  GatewayChartCatalogEntry,
  GatewayChartItem,
  GatewayInsight,
  GatewayPageShell,
  GatewayScreenerRow,
  GatewaySection,
  GatewayToken,
  GatewayTrend,
  Period,
  Timeframe,
  Window,
} from './dataset-types.ts';
import { dayList } from './calendar.ts';
import { chartTimeframes, chartsFor, type ChartDef } from './chart-defs.ts';
import { REVISED_INDEX, isRevision, revisedDays, type GenContext } from './context.ts';
import { compareDecimal, decimalFromFloat } from './decimal.ts';
import { WINDOWS } from './metrics-catalog.ts';
import { rngFor, type Rng } from './random.ts';
import { formatSeries, walk } from './series.ts';
import { componentStreams, type TokenDef } from './tokens.ts';

export const PERIOD_DAYS: Record<Timeframe, number> = { '7d': 7, '30d': 30, '90d': 90, '180d': 180, '365d': 365, '1y': 365, all: Number.POSITIVE_INFINITY };

/** nihon-swap: a market cap far beyond a double's integer range, written without exponent */
const HUGE_INDEX = 7;
/** emberline: zero annualized FCF, so its multiple is null */
const ZERO_REV_INDEX = 8;
/** glacier-lend: no price, and no 180d window */
const NO_PRICE_INDEX = 10;

export function gatewayToken(t: TokenDef): GatewayToken {
  return { slug: t.slug, symbol: t.symbol, name: t.displayName, href: `/v1/tokens/${t.slug}` };
}

interface GatewayFloats {
  price: number;
  supply: number;
  mcap: number;
  effRatio: number;
  effMcap: number;
  rev: number;
  windowRev: Record<Window, number>;
  shares: number[];
  allTimeFactor: number;
  deltaPct: number;
  fdvFactor: number;
}

function floats(ctx: GenContext, t: TokenDef): GatewayFloats {
  // every draw happens whatever the token, so special cases do not shift later values
  const rng = rngFor(ctx.seed, 'gw-econ', t.slug);
  const price = 10 ** rng.range(-3, 3.5);
  const supply = 10 ** rng.range(7, 10.5);
  const effRatio = rng.range(0.2, 1.5);
  const multiple = rng.range(5, 120);
  const windowNoise = WINDOWS.map(() => rng.normal());
  const comps = componentStreams(t);
  const weights = comps.map(() => rng.range(0.2, 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const allTimeFactor = rng.range(2, 6);
  const deltaPct = rng.range(-40, 60);
  const fdvFactor = rng.range(1, 2.5);
  const mcap = t.index === HUGE_INDEX ? 1.2345678901234567e23 : price * supply;
  const effMcap = mcap * effRatio;
  const rev = t.index === ZERO_REV_INDEX ? 0 : effMcap / multiple;
  const windowRev = {} as Record<Window, number>;
  WINDOWS.forEach((w, i) => (windowRev[w] = rev * (1 + 0.3 * (windowNoise[i] ?? 0))));
  if (t.index % 4 === 2) windowRev['7d'] = -Math.abs(windowRev['7d']) * 0.4;
  return { price, supply, mcap, effRatio, effMcap, rev, windowRev, shares: weights.map((w) => w / total), allTimeFactor, deltaPct, fdvFactor };
}

/** 25-32 significant digits, or null when x is null or not finite */
function dec(rng: Rng, x: number | null): Decimal | null {
  const digits = rng.int(25, 32);
  if (x === null || !Number.isFinite(x)) return null;
  return decimalFromFloat(x, digits, rng);
}

export function gatewayScreenerRow(ctx: GenContext, t: TokenDef): GatewayScreenerRow {
  const f = floats(ctx, t);
  const rng = rngFor(ctx.seed, 'gw-row', t.slug);
  const div = (a: number, b: number) => (b === 0 ? null : a / b);
  const windows = {} as GatewayScreenerRow['windows'];
  for (const w of WINDOWS) {
    const rev = dec(rng, f.windowRev[w]);
    const mult = dec(rng, div(f.effMcap, f.windowRev[w]));
    windows[w] = t.index === NO_PRICE_INDEX && w === '180d' ? { rev: null, mult: null } : { rev, mult };
  }
  const priceUsd = dec(rng, f.price);
  let effMcap = dec(rng, f.effMcap);
  if (ctx.epoch >= 1 && t.index === REVISED_INDEX) effMcap = revisedGatewayEffMcap(ctx, f.effMcap);
  const momentum = div(f.windowRev['7d'] - f.windowRev['365d'], Math.abs(f.windowRev['365d']));
  return {
    slug: t.slug,
    symbol: t.symbol,
    name: t.displayName,
    priceUsd: t.index === NO_PRICE_INDEX ? null : priceUsd,
    mcap: dec(rng, f.mcap),
    effMcap,
    effRatio: dec(rng, f.effRatio),
    revAnnualized: dec(rng, f.rev),
    // the revision epoch restates it (drawn anyway, so the fields after it keep their values)
    multAnnualized: revisedOr(ctx, t, dec(rng, div(f.effMcap, f.rev)), () => revisedGatewayMult(ctx, f.effMcap / f.rev)),
    windows,
    streams: componentStreams(t).map((s, i) => ({
      key: s.key,
      label: s.label,
      rev: dec(rng, f.rev * (f.shares[i] ?? 0)),
      sharePct: dec(rng, (f.shares[i] ?? 0) * 100),
    })),
    dataFreshness: t.freshness,
    fcfMomentum: dec(rng, momentum),
  };
}

export function revisedGatewayEffMcap(ctx: GenContext, effMcap: number): Decimal {
  return decimalFromFloat(effMcap * 1.0375, 30, rngFor(ctx.seed, 'gw-revision'));
}

function revisedOr(ctx: GenContext, t: TokenDef, value: Decimal | null, revised: () => Decimal): Decimal | null {
  return isRevision(ctx, t) ? revised() : value;
}

/** the revision epoch's restatement of the revised token's multAnnualized (page kpi 'pFcf' shows it too) */
export function revisedGatewayMult(ctx: GenContext, multiple: number): Decimal {
  return decimalFromFloat(multiple * 0.96, 29, rngFor(ctx.seed, 'gw-revision', 'multAnnualized'));
}

/** the revised token's effMcap float, for the epoch-changes summary */
export function gatewayEffMcapFloat(ctx: GenContext, t: TokenDef): number {
  return floats(ctx, t).effMcap;
}

export function gatewayInsights(ctx: GenContext, rows: readonly GatewayScreenerRow[]): GatewayInsight[] {
  const out: GatewayInsight[] = [];
  const positive = rows.filter((r) => r.windows['30d'].mult !== null && !r.windows['30d'].mult.startsWith('-') && r.windows['30d'].mult !== '0');
  const cheapest = positive.reduce<GatewayScreenerRow | null>((best, r) => (best === null || compareDecimal(r.windows['30d'].mult ?? '0', best.windows['30d'].mult ?? '0') < 0 ? r : best), null);
  if (cheapest) {
    out.push({ id: 'lowest-multiple-30d', type: 'lowest-multiple', title: `Lowest 30d P/FCF: ${cheapest.name}`, tokenSlug: cheapest.slug, value: cheapest.windows['30d'].mult, window: '30d', generatedAt: ctx.asOf });
  }
  const withRev = rows.filter((r) => r.revAnnualized !== null);
  const top = withRev.reduce<GatewayScreenerRow | null>((best, r) => (best === null || compareDecimal(r.revAnnualized ?? '0', best.revAnnualized ?? '0') > 0 ? r : best), null);
  if (top) {
    out.push({ id: 'top-holder-fcf', type: 'top-fcf', title: `Highest holder FCF: ${top.name}`, tokenSlug: top.slug, value: top.revAnnualized, window: null, generatedAt: ctx.asOf });
  }
  out.push({ id: 'coverage', type: 'coverage', title: `${rows.length} tokens covered`, tokenSlug: null, value: String(rows.length), window: null, generatedAt: ctx.asOf });
  return out;
}

export function gatewayChartDefs(ctx: GenContext, t: TokenDef): ChartDef[] {
  return t.coverage.charts ? chartsFor(ctx.seed, 'gateway', t, ctx.chartsPerToken) : [];
}

export function gatewayChartCatalog(ctx: GenContext, t: TokenDef): GatewayChartCatalogEntry[] {
  return gatewayChartDefs(ctx, t).map((d) => ({
    key: d.key,
    title: d.title,
    timeframes: chartTimeframes(ctx.seed, t.slug, d.key),
    dataPath: `/v1/tokens/${t.slug}/charts/${d.key}`,
  }));
}

export function gatewayPage(ctx: GenContext, t: TokenDef, row: GatewayScreenerRow): GatewayPageShell {
  const f = floats(ctx, t);
  const rng = rngFor(ctx.seed, 'gw-page', t.slug);
  const charts = gatewayChartCatalog(ctx, t);
  const section = (supported: boolean, reason: string): GatewaySection =>
    supported ? { supported: true, state: 'ready', reason: null, asOf: ctx.asOf } : { supported: false, state: 'unsupported', reason, asOf: null };
  const partial = t.index % 3 === 0;
  const annualized = dec(rng, f.rev * 1.1);
  return {
    meta: {
      tokenId: 1000 + t.index,
      symbol: t.symbol,
      name: t.displayName,
      slug: t.slug,
      chain: t.chain,
      protocolType: t.protocolType,
      priceUsd: row.priceUsd,
      imageUrl: t.imageUrl ?? '',
    },
    combinedRevenue: {
      annualized,
      allTime: dec(rng, f.rev * f.allTimeFactor),
      deltaPct: dec(rng, f.deltaPct),
      deltaAbs: dec(rng, (f.rev * f.deltaPct) / 100),
    },
    sections: {
      trend: section(t.coverage.trend, 'trend series not materialized for this token'),
      charts: section(charts.length > 0, 'no curated charts for this token'),
    },
    chartDefs: charts.map((c) => ({ key: c.key, title: c.title, timeframes: c.timeframes, defaultTimeframe: c.timeframes.includes('90d') ? '90d' : '30d' })),
    kpis: [
      { key: 'holderFcfAnnualized', label: 'Holder FCF (annualized)', value: row.revAnnualized, unit: 'USD', deltaPct: dec(rng, f.deltaPct / 2) },
      { key: 'effectiveMarketCap', label: 'Effective market cap', value: row.effMcap, unit: 'USD', deltaPct: null },
      { key: 'pFcf', label: 'P/FCF', value: row.multAnnualized, unit: 'x', deltaPct: null },
    ],
    revenueFunctions: componentStreams(t).map((s, i) => ({
      key: s.key,
      label: s.label,
      formula: `${s.key}Usd * holderShare`,
      sharePct: row.streams[i]?.sharePct ?? null,
    })),
    fundamentals: {
      fdv: dec(rng, f.mcap * f.fdvFactor),
      circulatingSupply: dec(rng, f.supply),
      totalSupply: dec(rng, f.supply * f.fdvFactor),
      fdvToRevenue: dec(rng, f.rev === 0 ? null : (f.mcap * f.fdvFactor) / f.rev),
    },
    methodology: {
      version: '2026.06',
      cards: [
        { id: 'm-fcf', title: 'Holder FCF', body: `What ${t.displayName} holders receive: fees, buybacks, burns and yield.`, formula: 'sum(holderRelevantFlows)' },
        { id: 'm-mult', title: 'P/FCF', body: 'Effective market cap over annualized holder FCF.', formula: 'effMcap / revAnnualized' },
      ],
    },
    verification: {
      status: partial ? 'partial' : 'verified',
      checkedAt: `${ctx.lastDate}T04:00:00.000Z`,
      summary: partial ? 'Some streams are reported with a delay.' : 'All streams reconciled with on-chain data.',
      gaps: partial ? [{ key: `streams.${componentStreams(t)[0]?.key ?? 'fees'}`, reason: 'reported weekly' }] : [],
    },
  };
}

/** whether a trend is materialized: not for tokens without trend coverage, nor 180d of every 4th */
export function trendMaterialized(t: TokenDef, period: Period): boolean {
  return t.coverage.trend && !(t.index % 4 === 1 && period === '180d');
}

const TREND_SERIES = ['revAnnualized', 'effMcap', 'multAnnualized'] as const;

/** one trend value rewritten by the revision epoch; `before` is its value at epoch 1 */
export interface RevisedTrendValue {
  series: (typeof TREND_SERIES)[number];
  date: string;
  before: Decimal | null;
  after: Decimal;
}

/** the full daily trend of a token (every day); periods are slices of it */
export function gatewayTrendFull(ctx: GenContext, t: TokenDef): GatewayTrend {
  return gatewayTrendRevised(ctx, t).trend;
}

/**
 * The full trend and, from the revision epoch on for the revised token, the values it
 * rewrites: multAnnualized on each revised day (a leaf: derived from the two other series,
 * nothing is derived from it; the gateway's chart rows are series of their own).
 */
export function gatewayTrendRevised(ctx: GenContext, t: TokenDef): { trend: GatewayTrend; revisions: RevisedTrendValue[] } {
  const f = floats(ctx, t);
  const times = dayList(ctx.firstDate, ctx.days);
  const rev = walk(ctx.seed, `${t.slug}/gw-trend/rev`, ctx.days, { scale: Math.max(f.rev, 1e4), signed: true });
  const eff = walk(ctx.seed, `${t.slug}/gw-trend/eff`, ctx.days, { scale: f.effMcap, vol: 0.02 });
  const raw: Record<(typeof TREND_SERIES)[number], number[]> = {
    revAnnualized: rev,
    effMcap: eff,
    multAnnualized: eff.map((e, i) => e / (rev[i] || 1)),
  };
  const series = TREND_SERIES.map((key) => ({ key, values: formatSeries(ctx.seed, `${t.slug}/gw-trend/${key}`, raw[key], { digits: [25, 32], nullRate: 0.02 }) }));
  const revisions: RevisedTrendValue[] = [];
  if (isRevision(ctx, t)) {
    const mult = series.find((s) => s.key === 'multAnnualized');
    for (const d of revisedDays(ctx)) {
      if (!mult) break;
      const rng = rngFor(ctx.seed, 'gw-trend-revision', t.slug, 'multAnnualized', d.date);
      const after = decimalFromFloat((raw.multAnnualized[d.index] ?? 0) * d.factor, rng.int(25, 32), rng);
      revisions.push({ series: 'multAnnualized', date: d.date, before: mult.values[d.index] ?? null, after });
      mult.values[d.index] = after;
    }
  }
  return { trend: { times, series }, revisions };
}

export function sliceTrend(full: GatewayTrend, period: Period): GatewayTrend {
  const n = Math.min(PERIOD_DAYS[period], full.times.length);
  const from = full.times.length - n;
  return { times: full.times.slice(from), series: full.series.map((s) => ({ key: s.key, values: s.values.slice(from) })) };
}

/** the chart's rows over every day; timeframes are slices of it */
export function gatewayChartRows(ctx: GenContext, t: TokenDef, def: ChartDef): GatewayChartItem['data'] {
  const times = dayList(ctx.firstDate, ctx.days);
  const cols = def.series.map((s) => {
    const key = `${t.slug}/gw-chart/${def.key}/${s.key}`;
    return formatSeries(ctx.seed, key, walk(ctx.seed, key, ctx.days, { scale: s.scale, signed: s.signed }), { digits: [25, 32], nullRate: 0.02 });
  });
  return times.map((timestamp, i) => {
    const row: { timestamp: string } & Record<string, string | null> = { timestamp };
    def.series.forEach((s, si) => (row[s.key] = cols[si]?.[i] ?? null));
    return row;
  });
}

export function gatewayChartItem(def: ChartDef, rows: GatewayChartItem['data'], timeframe: Timeframe): GatewayChartItem {
  const n = Math.min(PERIOD_DAYS[timeframe], rows.length);
  const data = rows.slice(rows.length - n).map((r) => ({ ...r }));
  return {
    id: def.key,
    type: 'combo',
    currentTimeframe: timeframe,
    dataFrom: data[0]?.timestamp ?? '',
    dataThrough: data[data.length - 1]?.timestamp ?? '',
    config: { title: def.title, series: def.series.map((s) => ({ key: s.key, label: s.label, render: s.render })) },
    data,
  };
}
