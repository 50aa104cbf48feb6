// The dataset: what the simulator serves for an epoch, generated per token on demand and
// cached, so a 1000-token, 3-year universe starts instantly. Heavy per-day artifacts live in
// small LRU caches; scalar artifacts are kept. Everything handed out is frozen: routes and
// tests share the objects.
import type {
  AppChartCatalogEntry,
  AppChartData,
  AppHistory,
  AppHistoryPoint,
  AppMetricEntry,
  AppScreenerRow,
  AppSnapshot,
  AppToken,
  Epoch2Changes,
  EpochChanges,
  GatewayChartCatalogEntry,
  GatewayChartItem,
  GatewayInsight,
  GatewayPageShell,
  GatewayScreenerRow,
  GatewayToken,
  GatewayTrend,
  OpenApiDocument,
  Period,
  ResearchBundle,
  SimDataset,
  Timeframe,
} from './dataset-types.ts';
import type { ChartDef } from './chart-defs.ts';
import { DELISTED_INDEX, REMOVED_DRIVER_ID, REVISED_INDEX, REVISION_EPOCH, genContext, isListed, revisedDays, type GenContext, type GenParams } from './context.ts';
import {
  addedDriverId,
  appChartCatalog,
  appChartData,
  appChartDefs,
  appEconomics,
  appHistory,
  appHistoryRevised,
  appScreenerRow,
  appSnapshot,
  appTokenItem,
  researchBundle,
  type AppEconomics,
} from './generate-app.ts';
import {
  gatewayChartCatalog,
  gatewayChartDefs,
  gatewayChartItem,
  gatewayChartRows,
  gatewayInsights,
  gatewayPage,
  gatewayScreenerRow,
  gatewayToken,
  gatewayTrendFull,
  gatewayTrendRevised,
  sliceTrend,
  trendMaterialized,
} from './generate-gateway.ts';
import { METRIC_CATALOG } from './metrics-catalog.ts';
import { OPENAPI_ADDED_PATH, openapiDocument } from './openapi.ts';
import { tokenUniverse, type TokenDef } from './tokens.ts';

class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string, make: () => V): V {
    const hit = this.map.get(key);
    if (hit !== undefined) {
      this.map.delete(key);
      this.map.set(key, hit);
      return hit;
    }
    const v = make();
    this.map.set(key, v);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
    return v;
  }
}

function memo<V>(map: Map<string, V>, key: string, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) {
    v = make();
    map.set(key, v);
  }
  return v;
}

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Builds and keeps one view per epoch over the same token universe. */
export class SimData {
  private readonly universe: TokenDef[];
  private readonly bySlug: Map<string, TokenDef>;
  private readonly views = new Map<string, DatasetView>();
  private changes: EpochChanges | null = null;

  constructor(private readonly params: GenParams) {
    this.universe = tokenUniverse(params.tokens, params.freshness);
    this.bySlug = new Map(this.universe.map((t) => [t.slug, t]));
  }

  /** `View`: a variant of the dataset (losses.ts' RemovedView), kept apart from the plain one. */
  view(epoch: number, View: typeof DatasetView = DatasetView): DatasetView {
    const key = View === DatasetView ? String(epoch) : `${epoch}/${View.name}`;
    return memo(this.views, key, () => new View(genContext(this.params, epoch), this.universe, this.bySlug, () => this.epochChanges()));
  }

  epochChanges(): EpochChanges {
    if (this.changes) return this.changes;
    const c0 = genContext(this.params, 0);
    const c1 = genContext(this.params, 1);
    const revisedToken = this.universe[REVISED_INDEX];
    const delisted = this.universe[DELISTED_INDEX];
    this.changes = deepFreeze<EpochChanges>({
      delistedSlug: delisted ? delisted.slug : null,
      revised: revisedToken
        ? {
            slug: revisedToken.slug,
            app: {
              field: 'effectiveMarketCap',
              before: appEconomics(c0, revisedToken).effectiveMarketCap.value ?? '',
              after: appEconomics(c1, revisedToken).effectiveMarketCap.value ?? '',
            },
            gateway: {
              field: 'effMcap',
              before: gatewayScreenerRow(c0, revisedToken).effMcap ?? '',
              after: gatewayScreenerRow(c1, revisedToken).effMcap ?? '',
            },
          }
        : null,
      newDate: c1.lastDate,
      bundle: revisedToken ? { slug: revisedToken.slug, addedDriverId: addedDriverId(c1, revisedToken) } : null,
      openapiAddedPath: OPENAPI_ADDED_PATH,
      epoch2: this.epoch2Changes(c1),
    });
    return this.changes;
  }

  private epoch2Changes(c1: GenContext): Epoch2Changes {
    const c2 = genContext(this.params, REVISION_EPOCH);
    const t = this.universe[REVISED_INDEX];
    const relisted = this.universe[DELISTED_INDEX];
    if (!t) return { epoch: 2, newDate: c2.lastDate, relistedSlug: null, revised: null };
    const dates = revisedDays(c2).map((d) => ({ date: d.date, position: d.position }));
    const at = (date: string) => dates.find((d) => d.date === date) ?? { date, position: 'insideOverlap' as const };
    const cells = appHistoryRevised(c2, t).revisions;
    const firstStream = t.streams[0]?.key;
    const bundle1 = researchBundle(c1, t);
    const bundle2 = researchBundle(c2, t);
    const kept = new Set(bundle2.valueDriverEdges.map((e) => `${e.fromValueDriverId}>${e.toValueDriverId}`));
    const mult1 = appEconomics(c1, t).multiples['30d'].value;
    return {
      epoch: 2,
      newDate: c2.lastDate,
      relistedSlug: relisted ? relisted.slug : null,
      revised: {
        slug: t.slug,
        dates,
        appHistory: {
          metric: 'effectiveMarketCap',
          days: cells.filter((c) => c.stream === firstStream && c.metric === 'effectiveMarketCap').map((c) => ({ ...at(c.date), before: c.before, after: c.after })),
          cells,
        },
        gatewayTrend: {
          series: 'multAnnualized',
          days: gatewayTrendRevised(c2, t).revisions.map((r) => ({ ...at(r.date), before: r.before, after: r.after })),
        },
        app: { field: 'multiples.30d', before: mult1, after: appEconomics(c2, t).multiples['30d'].value ?? '' },
        gateway: { field: 'multAnnualized', pageKpi: 'pFcf', before: gatewayScreenerRow(c1, t).multAnnualized, after: gatewayScreenerRow(c2, t).multAnnualized ?? '' },
        bundle: {
          removedDriverId: REMOVED_DRIVER_ID,
          removedEdges: bundle1.valueDriverEdges.filter((e) => !kept.has(`${e.fromValueDriverId}>${e.toValueDriverId}`)),
          driverIds: bundle2.valueDrivers.map((v) => v.id),
        },
      },
    };
  }
}

export class DatasetView implements SimDataset {
  private readonly scalars = new Map<string, unknown>();
  private readonly heavy = new Lru<unknown>(96);

  constructor(
    readonly ctx: GenContext,
    private readonly universe: readonly TokenDef[],
    private readonly bySlug: Map<string, TokenDef>,
    private readonly changes: () => EpochChanges,
  ) {}

  get epoch(): number {
    return this.ctx.epoch;
  }
  get firstDate(): string {
    return this.ctx.firstDate;
  }
  get lastDate(): string {
    return this.ctx.lastDate;
  }
  get asOf(): string {
    return this.ctx.asOf;
  }
  get epochChanges(): EpochChanges {
    return this.changes();
  }

  private keep<V>(key: string, make: () => V): V {
    return memo(this.scalars, key, () => deepFreeze(make())) as V;
  }
  private lru<V>(key: string, make: () => V): V {
    return this.heavy.get(key, () => deepFreeze(make())) as V;
  }

  /** a token that is listed in this epoch */
  listed(slug: string): TokenDef | null {
    const t = this.bySlug.get(slug);
    return t && isListed(this.ctx, t) ? t : null;
  }

  private listedTokens(): TokenDef[] {
    return this.keep('listed', () => this.universe.filter((t) => isListed(this.ctx, t)));
  }

  private econ(t: TokenDef): AppEconomics {
    return this.keep(`econ/${t.slug}`, () => appEconomics(this.ctx, t));
  }

  // ---- app ----

  appMetrics(): readonly AppMetricEntry[] {
    return METRIC_CATALOG;
  }

  appTokens(): readonly AppToken[] {
    return this.keep('app/tokens', () => this.listedTokens().map((t) => appTokenItem(this.ctx, t)));
  }

  appToken(slug: string): AppToken | null {
    const t = this.listed(slug);
    return t ? this.keep(`app/token/${slug}`, () => appTokenItem(this.ctx, t)) : null;
  }

  appScreenerRows(): readonly AppScreenerRow[] {
    return this.keep('app/screener', () =>
      this.listedTokens()
        .filter((t) => t.coverage.screener)
        .map((t) => appScreenerRow(this.ctx, t, this.econ(t))),
    );
  }

  appSnapshot(slug: string): AppSnapshot | null {
    const t = this.listed(slug);
    if (!t || !t.coverage.snapshot) return null;
    return this.keep(`app/snapshot/${slug}`, () => appSnapshot(this.ctx, t, this.econ(t)));
  }

  appStreams(slug: string): readonly string[] | null {
    const t = this.listed(slug);
    return t && t.coverage.metricHistory ? t.streams.map((s) => s.key) : null;
  }

  appHistory(slug: string): readonly AppHistory[] | null {
    const t = this.listed(slug);
    if (!t || !t.coverage.metricHistory) return null;
    return this.lru(`app/history/${slug}`, () => appHistory(this.ctx, t));
  }

  appHistoryPoints(slug: string): AppHistoryPoint[] | null {
    const docs = this.appHistory(slug);
    if (!docs) return null;
    const out: AppHistoryPoint[] = [];
    for (const doc of docs) {
      for (const row of doc.rows) {
        for (const [metric, value] of Object.entries(row.values)) out.push({ stream: doc.stream, metric: metric as AppHistoryPoint['metric'], date: row.date, value });
      }
    }
    return out;
  }

  appChartDefs(slug: string): readonly ChartDef[] | null {
    const t = this.listed(slug);
    return t ? this.keep(`app/chart-defs/${slug}`, () => appChartDefs(this.ctx, t)) : null;
  }

  appCharts(slug: string): readonly AppChartCatalogEntry[] | null {
    const t = this.listed(slug);
    return t ? this.keep(`app/charts/${slug}`, () => appChartCatalog(this.ctx, t)) : null;
  }

  appChartData(slug: string, chartKey: string): AppChartData | null {
    const t = this.listed(slug);
    const def = this.appChartDefs(slug)?.find((d) => d.key === chartKey);
    if (!t || !def) return null;
    return this.lru(`app/chart/${slug}/${chartKey}`, () => appChartData(this.ctx, t, def));
  }

  researchBundle(slug: string): ResearchBundle | null {
    const t = this.listed(slug);
    return t ? this.keep(`app/bundle/${slug}`, () => researchBundle(this.ctx, t)) : null;
  }

  // ---- gateway ----

  /** a token on the gateway: listed and with a screener row */
  gatewayListed(slug: string): TokenDef | null {
    const t = this.listed(slug);
    return t && t.coverage.screener ? t : null;
  }

  private gatewayTokenDefs(): TokenDef[] {
    return this.keep('gw/defs', () => this.listedTokens().filter((t) => t.coverage.screener));
  }

  private gatewayRow(t: TokenDef): GatewayScreenerRow {
    return this.keep(`gw/row/${t.slug}`, () => gatewayScreenerRow(this.ctx, t));
  }

  gatewayTokens(): readonly GatewayToken[] {
    return this.keep('gw/tokens', () => this.gatewayTokenDefs().map(gatewayToken));
  }

  gatewayScreenerRows(): readonly GatewayScreenerRow[] {
    return this.keep('gw/screener', () => this.gatewayTokenDefs().map((t) => this.gatewayRow(t)));
  }

  gatewayInsights(): readonly GatewayInsight[] {
    return this.keep('gw/insights', () => gatewayInsights(this.ctx, this.gatewayScreenerRows()));
  }

  gatewayPage(slug: string): GatewayPageShell | null {
    const t = this.gatewayListed(slug);
    return t ? this.keep(`gw/page/${slug}`, () => gatewayPage(this.ctx, t, this.gatewayRow(t))) : null;
  }

  gatewayTrend(slug: string, period: Period): GatewayTrend | null {
    const t = this.gatewayListed(slug);
    if (!t || !trendMaterialized(t, period)) return null;
    const full = this.lru<GatewayTrend>(`gw/trend/${slug}`, () => gatewayTrendFull(this.ctx, t));
    return deepFreeze(sliceTrend(full, period));
  }

  gatewayChartDefs(slug: string): readonly ChartDef[] | null {
    const t = this.gatewayListed(slug);
    return t ? this.keep(`gw/chart-defs/${slug}`, () => gatewayChartDefs(this.ctx, t)) : null;
  }

  gatewayCharts(slug: string): readonly GatewayChartCatalogEntry[] | null {
    const t = this.gatewayListed(slug);
    return t ? this.keep(`gw/charts/${slug}`, () => gatewayChartCatalog(this.ctx, t)) : null;
  }

  gatewayChartData(slug: string, chartKey: string, timeframe: Timeframe): GatewayChartItem | null {
    const t = this.gatewayListed(slug);
    const def = this.gatewayChartDefs(slug)?.find((d) => d.key === chartKey);
    const entry = this.gatewayCharts(slug)?.find((c) => c.key === chartKey);
    if (!t || !def || !entry || !entry.timeframes.includes(timeframe)) return null;
    const rows = this.lru<GatewayChartItem['data']>(`gw/chart/${slug}/${chartKey}`, () => gatewayChartRows(this.ctx, t, def));
    return deepFreeze(gatewayChartItem(def, rows, timeframe));
  }

  openapi(): OpenApiDocument {
    return this.keep('openapi', () => openapiDocument(this.ctx.epoch));
  }
}
