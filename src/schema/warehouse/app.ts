// The app host mirror (`/api/v1`): one table per resource, keyed as in the contract, each with
// the resource group that fills it and the sets its rows leave by (declare-table.ts).
import { boolean, index, integer, pgSchema, primaryKey, text } from 'drizzle-orm/pg-core';
import { dailyArchiveTable, decimal, delisted, firstSeen, knownTime, payloadJson, rowMeta, tstz } from './columns.ts';
import { declareTable } from './declare-table.ts';

export const appSchema = pgSchema('app');

export const metrics = declareTable(
  appSchema.table('metrics', {
    slug: text('slug').primaryKey(),
    unit: text('unit'),
    kind: text('kind'),
    group: text('group'),
    payload: payloadJson('payload').notNull(),
    ...rowMeta(),
  }),
  {
    groups: ['catalog'],
    sets: [{ scope: [], statedBy: 'a /api/v1/metrics catalog whose every item is readable' }],
  },
);

export const tokens = declareTable(
  appSchema.table('tokens', {
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
  }),
  {
    groups: ['tokens'],
    sets: [{ scope: [], statedBy: 'a complete /api/v1/tokens list (read to its last page, every item readable, every count and total matching: fetch-list.ts)' }],
  },
);

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

export const screenerRows = declareTable(
  appSchema.table('screener_rows', {
    tokenSlug: text('token_slug').primaryKey(),
    ...screenerValues(),
  }),
  {
    groups: ['screener'],
    sets: [{ scope: [], statedBy: 'a /api/v1/screener list whose every row names its token' }],
  },
);

export const screenerDaily = declareTable(
  dailyArchiveTable(appSchema, 'screener_daily', screenerValues),
  { groups: ['screener'] },
);

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

export const tokenSnapshots = declareTable(
  appSchema.table('token_snapshots', {
    tokenSlug: text('token_slug').primaryKey(),
    ...snapshotValues(),
  }),
  { groups: ['snapshot'] },
);

export const tokenSnapshotsDaily = declareTable(
  dailyArchiveTable(appSchema, 'token_snapshots_daily', snapshotValues),
  { groups: ['snapshot'] },
);

/** Every MetricValue / numeric cell of screener rows and snapshots, one row per place. */
export const metricValues = declareTable(
  appSchema.table(
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
  ),
  {
    groups: ['screener', 'snapshot'],
    sets: [
      { scope: ['surface'], statedBy: 'a /api/v1/screener list whose every row names its token (surface `screener`): a row states its cells, the list its tokens' },
      { scope: ['tokenSlug', 'surface'], statedBy: 'a snapshot that carries all of `row`, `combinedRevenue`, `fundamentals` and `streams` (surface `snapshot`)' },
    ],
  },
);

export const tokenStreams = declareTable(
  appSchema.table(
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
  ),
  {
    groups: ['snapshot'],
    sets: [{ scope: ['tokenSlug'], statedBy: 'a snapshot that carries its `streams` array' }],
  },
);

/** Long format: one value per token, stream, metric and time. */
export const metricHistory = declareTable(
  appSchema.table(
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
  ),
  {
    groups: ['history'],
    sets: [
      { scope: ['tokenSlug'], statedBy: 'a history fetched whole with `stream=all` (no `from=`)' },
      { scope: ['tokenSlug', 'stream'], statedBy: 'one stream fetched whole (no `from=`), when `stream=all` is fetched stream by stream' },
    ],
  },
);

export const charts = declareTable(
  appSchema.table(
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
  ),
  {
    groups: ['charts'],
    sets: [{ scope: ['tokenSlug'], statedBy: 'a chart catalog that is a list, every item readable' }],
  },
);

export const chartPoints = declareTable(
  appSchema.table(
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
  ),
  {
    groups: ['chart'],
    sets: [
      { scope: ['tokenSlug', 'chartKey'], statedBy: "a chart's data (its `rows`)" },
      // A chart gone from its catalog takes its points with it.
      { scope: ['tokenSlug'], keptBy: ['chartKey'], statedBy: 'a chart catalog that is a list, every item readable (the points of a chart it no longer lists)' },
    ],
  },
);

export const researchBundles = declareTable(
  appSchema.table('research_bundles', {
    tokenSlug: text('token_slug').primaryKey(),
    // status (from rowMeta): ok | skipped | unauthorized | no_credits | missing_scope | invalid
    missingScope: text('missing_scope'),
    summary: text('summary'),
    problemCode: text('problem_code'),
    payload: payloadJson('payload'),
    ...rowMeta(),
  }),
  { groups: ['bundle'] },
);

export const valueDrivers = declareTable(
  appSchema.table(
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
  ),
  {
    groups: ['bundle'],
    sets: [{ scope: ['tokenSlug'], statedBy: 'a research bundle that carries `valueDrivers`, `valueDriverEdges` and `tokenFunctions`' }],
  },
);

export const valueDriverEdges = declareTable(
  appSchema.table(
    'value_driver_edges',
    {
      tokenSlug: text('token_slug').notNull(),
      fromDriverId: text('from_driver_id').notNull(),
      toDriverId: text('to_driver_id').notNull(),
      payload: payloadJson('payload').notNull(),
      ...rowMeta(),
    },
    (t) => [primaryKey({ columns: [t.tokenSlug, t.fromDriverId, t.toDriverId] })],
  ),
  {
    groups: ['bundle'],
    sets: [{ scope: ['tokenSlug'], statedBy: 'a research bundle that carries all three arrays' }],
  },
);

export const tokenFunctions = declareTable(
  appSchema.table(
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
  ),
  {
    groups: ['bundle'],
    sets: [{ scope: ['tokenSlug'], statedBy: 'a research bundle that carries all three arrays' }],
  },
);
