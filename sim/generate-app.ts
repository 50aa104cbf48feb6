// The app host's data for one token: screener row, snapshot, history, charts, bundle. Pure
// functions of (context, token): callers cache.
import type {
  AppChartCatalogEntry,
  AppChartData,
  AppHistory,
  AppHistoryColumn,
  AppHistoryRow,
  AppMetricValue,
  AppScreenerRow,
  AppSnapshot,
  AppToken,
  AppTokenRef,
  Decimal,
  HistoryInterval,
  HistoryMetricKey,
  MetricStatus,
  ResearchBundle,
  Window,
} from './dataset-types.ts';
import { dayList } from './calendar.ts';
import { chartsFor, type ChartDef } from './chart-defs.ts';
import { REMOVED_DRIVER_ID, REVISED_INDEX, isRevision, revisedDays, type GenContext } from './context.ts';
import { decimalFromFloat } from './decimal.ts';
import { HISTORY_METRICS, WINDOWS, metricEntry } from './metrics-catalog.ts';
import { rngFor } from './random.ts';
import { formatSeries, trailingMeans, walk } from './series.ts';
import { componentStreams, type TokenDef } from './tokens.ts';

const WINDOW_DAYS: Record<Window, number> = { '7d': 7, '30d': 30, '90d': 90, '180d': 180, '365d': 365 };

export function tokenRef(t: TokenDef): AppTokenRef {
  return { slug: t.slug, displayName: t.displayName, symbol: t.symbol };
}

export function appTokenItem(ctx: GenContext, t: TokenDef): AppToken {
  return { ...tokenRef(t), imageUrl: t.imageUrl, coverage: { ...t.coverage }, freshness: { status: t.freshness, asOf: ctx.asOf } };
}

// ---- screener and snapshot ------------------------------------------------------------

interface Cell {
  value: Decimal | null;
  status: MetricStatus;
  reason?: string;
  extras?: Record<string, string>;
}

const NULL_REASONS: Record<Exclude<MetricStatus, 'ok'>, string> = {
  missing: 'no holder FCF data reported for this window',
  stale: 'source data older than 48 hours',
  unsupported: "metric not supported by this token's methodology",
  not_computed: 'not enough history to compute this window',
};

interface CellOptions {
  digits: number;
  /** never null (the revised value must exist) */
  required?: boolean;
  /** a multiple of a negative FCF is not meaningful */
  multiple?: boolean;
}

function cell(ctx: GenContext, t: TokenDef, path: string, x: number, o: CellOptions): Cell {
  const rng = rngFor(ctx.seed, 'cell', t.slug, path);
  const roll = rng.next();
  const extrasRoll = rng.next();
  const status = rng.pick(['missing', 'stale', 'unsupported', 'not_computed'] as const);
  const extras = extrasRoll < 0.07 ? { methodologyVersion: '2026.06' } : undefined;
  if (o.multiple && x < 0) {
    return { value: null, status: 'not_computed', reason: 'P/FCF is not meaningful for negative holder FCF' };
  }
  if (!o.required && roll < 0.06) return { value: null, status, reason: NULL_REASONS[status] };
  const value = decimalFromFloat(x, o.digits, rng);
  return extras ? { value, status: 'ok', extras } : { value, status: 'ok' };
}

export interface AppEconomics {
  effectiveMarketCap: Cell;
  effectiveRatio: Cell;
  annualizedRevenue: Cell;
  multiples: Record<Window, Cell>;
  revenues: Record<Window, Cell>;
  streams: { key: string; label: string; share: number; revenue: Cell }[];
  combined: Cell;
  fdvToRevenue: Cell;
  mcapToFcf: Cell | null;
  treasuryUsd: Cell | null;
}

/** the token's scalar numbers, shared by its screener row and its snapshot */
export function appEconomics(ctx: GenContext, t: TokenDef): AppEconomics {
  const rng = rngFor(ctx.seed, 'app-econ', t.slug);
  const emc = 10 ** rng.range(7.5, 11.5);
  const ratio = rng.range(0.25, 1.6);
  const rev = emc / rng.range(6, 90);
  const windowRev = {} as Record<Window, number>;
  for (const w of WINDOWS) windowRev[w] = rev * (1 + 0.25 * rng.normal());
  if (t.index % 4 === 2) windowRev['7d'] = -Math.abs(windowRev['7d']) * 0.3;
  const comps = componentStreams(t);
  const weights = comps.map(() => rng.range(0.2, 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const combinedFactor = rng.range(1, 1.3);
  const fdvFactor = rng.range(1, 2.5);
  const treasury = emc * rng.range(0.01, 0.2);

  const multiples = {} as Record<Window, Cell>;
  const revenues = {} as Record<Window, Cell>;
  for (const w of WINDOWS) {
    revenues[w] = cell(ctx, t, `revenue.${w}`, windowRev[w], { digits: 16 });
    multiples[w] = cell(ctx, t, `multiple.${w}`, emc / windowRev[w], { digits: 15, multiple: true });
  }
  let effectiveMarketCap = cell(ctx, t, 'effectiveMarketCap', emc, { digits: 19, required: t.index === REVISED_INDEX });
  if (ctx.epoch >= 1 && t.index === REVISED_INDEX) effectiveMarketCap = { value: revisedAppEmc(ctx, emc), status: 'ok' };
  // the revision epoch restates the 30d multiple (a leaf: nothing else is derived from it)
  if (isRevision(ctx, t)) {
    const before = multiples['30d'];
    multiples['30d'] = { value: revisedAppMultiple30d(ctx, emc / windowRev['30d']), status: 'ok', ...(before.extras ? { extras: before.extras } : {}) };
  }
  return {
    effectiveMarketCap,
    effectiveRatio: cell(ctx, t, 'effectiveRatio', ratio, { digits: 14 }),
    annualizedRevenue: cell(ctx, t, 'annualizedRevenue', rev, { digits: 17 }),
    multiples,
    revenues,
    streams: comps.map((s, i) => {
      const share = (weights[i] ?? 0) / total;
      return { key: s.key, label: s.label, share, revenue: cell(ctx, t, `stream.${s.key}`, rev * share, { digits: 16 }) };
    }),
    combined: cell(ctx, t, 'combinedRevenue.annualized', rev * combinedFactor, { digits: 17 }),
    fdvToRevenue: cell(ctx, t, 'fundamentals.fdvToRevenue', (emc * fdvFactor) / rev, { digits: 14 }),
    mcapToFcf: t.index % 3 === 2 ? null : cell(ctx, t, 'fundamentals.mcapToFcf', emc / ratio / rev, { digits: 14 }),
    treasuryUsd: t.index % 3 === 1 ? null : cell(ctx, t, 'fundamentals.treasuryUsd', treasury, { digits: 18 }),
  };
}

/** the epoch-1 revision of the revised token's effective market cap */
export function revisedAppEmc(ctx: GenContext, emc: number): Decimal {
  return decimalFromFloat(emc * 1.0375, 19, rngFor(ctx.seed, 'app-revision'));
}

/** the revision epoch's restatement of the revised token's 30d multiple (always a value) */
export function revisedAppMultiple30d(ctx: GenContext, multiple: number): Decimal {
  return decimalFromFloat(multiple * 0.96, 15, rngFor(ctx.seed, 'app-revision', 'multiple.30d'));
}

function mv(ctx: GenContext, t: TokenDef, metric: string, c: Cell, surface: 'screener' | 'token_snapshot', nested: boolean): AppMetricValue {
  const { unit, kind } = metricEntry(metric);
  const freshness = c.status === 'stale' || t.freshness === 'stale' ? 'stale' : 'fresh';
  // key order is the wire order: metric, value, unit, kind, asOf, freshness, status, ...
  const out: AppMetricValue = nested ? { metric, value: c.value, unit, kind, freshness, status: c.status } : { metric, value: c.value, unit, kind, asOf: ctx.asOf, freshness, status: c.status };
  if (c.reason) out.reason = c.reason;
  // nested values drop source on the snapshot: "may be absent on nested values"
  if (!nested || surface === 'screener') out.source = { type: 'computed', surface };
  if (c.extras) out.extras = { ...c.extras };
  return out;
}

export function appScreenerRow(ctx: GenContext, t: TokenDef, e: AppEconomics): AppScreenerRow {
  const m = (metric: string, c: Cell, nested = false) => mv(ctx, t, metric, c, 'screener', nested);
  const multiples = {} as Record<Window, AppMetricValue>;
  const revenues = {} as Record<Window, AppMetricValue>;
  for (const w of WINDOWS) {
    multiples[w] = m(`multiple.${w}`, e.multiples[w], true);
    revenues[w] = m(`revenue.${w}`, e.revenues[w], true);
  }
  return {
    token: tokenRef(t),
    effectiveMarketCap: m('effectiveMarketCap', e.effectiveMarketCap),
    effectiveRatio: m('effectiveRatio', e.effectiveRatio),
    annualizedRevenue: m('annualizedRevenue', e.annualizedRevenue),
    multiples,
    revenues,
    streams: e.streams.map((s) => ({ key: s.key, label: s.label, annualizedRevenue: m('stream.annualizedRevenue', s.revenue, true) })),
    freshness: t.freshness,
  };
}

export function appSnapshot(ctx: GenContext, t: TokenDef, e: AppEconomics): AppSnapshot {
  const m = (metric: string, c: Cell, nested = false) => mv(ctx, t, metric, c, 'token_snapshot', nested);
  const sections: Record<string, string> = {};
  // "empty sections may be omitted": an even-indexed token without charts leaves it out
  if (t.coverage.charts) sections.charts = 'ok';
  else if (t.index % 2 === 1) sections.charts = 'unsupported';
  sections.fundamentals = t.freshness === 'stale' ? 'stale' : 'ok';
  sections.streams = 'ok';
  const fundamentals: Record<string, AppMetricValue> = { fdvToRevenue: m('fundamentals.fdvToRevenue', e.fdvToRevenue) };
  if (e.mcapToFcf) fundamentals.mcapToFcf = m('fundamentals.mcapToFcf', e.mcapToFcf);
  if (e.treasuryUsd) fundamentals.treasuryUsd = m('fundamentals.treasuryUsd', e.treasuryUsd);
  const minute = String(t.index % 60).padStart(2, '0');
  return {
    token: tokenRef(t),
    row: {
      effectiveMarketCap: m('effectiveMarketCap', e.effectiveMarketCap),
      annualizedRevenue: m('annualizedRevenue', e.annualizedRevenue),
      multiples: { '30d': m('multiple.30d', e.multiples['30d'], true), '365d': m('multiple.365d', e.multiples['365d'], true) },
    },
    sections,
    combinedRevenue: { annualized: m('combinedRevenue.annualized', e.combined) },
    fundamentals,
    streams: e.streams.map((s) => ({
      key: s.key,
      label: s.label,
      mixPercentLabel: `${(s.share * 100).toFixed(1)}%`,
      annualizedRevenue: m('stream.annualizedRevenue', s.revenue, true),
    })),
    freshness: {
      generatedAt: `${ctx.lastDate}T06:${minute}:00.000Z`,
      status: t.freshness,
      warnings: t.freshness === 'stale' ? ['source data older than 48 hours'] : [],
    },
  };
}

// ---- history ----------------------------------------------------------------------------

export const HISTORY_COLUMNS: Record<HistoryMetricKey, AppHistoryColumn> = {
  holderFcf: { key: 'holderFcf', unit: 'USD', kind: 'rate' },
  effectiveMarketCap: { key: 'effectiveMarketCap', unit: 'USD', kind: 'gauge' },
  erm7d: { key: 'erm7d', unit: 'x', kind: 'ratio' },
  erm30d: { key: 'erm30d', unit: 'x', kind: 'ratio' },
  erm90d: { key: 'erm90d', unit: 'x', kind: 'ratio' },
  erm180d: { key: 'erm180d', unit: 'x', kind: 'ratio' },
  erm365d: { key: 'erm365d', unit: 'x', kind: 'ratio' },
};

/**
 * What a stream states of itself: its interval and columns[] (SimOptions.historyStreams, whose
 * doc says which streams differ under 'distinct'). `position`: the stream's in the token's list.
 */
export function streamMeta(ctx: GenContext, t: TokenDef, position: number): { interval: HistoryInterval; columns: AppHistoryColumn[] } {
  const columns: AppHistoryColumn[] = [{ key: 'date', kind: 'time' }, ...HISTORY_METRICS.map((k) => ({ ...HISTORY_COLUMNS[k] }))];
  if (ctx.historyStreams === 'alike' || t.index === 0) return { interval: '1d', columns };
  const tokenWide = t.index % 3 === 1;
  if (!tokenWide && position % 2 === 0) return { interval: '1d', columns };
  const weekly = columns.map((c): AppHistoryColumn => {
    if (c.key === 'holderFcf') return { ...c, kind: 'gauge' };
    if (!tokenWide && c.key.startsWith('erm')) return { key: c.key, kind: c.kind };
    return c;
  });
  return { interval: '1w', columns: weekly };
}

/** one history cell rewritten by the revision epoch; `before` is its value at epoch 1 */
export interface RevisedHistoryCell {
  stream: string;
  metric: HistoryMetricKey;
  date: string;
  before: Decimal | null;
  after: Decimal;
}

/** every stream's full history; the aggregate stream is the sum of the components */
export function appHistory(ctx: GenContext, t: TokenDef): AppHistory[] {
  return appHistoryRevised(ctx, t).docs;
}

/**
 * The history and, from the revision epoch on for the revised token, the cells it rewrites:
 * effectiveMarketCap (one series shared by every stream) on each revised day, and, as every
 * erm window is derived from that day's effective market cap, each stream's published (non-null)
 * erm values of that day, scaled by the same factor. Cells are patched after formatting with
 * their own random draws, so no other cell moves.
 */
export function appHistoryRevised(ctx: GenContext, t: TokenDef): { docs: AppHistory[]; revisions: RevisedHistoryCell[] } {
  const { seed, days } = ctx;
  const dates = dayList(ctx.firstDate, days);
  // scaled like the token's screener numbers: the series end near what the snapshot says
  const econ = rngFor(seed, 'app-econ', t.slug);
  const emcScale = 10 ** econ.range(7.5, 11.5);
  econ.next(); // the effective ratio's draw in appEconomics
  const dailyFcf = emcScale / econ.range(6, 90) / 365;
  const comps = componentStreams(t);
  const fcfByStream = new Map<string, number[]>();
  for (const s of comps) fcfByStream.set(s.key, walk(seed, `${t.slug}/${s.key}/fcf`, days, { scale: dailyFcf / comps.length, signed: true }));
  const aggregate = dates.map((_, i) => comps.reduce((sum, s) => sum + (fcfByStream.get(s.key)?.[i] ?? 0), 0));
  fcfByStream.set('aggregate', aggregate);
  const emc = walk(seed, `${t.slug}/emc`, days, { scale: emcScale, vol: 0.02 });
  const emcDec = formatSeries(seed, `${t.slug}/emc`, emc, { digits: 18, nullRate: 0.01 });
  const revised = isRevision(ctx, t) ? revisedDays(ctx) : [];
  const revisions: RevisedHistoryCell[] = [];
  const emcAfter = new Map<number, Decimal>();
  for (const d of revised) emcAfter.set(d.index, decimalFromFloat((emc[d.index] ?? 0) * d.factor, 18, rngFor(seed, 'history-revision', t.slug, 'effectiveMarketCap', d.date)));
  const docs = t.streams.map((s, position) => {
    const fcf = fcfByStream.get(s.key) ?? aggregate;
    const cols: Record<HistoryMetricKey, (string | null)[]> = {
      holderFcf: formatSeries(seed, `${t.slug}/${s.key}/fcf`, fcf, { digits: [14, 17], nullRate: 0.03 }),
      effectiveMarketCap: emcAfter.size > 0 ? [...emcDec] : emcDec,
      erm7d: [],
      erm30d: [],
      erm90d: [],
      erm180d: [],
      erm365d: [],
    };
    for (const w of WINDOWS) {
      const ratios = trailingMeans(fcf, WINDOW_DAYS[w], 7).map((mean, i) => (mean === null || mean === 0 ? null : (emc[i] ?? 0) / (mean * 365)));
      cols[`erm${w}`] = formatSeries(seed, `${t.slug}/${s.key}/erm${w}`, ratios, { digits: [12, 15], nullRate: 0.02 });
      for (const d of revised) {
        const ratio = ratios[d.index];
        const before = cols[`erm${w}`][d.index] ?? null;
        if (ratio === null || ratio === undefined || before === null) continue;
        const rng = rngFor(seed, 'history-revision', t.slug, s.key, `erm${w}`, d.date);
        const after = decimalFromFloat(ratio * d.factor, rng.int(12, 15), rng);
        cols[`erm${w}`][d.index] = after;
        revisions.push({ stream: s.key, metric: `erm${w}`, date: d.date, before, after });
      }
    }
    for (const d of revised) {
      const after = emcAfter.get(d.index) ?? '';
      revisions.push({ stream: s.key, metric: 'effectiveMarketCap', date: d.date, before: emcDec[d.index] ?? null, after });
      cols.effectiveMarketCap[d.index] = after;
    }
    const rows: AppHistoryRow[] = dates.map((date, i) => {
      const values = {} as Record<HistoryMetricKey, string | null>;
      for (const k of HISTORY_METRICS) values[k] = cols[k][i] ?? null;
      return { date, values };
    });
    const meta = streamMeta(ctx, t, position);
    return {
      token: tokenRef(t),
      interval: meta.interval,
      stream: s.key,
      columns: meta.columns,
      rows,
      freshness: { status: t.freshness, lastDate: ctx.lastDate },
    };
  });
  // listed by revised day, then stream, then metric (the history's column order)
  const order = (c: RevisedHistoryCell) => [revised.findIndex((d) => d.date === c.date), t.streams.findIndex((s) => s.key === c.stream), HISTORY_METRICS.indexOf(c.metric)];
  revisions.sort((a, b) => {
    const [x, y] = [order(a), order(b)];
    return (x[0] ?? 0) - (y[0] ?? 0) || (x[1] ?? 0) - (y[1] ?? 0) || (x[2] ?? 0) - (y[2] ?? 0);
  });
  return { docs, revisions };
}

// ---- charts -----------------------------------------------------------------------------

export function appChartDefs(ctx: GenContext, t: TokenDef): ChartDef[] {
  return t.coverage.charts ? chartsFor(ctx.seed, 'app', t, ctx.chartsPerToken) : [];
}

export function appChartCatalog(ctx: GenContext, t: TokenDef): AppChartCatalogEntry[] {
  return appChartDefs(ctx, t).map((d) => ({
    key: d.key,
    title: d.title,
    section: d.section,
    freshness: t.freshness,
    rowCount: ctx.days,
    dataPath: `/api/v1/tokens/${t.slug}/charts/${d.key}`,
  }));
}

export function appChartData(ctx: GenContext, t: TokenDef, def: ChartDef): AppChartData {
  const dates = dayList(ctx.firstDate, ctx.days);
  const gapRng = rngFor(ctx.seed, 'chart-gap', t.slug, def.key);
  const gapLen = gapRng.int(3, 6);
  const gapStart = gapRng.chance(0.5) ? gapRng.int(0, Math.max(0, ctx.historyDays - gapLen)) : -1;
  const seriesValues = def.series.map((s, si) => {
    const key = `${t.slug}/app-chart/${def.key}/${s.key}`;
    const raw: (number | null)[] = walk(ctx.seed, key, ctx.days, { scale: s.scale, signed: s.signed });
    // an outage run on the first series shows up in `gaps`
    if (si === 0 && gapStart >= 0) for (let i = gapStart; i < gapStart + gapLen && i < raw.length; i++) raw[i] = null;
    return formatSeries(ctx.seed, key, raw, { digits: [13, 17], nullRate: 0.02 });
  });
  const rows = dates.map((date, i) => [date, ...seriesValues.map((v) => v[i] ?? null)]);
  return {
    title: def.title,
    section: def.section,
    x: 'date',
    y: def.series.map((s) => s.key),
    columns: [{ key: 'date', unit: null, kind: 'time', label: 'Date' }, ...def.series.map((s) => ({ key: s.key, unit: s.unit, kind: s.kind, label: s.label }))],
    rows,
    source: { type: 'computed', surface: 'charts' },
    freshness: t.freshness,
    renderer: {
      type: 'combo',
      stacked: def.series.length > 1 && def.series.every((s) => s.render === 'bar'),
      series: def.series.map((s) => ({ key: s.key, render: s.render, axis: s.unit === 'x' ? 'right' : 'left' })),
    },
    gaps: gapsOf(def, dates, seriesValues),
  };
}

function gapsOf(def: ChartDef, dates: string[], values: (string | null)[][]): AppChartData['gaps'] {
  const gaps: AppChartData['gaps'] = [];
  def.series.forEach((s, si) => {
    const col = values[si] ?? [];
    let start = -1;
    for (let i = 0; i <= col.length; i++) {
      const isNull = i < col.length && col[i] === null;
      if (isNull && start < 0) start = i;
      if (!isNull && start >= 0) {
        gaps.push({ series: s.key, from: dates[start] ?? '', to: dates[i - 1] ?? '', reason: i - start > 1 ? 'source outage' : 'missing data point' });
        start = -1;
      }
    }
  });
  return gaps;
}

// ---- research bundle --------------------------------------------------------------------

const DRIVER_TYPES = ['revenue', 'supply', 'demand', 'valuation', 'governance'];
const DRIVER_TEXT = [
  ['Trading fees routed to holders', 'volume * feeRate * holderShare'],
  ['Buyback pressure from protocol revenue', 'revenue * buybackShare'],
  ['Staking rewards paid from real yield', 'stakedSupply * apr'],
  ['Emission dilution', '-emissionsPerDay * price * 365'],
  ['Treasury runway', 'treasuryUsd / monthlyOpex'],
  ['Lockup-adjusted float', 'circulatingSupply - lockedSupply'],
  ['Fee switch governance vote', 'governanceApproval ? feeSwitchShare : 0'],
];

export function researchBundle(ctx: GenContext, t: TokenDef): ResearchBundle {
  const rng = rngFor(ctx.seed, 'bundle', t.slug);
  const nDrivers = rng.int(3, 6);
  const valueDrivers: ResearchBundle['valueDrivers'] = [];
  const valueDriverEdges: ResearchBundle['valueDriverEdges'] = [];
  const texts = rng.shuffle(DRIVER_TEXT);
  for (let i = 1; i <= nDrivers; i++) {
    const [description = '', formula = ''] = texts[(i - 1) % texts.length] ?? [];
    valueDrivers.push({ id: `vd-${i}`, type: rng.pick(DRIVER_TYPES), description, formula });
    if (i > 1) valueDriverEdges.push({ fromValueDriverId: `vd-${rng.int(1, i - 1)}`, toValueDriverId: `vd-${i}` });
  }
  const tokenFunctions: ResearchBundle['tokenFunctions'] = [];
  const nFunctions = rng.int(2, 4);
  for (let i = 1; i <= nFunctions; i++) {
    const parentId = i === 1 || rng.chance(0.3) ? null : `tf-${rng.int(1, i - 1)}`;
    tokenFunctions.push({ id: `tf-${i}`, type: rng.pick(['utility', 'governance', 'collateral', 'fee-capture']), description: `${t.symbol} function ${i}`, parentId });
  }
  if (ctx.epoch >= 1 && t.index === REVISED_INDEX) {
    const id = `vd-${nDrivers + 1}`;
    valueDrivers.push({ id, type: 'revenue', description: 'Protocol-owned liquidity fees', formula: 'polFees * holderShare' });
    valueDriverEdges.push({ fromValueDriverId: 'vd-1', toValueDriverId: id });
  }
  const streams = componentStreams(t).map((s) => s.label.toLowerCase()).join(', ');
  const summary = `${t.displayName} (${t.symbol}) returns value to holders through ${streams}.`;
  if (isRevision(ctx, t)) {
    // the bundle shrinks: a driver present since epoch 0 leaves, with every edge touching it
    return {
      summary,
      valueDrivers: valueDrivers.filter((v) => v.id !== REMOVED_DRIVER_ID),
      valueDriverEdges: valueDriverEdges.filter((e) => e.fromValueDriverId !== REMOVED_DRIVER_ID && e.toValueDriverId !== REMOVED_DRIVER_ID),
      tokenFunctions,
    };
  }
  return { summary, valueDrivers, valueDriverEdges, tokenFunctions };
}

/** the id of the driver added at epoch 1 to the revised token's bundle */
export function addedDriverId(ctx: GenContext, t: TokenDef): string {
  return `vd-${rngFor(ctx.seed, 'bundle', t.slug).int(3, 6) + 1}`;
}
