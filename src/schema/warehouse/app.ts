// The app host mirror (`/api/v1`): one table per resource, keyed as in the contract.
import { boolean, index, integer, pgSchema, primaryKey, text } from 'drizzle-orm/pg-core';
import { dailyArchiveTable, decimal, delisted, firstSeen, knownTime, payloadJson, rowMeta, tstz } from './columns.ts';

export const appSchema = pgSchema('app');

export const metrics = appSchema.table('metrics', {
  slug: text('slug').primaryKey(),
  unit: text('unit'),
  kind: text('kind'),
  group: text('group'),
  payload: payloadJson('payload').notNull(),
  ...rowMeta(),
});

export const tokens = appSchema.table('tokens', {
  slug: text('slug').primaryKey(),
  displayName: text('display_name'),
  symbol: text('symbol'),
  imageUrl: text('image_url'),
  coverageScreener: boolean('coverage_screener').notNull().default(false),
  coverageSnapshot: boolean('coverage_snapshot').notNull().default(false),
  coverageMetricHistory: boolean('coverage_metric_history').notNull().default(false),
  coverageTrend: boolean('coverage_trend').notNull().default(false),
  coverageCharts: boolean('coverage_charts').notNull().default(false),
  coverageBacktests: boolean('coverage_backtests').notNull().default(false),
  firstSeenAt: firstSeen(),
  lastSeenAt: knownTime('last_seen_at').notNull(),
  /** Set when the token list stops listing the token; cleared if it comes back. */
  delistedAt: delisted(),
  payload: payloadJson('payload').notNull(),
  ...rowMeta(),
});

/** Numeric columns of a screener row (also in the daily archive). */
const screenerValues = () => ({
  effectiveMarketCap: decimal('effective_market_cap'),
  effectiveRatio: decimal('effective_ratio'),
  annualizedRevenue: decimal('annualized_revenue'),
  multiple7d: decimal('multiple_7d'),
  multiple30d: decimal('multiple_30d'),
  multiple90d: decimal('multiple_90d'),
  multiple180d: decimal('multiple_180d'),
  multiple365d: decimal('multiple_365d'),
  displayName: text('display_name'),
  symbol: text('symbol'),
  payload: payloadJson('payload').notNull(),
  ...rowMeta(),
});

export const screenerRows = appSchema.table('screener_rows', {
  tokenSlug: text('token_slug').primaryKey(),
  ...screenerValues(),
});

export const screenerDaily = dailyArchiveTable(appSchema, 'screener_daily', screenerValues);

const snapshotValues = () => ({
  displayName: text('display_name'),
  symbol: text('symbol'),
  effectiveMarketCap: decimal('effective_market_cap'),
  annualizedRevenue: decimal('annualized_revenue'),
  combinedRevenueAnnualized: decimal('combined_revenue_annualized'),
  fdvToRevenue: decimal('fdv_to_revenue'),
  multiple30d: decimal('multiple_30d'),
  multiple365d: decimal('multiple_365d'),
  sections: payloadJson('sections'),
  /** When upstream generated the snapshot (`freshness.generatedAt`); `as_of` is the data's own time. */
  generatedAt: tstz('generated_at'),
  payload: payloadJson('payload').notNull(),
  ...rowMeta(),
});

export const tokenSnapshots = appSchema.table('token_snapshots', {
  tokenSlug: text('token_slug').primaryKey(),
  ...snapshotValues(),
});

export const tokenSnapshotsDaily = dailyArchiveTable(appSchema, 'token_snapshots_daily', snapshotValues);

/** Every MetricValue / numeric cell of screener rows and snapshots, one row per place. */
export const metricValues = appSchema.table(
  'metric_values',
  {
    tokenSlug: text('token_slug').notNull(),
    /** screener | snapshot */
    surface: text('surface').notNull(),
    /** Where in the object, e.g. `row.multiples.30d`, `effectiveMarketCap`. */
    path: text('path').notNull(),
    metric: text('metric'),
    value: decimal('value'),
    unit: text('unit'),
    kind: text('kind'),
    /** Why `value` is null, when upstream says. */
    reason: text('reason'),
    payload: payloadJson('payload'),
    ...rowMeta(),
  },
  (t) => [primaryKey({ columns: [t.tokenSlug, t.surface, t.path] }), index('metric_values_metric_idx').on(t.metric)],
);

export const tokenStreams = appSchema.table(
  'token_streams',
  {
    tokenSlug: text('token_slug').notNull(),
    streamKey: text('stream_key').notNull(),
    label: text('label'),
    mixPercentLabel: text('mix_percent_label'),
    annualizedRevenue: decimal('annualized_revenue'),
    payload: payloadJson('payload').notNull(),
    ...rowMeta(),
  },
  (t) => [primaryKey({ columns: [t.tokenSlug, t.streamKey] })],
);

/** Long format: one value per token, stream, metric and time. */
export const metricHistory = appSchema.table(
  'metric_history',
  {
    tokenSlug: text('token_slug').notNull(),
    stream: text('stream').notNull(),
    metric: text('metric').notNull(),
    ts: tstz('ts').notNull(),
    interval: text('interval'),
    value: decimal('value'),
    unit: text('unit'),
    kind: text('kind'),
    ...rowMeta(),
  },
  (t) => [
    // The key serves a token's series over a range; this, one metric across tokens on a day.
    primaryKey({ columns: [t.tokenSlug, t.stream, t.metric, t.ts] }),
    index('metric_history_metric_ts_idx').on(t.metric, t.ts),
  ],
);

export const charts = appSchema.table(
  'charts',
  {
    tokenSlug: text('token_slug').notNull(),
    chartKey: text('chart_key').notNull(),
    title: text('title'),
    section: text('section'),
    rowCount: integer('row_count'),
    /** The path tesync fetches the data from (documented route, never an off-site link). */
    dataPath: text('data_path'),
    payload: payloadJson('payload').notNull(),
    ...rowMeta(),
  },
  (t) => [primaryKey({ columns: [t.tokenSlug, t.chartKey] })],
);

export const chartPoints = appSchema.table(
  'chart_points',
  {
    tokenSlug: text('token_slug').notNull(),
    chartKey: text('chart_key').notNull(),
    /** The x cell as sent (a date for time charts). */
    x: text('x').notNull(),
    /** The column key of the value. */
    series: text('series').notNull(),
    /** `x` as a timestamp when it is one. */
    ts: tstz('ts'),
    value: decimal('value'),
    unit: text('unit'),
    kind: text('kind'),
    ...rowMeta(),
  },
  (t) => [primaryKey({ columns: [t.tokenSlug, t.chartKey, t.x, t.series] })],
);

export const researchBundles = appSchema.table('research_bundles', {
  tokenSlug: text('token_slug').primaryKey(),
  // status (from rowMeta): ok | skipped | unauthorized | no_credits | missing_scope | invalid
  missingScope: text('missing_scope'),
  summary: text('summary'),
  problemCode: text('problem_code'),
  payload: payloadJson('payload'),
  ...rowMeta(),
});

export const valueDrivers = appSchema.table(
  'value_drivers',
  {
    tokenSlug: text('token_slug').notNull(),
    /** Valid only inside this token's bundle. */
    driverId: text('driver_id').notNull(),
    type: text('type'),
    description: text('description'),
    formula: text('formula'),
    payload: payloadJson('payload').notNull(),
    ...rowMeta(),
  },
  (t) => [primaryKey({ columns: [t.tokenSlug, t.driverId] })],
);

export const valueDriverEdges = appSchema.table(
  'value_driver_edges',
  {
    tokenSlug: text('token_slug').notNull(),
    fromDriverId: text('from_driver_id').notNull(),
    toDriverId: text('to_driver_id').notNull(),
    payload: payloadJson('payload').notNull(),
    ...rowMeta(),
  },
  (t) => [primaryKey({ columns: [t.tokenSlug, t.fromDriverId, t.toDriverId] })],
);

export const tokenFunctions = appSchema.table(
  'token_functions',
  {
    tokenSlug: text('token_slug').notNull(),
    functionId: text('function_id').notNull(),
    type: text('type'),
    description: text('description'),
    parentId: text('parent_id'),
    payload: payloadJson('payload').notNull(),
    ...rowMeta(),
  },
  (t) => [primaryKey({ columns: [t.tokenSlug, t.functionId] })],
);
