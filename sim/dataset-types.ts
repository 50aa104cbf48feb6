// The shapes of the simulator's truth. Every number is a decimal string: the exact literal
// the simulator emits (as a JSON number on the app host, as a JSON string on the gateway),
// so tests compare the warehouse with it without going through a JS number.

/** A canonical decimal literal: optional '-', no exponent, no leading or trailing zeros. */
export type Decimal = string;

export type Window = '7d' | '30d' | '90d' | '180d' | '365d';
export type Period = '7d' | '30d' | '90d' | '180d' | '365d' | '1y';
export type Timeframe = Period | 'all';

export interface AppTokenRef {
  slug: string;
  displayName: string;
  symbol: string;
}

export interface AppCoverage {
  screener: boolean;
  snapshot: boolean;
  metricHistory: boolean;
  trend: boolean;
  charts: boolean;
  backtests: boolean;
}

export interface AppToken extends AppTokenRef {
  imageUrl: string | null;
  coverage: AppCoverage;
  /** `asOf` moves whenever the token's data does (every epoch adds a day), so clients can use it as a change marker. */
  freshness: { status: 'fresh' | 'stale'; asOf: string };
}

export interface AppMetricEntry {
  slug: string;
  unit: 'USD' | 'x';
  kind: 'gauge' | 'rate' | 'ratio';
  group: string;
}

export type MetricStatus = 'ok' | 'missing' | 'stale' | 'unsupported' | 'not_computed';

export interface AppMetricValue {
  metric: string;
  value: Decimal | null;
  unit: 'USD' | 'x';
  kind: 'gauge' | 'rate' | 'ratio';
  asOf?: string;
  freshness: 'fresh' | 'stale';
  status: MetricStatus;
  reason?: string;
  source?: { type: 'computed'; surface: 'screener' | 'token_snapshot' };
  /** unknown extra fields, emitted beside the known ones (the worker keeps them in payload) */
  extras?: Record<string, string>;
}

export interface AppScreenerStream {
  key: string;
  label: string;
  annualizedRevenue: AppMetricValue;
}

export interface AppScreenerRow {
  token: AppTokenRef;
  effectiveMarketCap: AppMetricValue;
  effectiveRatio: AppMetricValue;
  annualizedRevenue: AppMetricValue;
  multiples: Record<Window, AppMetricValue>;
  revenues: Record<Window, AppMetricValue>;
  streams: AppScreenerStream[];
  freshness: 'fresh' | 'stale';
}

export interface AppSnapshotStream {
  key: string;
  label: string;
  mixPercentLabel: string;
  annualizedRevenue: AppMetricValue;
}

export interface AppSnapshot {
  token: AppTokenRef;
  row: {
    effectiveMarketCap: AppMetricValue;
    annualizedRevenue: AppMetricValue;
    multiples: { '30d': AppMetricValue; '365d': AppMetricValue };
  };
  sections: Record<string, string>;
  combinedRevenue: { annualized: AppMetricValue };
  fundamentals: Record<string, AppMetricValue>;
  streams: AppSnapshotStream[];
  freshness: { generatedAt: string; status: string; warnings: string[] };
}

export type HistoryMetricKey = 'holderFcf' | 'effectiveMarketCap' | 'erm7d' | 'erm30d' | 'erm90d' | 'erm180d' | 'erm365d';

export type HistoryInterval = '1d' | '1w';

export interface AppHistoryColumn {
  key: string;
  kind: 'time' | 'gauge' | 'rate' | 'ratio';
  unit?: 'USD' | 'x';
}

export interface AppHistoryRow {
  date: string;
  values: Record<HistoryMetricKey, Decimal | null>;
}

/** One stream's full history: every metric, every day. */
export interface AppHistory {
  token: AppTokenRef;
  /** '1d'; '1w' for some streams when SimOptions.historyStreams is 'distinct' */
  interval: HistoryInterval;
  stream: string;
  columns: AppHistoryColumn[];
  rows: AppHistoryRow[];
  freshness: { status: 'fresh' | 'stale'; lastDate: string };
}

export interface AppHistoryPoint {
  stream: string;
  metric: HistoryMetricKey;
  date: string;
  value: Decimal | null;
}

export interface AppChartCatalogEntry {
  key: string;
  title: string;
  section: string;
  freshness: 'fresh' | 'stale';
  rowCount: number;
  /** the documented data path, /api/v1/tokens/{slug}/charts/{key} */
  dataPath: string;
}

export interface AppChartColumn {
  key: string;
  unit: 'USD' | 'x' | null;
  kind: 'time' | 'gauge' | 'rate' | 'ratio';
  label: string;
}

export interface AppChartData {
  title: string;
  section: string;
  x: 'date';
  y: string[];
  columns: AppChartColumn[];
  /** [date, ...values] aligned with columns; values are decimals or null */
  rows: (string | null)[][];
  source: { type: 'computed'; surface: 'charts' };
  freshness: 'fresh' | 'stale';
  renderer: { type: 'combo'; stacked: boolean; series: { key: string; render: 'line' | 'bar'; axis: 'left' | 'right' }[] };
  gaps: { series: string; from: string; to: string; reason: string }[];
}

export interface ResearchBundle {
  summary: string;
  valueDrivers: { id: string; type: string; description: string; formula: string }[];
  valueDriverEdges: { fromValueDriverId: string; toValueDriverId: string }[];
  tokenFunctions: { id: string; type: string; description: string; parentId: string | null }[];
}

export interface GatewayToken {
  slug: string;
  symbol: string;
  name: string;
  href: string;
}

export interface GatewayScreenerRow {
  slug: string;
  symbol: string;
  name: string;
  priceUsd: Decimal | null;
  mcap: Decimal | null;
  effMcap: Decimal | null;
  effRatio: Decimal | null;
  revAnnualized: Decimal | null;
  multAnnualized: Decimal | null;
  windows: Record<Window, { rev: Decimal | null; mult: Decimal | null }>;
  streams: { key: string; label: string; rev: Decimal | null; sharePct: Decimal | null }[];
  dataFreshness: 'fresh' | 'stale';
  fcfMomentum: Decimal | null;
}

export interface GatewayInsight {
  id: string;
  type: string;
  title: string;
  tokenSlug: string | null;
  value: Decimal | null;
  window: Window | null;
  generatedAt: string;
}

export interface GatewaySection {
  supported: boolean;
  state: string;
  reason: string | null;
  asOf: string | null;
}

export interface GatewayPageShell {
  meta: {
    tokenId: number;
    symbol: string;
    name: string;
    slug: string;
    chain: string;
    protocolType: string;
    priceUsd: Decimal | null;
    imageUrl: string;
  };
  combinedRevenue: { annualized: Decimal | null; allTime: Decimal | null; deltaPct: Decimal | null; deltaAbs: Decimal | null };
  sections: { trend: GatewaySection; charts: GatewaySection };
  chartDefs: { key: string; title: string; timeframes: Timeframe[]; defaultTimeframe: Timeframe }[];
  kpis: { key: string; label: string; value: Decimal | null; unit: 'USD' | 'x'; deltaPct: Decimal | null }[];
  revenueFunctions: { key: string; label: string; formula: string; sharePct: Decimal | null }[];
  fundamentals: { fdv: Decimal | null; circulatingSupply: Decimal | null; totalSupply: Decimal | null; fdvToRevenue: Decimal | null };
  methodology: { version: string; cards: { id: string; title: string; body: string; formula: string }[] };
  verification: { status: 'verified' | 'partial'; checkedAt: string; summary: string; gaps: { key: string; reason: string }[] };
}

export interface GatewayTrend {
  times: string[];
  series: { key: string; values: (Decimal | null)[] }[];
}

export interface GatewayChartCatalogEntry {
  key: string;
  title: string;
  timeframes: Timeframe[];
  /** the documented data path, /v1/tokens/{slug}/charts/{key} */
  dataPath: string;
}

export interface GatewayChartItem {
  id: string;
  type: 'combo';
  currentTimeframe: Timeframe;
  dataFrom: string;
  dataThrough: string;
  config: { title: string; series: { key: string; label: string; render: 'line' | 'bar' }[] };
  data: ({ timestamp: string } & Record<string, string | null>)[];
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string };
  servers: { url: string }[];
  paths: Record<string, unknown>;
  components: Record<string, unknown>;
}

/**
 * What changes from epoch 0 to epoch 1 (epoch 2 changes more, see `epoch2`; later epochs only
 * add one more day each). Fixed by design so tests can assert it:
 * - `delistedSlug` ('cobalt-dex', when there are at least 3 tokens) disappears from the app
 *   token list, the app screener, the gateway catalog and screener; all its routes 404. It is
 *   listed again from epoch 2 on.
 * - `revised`: the first token's ('aurora') app effectiveMarketCap (screener row and
 *   snapshot `row.effectiveMarketCap`) and gateway screener `effMcap` get new values.
 * - `newDate`: one more day of app history (every stream and metric) and of gateway trend
 *   and chart data; older days keep their values.
 * - `bundle`: the first token's research bundle gains driver `addedDriverId` and an edge
 *   from 'vd-1' to it.
 * - `openapiAddedPath` appears in /openapi-product.json (info.version 1.0.0 -> 1.1.0).
 */
export interface EpochChanges {
  delistedSlug: string | null;
  revised: {
    slug: string;
    app: { field: 'effectiveMarketCap'; before: Decimal; after: Decimal };
    gateway: { field: 'effMcap'; before: Decimal; after: Decimal };
  } | null;
  newDate: string;
  bundle: { slug: string; addedDriverId: string } | null;
  openapiAddedPath: string;
  /** what changes from epoch 1 to epoch 2, the revision epoch (see `Epoch2Changes`) */
  epoch2: Epoch2Changes;
}

/** a value the revision epoch rewrites: `before` as served at epoch 1 (null if it was null), `after` from epoch 2 on */
export interface RevisedValue {
  before: Decimal | null;
  after: Decimal;
}

/** a past day the revision epoch rewrites */
export interface RevisedDate {
  date: string;
  /** relative to a 7-day overlap ending at epoch 2's last day (`Epoch2Changes.newDate`) */
  position: 'insideOverlap' | 'outsideOverlap';
}

/**
 * What changes from epoch 1 to epoch 2, the revision epoch. Every later epoch keeps all of it
 * (the revised dates stay put) and only adds one more day, as before. Fixed by design so tests
 * can assert it:
 * - `relistedSlug` (the epoch-1 `delistedSlug`, 'cobalt-dex') is listed again everywhere it was
 *   at epoch 0 (app token list and screener, gateway catalog and screener, all its routes),
 *   with the same data as at epoch 0 on old days, and history up to `newDate`.
 * - `revised` (the first token, 'aurora'):
 *   - `dates`: the revised past days: epoch 2's lastDate minus 2 days ('insideOverlap', which
 *     is epoch 0's last day) and firstDate plus 3 days ('outsideOverlap'; only with at least 9
 *     days of history).
 *   - `appHistory`: app history metric `effectiveMarketCap` (one series shared by every
 *     stream) is restated on each revised date (`days`). Every erm window is derived from
 *     that day's effective market cap, so each stream's non-null erm values of those days are
 *     restated by the same factor (none on the 'outsideOverlap' day: erm needs 7 days).
 *     `cells` lists every app history cell that changes, per stream, metric and date; no
 *     other cell of any token changes.
 *   - `gatewayTrend`: trend series `multAnnualized` is restated on each revised date (every
 *     period slice that holds the date shows it); the other series and the gateway chart
 *     rows (series of their own) keep their values.
 *   - `app`: app screener row `multiples['30d']` and snapshot `row.multiples['30d']` (one value).
 *   - `gateway`: gateway screener row `multAnnualized` and the token page's kpi `pFcf`, which
 *     shows the screener row's value.
 *   - `bundle`: the research bundle loses driver `removedDriverId` ('vd-2', there since epoch
 *     0) and `removedEdges`, every edge from or to it; the epoch-1 added driver stays.
 */
export interface Epoch2Changes {
  epoch: 2;
  /** epoch 2's last day: one more day of history, as every epoch adds */
  newDate: string;
  relistedSlug: string | null;
  revised: {
    slug: string;
    dates: RevisedDate[];
    appHistory: {
      metric: 'effectiveMarketCap';
      days: (RevisedDate & RevisedValue)[];
      cells: ({ stream: string; metric: HistoryMetricKey; date: string } & RevisedValue)[];
    };
    gatewayTrend: { series: 'multAnnualized'; days: (RevisedDate & RevisedValue)[] };
    app: { field: 'multiples.30d' } & RevisedValue;
    gateway: { field: 'multAnnualized'; pageKpi: 'pFcf' } & RevisedValue;
    bundle: {
      removedDriverId: string;
      removedEdges: { fromValueDriverId: string; toValueDriverId: string }[];
      /** the driver ids from epoch 2 on, in bundle order */
      driverIds: string[];
    };
  } | null;
}

export interface SimDataset {
  readonly epoch: number;
  /** first and last day of app history (and of gateway `all` chart data) */
  readonly firstDate: string;
  readonly lastDate: string;
  /** meta.asOf of app responses and most gateway responses: `${lastDate}T00:00:00.000Z` */
  readonly asOf: string;
  readonly epochChanges: EpochChanges;

  appMetrics(): readonly AppMetricEntry[];
  /** listed tokens of this epoch, in list order */
  appTokens(): readonly AppToken[];
  appToken(slug: string): AppToken | null;
  appScreenerRows(): readonly AppScreenerRow[];
  /** null when unknown, delisted or without snapshot coverage (the route 404s) */
  appSnapshot(slug: string): AppSnapshot | null;
  /** stream keys; the first is the default stream */
  appStreams(slug: string): readonly string[] | null;
  /** every stream, every metric, every day; null when the route 404s */
  appHistory(slug: string): readonly AppHistory[] | null;
  appHistoryPoints(slug: string): AppHistoryPoint[] | null;
  /** [] for a listed token without chart coverage */
  appCharts(slug: string): readonly AppChartCatalogEntry[] | null;
  appChartData(slug: string, chartKey: string): AppChartData | null;
  researchBundle(slug: string): ResearchBundle | null;

  gatewayTokens(): readonly GatewayToken[];
  gatewayScreenerRows(): readonly GatewayScreenerRow[];
  gatewayInsights(): readonly GatewayInsight[];
  gatewayPage(slug: string): GatewayPageShell | null;
  /** null when not materialized for that token and period (or the token is unknown) */
  gatewayTrend(slug: string, period: Period): GatewayTrend | null;
  gatewayCharts(slug: string): readonly GatewayChartCatalogEntry[] | null;
  /** null when the chart is unknown or does not support the timeframe */
  gatewayChartData(slug: string, chartKey: string, timeframe: Timeframe): GatewayChartItem | null;
  openapi(): OpenApiDocument;
}
