// The gateway mirror (`/v1`): one table per resource, keyed as in the contract. Exported
// names carry a `gateway` prefix: src/schema/warehouse/index.ts re-exports the app tables too.
// Each table carries the resource group that fills it and the sets its rows leave by (declare-table.ts).
import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgSchema, primaryKey, text } from 'drizzle-orm/pg-core';
import { dailyArchiveTable, decimal, delisted, firstSeen, knownTime, payloadJson, rowMeta, tstz } from './columns.ts';
import { declareTable } from './declare-table.ts';

export const gatewaySchema = pgSchema('gateway');

export const gatewayTokens = declareTable(
  gatewaySchema.table('tokens', {
    slug: text('slug').primaryKey(),
    symbol: text('symbol'),
    name: text('name'),
    /** The token's snapshot path as sent (never followed off the base URL). */
    href: text('href'),
    firstSeenAt: firstSeen(),
    lastSeenAt: knownTime('last_seen_at').notNull(),
    /** Set when a complete catalog stops listing the token; cleared if it comes back. */
    delistedAt: delisted(),
    payload: payloadJson('payload').notNull(),
    ...rowMeta(),
  }),
  {
    groups: ['tokens'],
    sets: [{ scope: [], statedBy: 'a complete /v1/tokens list (read to its last page, every item readable, every count and total matching)' }],
  },
);

/** Columns of a screener row (also in the daily archive). */
const screenerValues = () => ({
  symbol: text('symbol'),
  name: text('name'),
  /** How the row named its token: slug | token.slug | token | symbol. */
  matchedBy: text('matched_by'),
  priceUsd: decimal('price_usd'),
  mcap: decimal('mcap'),
  effMcap: decimal('eff_mcap'),
  effRatio: decimal('eff_ratio'),
  revAnnualized: decimal('rev_annualized'),
  multAnnualized: decimal('mult_annualized'),
  fcfMomentum: decimal('fcf_momentum'),
  dataFreshness: text('data_freshness'),
  payload: payloadJson('payload').notNull(),
  ...rowMeta(),
});

export const gatewayScreenerRows = declareTable(
  gatewaySchema.table('screener_rows', {
    tokenSlug: text('token_slug').primaryKey(),
    ...screenerValues(),
  }),
  {
    groups: ['screener'],
    sets: [{ scope: [], statedBy: 'a /v1/screener list whose every row names a known token' }],
  },
);

export const gatewayScreenerDaily = declareTable(
  dailyArchiveTable(gatewaySchema, 'screener_daily', screenerValues),
  { groups: ['screener'] },
);

/** Per trailing window: annualized holder FCF (`rev`) and P/FCF (`mult`). */
export const gatewayScreenerWindows = declareTable(
  gatewaySchema.table(
    'screener_windows',
    {
      tokenSlug: text('token_slug').notNull(),
      window: text('window').notNull(),
      rev: decimal('rev'),
      mult: decimal('mult'),
      payload: payloadJson('payload'),
      ...rowMeta(),
    },
    (t) => [primaryKey({ columns: [t.tokenSlug, t.window] })],
  ),
  {
    groups: ['screener'],
    sets: [{ scope: [], statedBy: 'a /v1/screener list whose every row names a known token and carries `windows`' }],
  },
);

/** A screener row's revenue streams, when its entries carry a `key`. */
export const gatewayScreenerStreams = declareTable(
  gatewaySchema.table(
    'screener_streams',
    {
      tokenSlug: text('token_slug').notNull(),
      streamKey: text('stream_key').notNull(),
      label: text('label'),
      rev: decimal('rev'),
      sharePct: decimal('share_pct'),
      payload: payloadJson('payload').notNull(),
      ...rowMeta(),
    },
    (t) => [primaryKey({ columns: [t.tokenSlug, t.streamKey] })],
  ),
  {
    groups: ['screener'],
    sets: [{ scope: [], statedBy: 'a /v1/screener list whose every row names a known token and carries a `streams` array of keyed items' }],
  },
);

/** Screener rows whose token could not be told (no slug, symbol unknown or ambiguous): kept, not dropped. */
export const gatewayScreenerUnmatched = declareTable(
  gatewaySchema.table('screener_unmatched', {
    /** `symbol:<symbol>`, or `sha256:<hash of the row>` when it has no symbol either. */
    rowKey: text('row_key').primaryKey(),
    symbol: text('symbol'),
    name: text('name'),
    /** no-token | unknown-symbol | ambiguous-symbol */
    reason: text('reason').notNull(),
    firstSeenAt: firstSeen(),
    payload: payloadJson('payload').notNull(),
    ...rowMeta(),
  }),
  {
    groups: ['screener'],
    sets: [{ scope: [], statedBy: 'a /v1/screener list (its unmatched rows are all it has)' }],
  },
);

export const gatewayScreenerInsights = declareTable(
  gatewaySchema.table(
    'screener_insights',
    {
      /** The insight's own id, or `sha256:<hash of its content>` when it has none. */
      id: text('id').primaryKey(),
      type: text('type'),
      title: text('title'),
      tokenSlug: text('token_slug'),
      value: decimal('value'),
      window: text('window'),
      generatedAt: tstz('generated_at'),
      firstSeenAt: firstSeen(),
      payload: payloadJson('payload').notNull(),
      ...rowMeta(),
    },
    (t) => [index('screener_insights_token_slug_idx').on(t.tokenSlug)],
  ),
  { groups: ['screener'] },
);

export const gatewayTokenPages = declareTable(
  gatewaySchema.table('token_pages', {
    tokenSlug: text('token_slug').primaryKey(),
    tokenId: bigint('token_id', { mode: 'number' }),
    symbol: text('symbol'),
    name: text('name'),
    chain: text('chain'),
    protocolType: text('protocol_type'),
    priceUsd: decimal('price_usd'),
    imageUrl: text('image_url'),
    combinedAnnualized: decimal('combined_annualized'),
    combinedAllTime: decimal('combined_all_time'),
    combinedDeltaPct: decimal('combined_delta_pct'),
    combinedDeltaAbs: decimal('combined_delta_abs'),
    // Shapes the seed does not show: kept as sent.
    kpis: payloadJson('kpis'),
    revenueFunctions: payloadJson('revenue_functions'),
    fundamentals: payloadJson('fundamentals'),
    methodology: payloadJson('methodology'),
    verification: payloadJson('verification'),
    chartDefs: payloadJson('chart_defs'),
    payload: payloadJson('payload').notNull(),
    ...rowMeta(),
  }),
  { groups: ['page'] },
);

export const gatewayTokenSections = declareTable(
  gatewaySchema.table(
    'token_sections',
    {
      tokenSlug: text('token_slug').notNull(),
      section: text('section').notNull(),
      supported: boolean('supported'),
      state: text('state'),
      reason: text('reason'),
      // as_of (from rowMeta): the section's own asOf
      payload: payloadJson('payload').notNull(),
      ...rowMeta(),
    },
    (t) => [primaryKey({ columns: [t.tokenSlug, t.section] })],
  ),
  {
    groups: ['page'],
    sets: [{ scope: ['tokenSlug'], statedBy: 'a token page that carries `sections` (a page without it is refused)' }],
  },
);

/** History (TrendData) in long format; a point's `payload` is its cell as sent when it was not a decimal. */
export const gatewayTrendPoints = declareTable(
  gatewaySchema.table(
    'trend_points',
    {
      tokenSlug: text('token_slug').notNull(),
      period: text('period').notNull(),
      seriesKey: text('series_key').notNull(),
      ts: tstz('ts').notNull(),
      value: decimal('value'),
      payload: payloadJson('payload'),
      ...rowMeta(),
    },
    (t) => [
      // The key serves a token's series over a range; this, one series across tokens on a day.
      primaryKey({ columns: [t.tokenSlug, t.period, t.seriesKey, t.ts] }),
      index('trend_points_series_ts_idx').on(t.seriesKey, t.ts),
    ],
  ),
  {
    groups: ['history'],
    sets: [{ scope: ['tokenSlug', 'period'], from: 'ts', statedBy: 'a materialized history of the period (`data` not null), from its first time on' }],
  },
);

export const gatewayCharts = declareTable(
  gatewaySchema.table(
    'charts',
    {
      tokenSlug: text('token_slug').notNull(),
      chartKey: text('chart_key').notNull(),
      title: text('title'),
      /** The timeframes the catalog lists for the chart (null: it does not say). */
      timeframes: text('timeframes').array(),
      /**
       * The timeframes tesync mirrors for the chart (its `chart_timeframes` and `chart_points`):
       * the configured ones the chart lists, plus those mirrored instead of the ones it does not list.
       */
      mirroredTimeframes: text('mirrored_timeframes').array(),
      /**
       * Configured timeframes the chart does not list → the timeframe mirrored instead (the
       * longest it lists), e.g. `{"all": "365d"}`; null as value when it lists none tesync can
       * ask for; `{}` when nothing was substituted.
       */
      timeframeSubstitutions: jsonb('timeframe_substitutions').$type<Record<string, string | null>>(),
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

/** One fetched timeframe of a chart: the ChartItemOut without its rows. */
export const gatewayChartTimeframes = declareTable(
  gatewaySchema.table(
    'chart_timeframes',
    {
      tokenSlug: text('token_slug').notNull(),
      chartKey: text('chart_key').notNull(),
      timeframe: text('timeframe').notNull(),
      type: text('type'),
      currentTimeframe: text('current_timeframe'),
      title: text('title'),
      dataFrom: tstz('data_from'),
      dataThrough: tstz('data_through'),
      rowCount: integer('row_count'),
      payload: payloadJson('payload').notNull(),
      ...rowMeta(),
    },
    (t) => [primaryKey({ columns: [t.tokenSlug, t.chartKey, t.timeframe] })],
  ),
  {
    groups: ['chart'],
    sets: [
      // A chart gone from its catalog takes its timeframes with it; a timeframe gone from the
      // chart's list of timeframes, its own.
      { scope: ['tokenSlug'], keptBy: ['chartKey'], statedBy: 'a chart catalog that is a list, every item readable (the timeframes of a chart it no longer lists)' },
      { scope: ['tokenSlug', 'chartKey'], keptBy: ['timeframe'], statedBy: "such a catalog whose entry lists the chart's `timeframes` (a timeframe it no longer lists)" },
    ],
  },
);

export const gatewayChartSeries = declareTable(
  gatewaySchema.table(
    'chart_series',
    {
      tokenSlug: text('token_slug').notNull(),
      chartKey: text('chart_key').notNull(),
      seriesKey: text('series_key').notNull(),
      label: text('label'),
      render: text('render'),
      /** Whether `config.series` declares it (false: found only as a row key). */
      declared: boolean('declared').notNull().default(true),
      payload: payloadJson('payload'),
      ...rowMeta(),
    },
    (t) => [primaryKey({ columns: [t.tokenSlug, t.chartKey, t.seriesKey] })],
  ),
  {
    groups: ['chart'],
    sets: [
      {
        scope: ['tokenSlug', 'chartKey'],
        statedBy: "a chart timeframe that carries `config.series` (with its rows' keys); a series it does not carry stays while another timeframe of the chart has points of it",
        keptWhile: sql.raw(
          'exists (select 1 from gateway.chart_points p where p.token_slug = gateway.chart_series.token_slug and p.chart_key = gateway.chart_series.chart_key and p.series_key = gateway.chart_series.series_key)',
        ),
      },
      // A chart gone from its catalog takes its series with it.
      { scope: ['tokenSlug'], keptBy: ['chartKey'], statedBy: 'a chart catalog that is a list, every item readable (the series of a chart it no longer lists)' },
    ],
  },
);

/** Chart rows in long format; kept apart from trend_points (different series). */
export const gatewayChartPoints = declareTable(
  gatewaySchema.table(
    'chart_points',
    {
      tokenSlug: text('token_slug').notNull(),
      chartKey: text('chart_key').notNull(),
      timeframe: text('timeframe').notNull(),
      ts: tstz('ts').notNull(),
      seriesKey: text('series_key').notNull(),
      value: decimal('value'),
      payload: payloadJson('payload'),
      ...rowMeta(),
    },
    (t) => [primaryKey({ columns: [t.tokenSlug, t.chartKey, t.timeframe, t.ts, t.seriesKey] })],
  ),
  {
    groups: ['chart'],
    sets: [
      { scope: ['tokenSlug', 'chartKey', 'timeframe'], from: 'ts', statedBy: "a chart timeframe's `data` array, from its first time on" },
      // A chart gone from its catalog takes its points with it; a timeframe gone from the
      // chart's list of timeframes, its points.
      { scope: ['tokenSlug'], keptBy: ['chartKey'], statedBy: 'a chart catalog that is a list, every item readable (the points of a chart it no longer lists)' },
      { scope: ['tokenSlug', 'chartKey'], keptBy: ['timeframe'], statedBy: "such a catalog whose entry lists the chart's `timeframes` (the points of a timeframe it no longer lists)" },
    ],
  },
);
