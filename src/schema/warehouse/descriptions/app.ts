// The `app` schema: the app host API mirror (src/schema/warehouse/app.ts).
import { asOfFrom } from './shared.ts';
import type { ColumnDescriptions, SchemaDescription } from './types.ts';

/** P/FCF of a trailing window, read from `path` of the screener row or snapshot. */
const multiples = (window: string, path: string): string =>
  `P/FCF over the trailing ${window} window (\`${path}\`): effective market cap / annualized holder FCF of the window; null when not meaningful (e.g. negative FCF), reason in \`app.metric_values\``;

/** The screener row's numbers, in `app.screener_rows` (and its daily archive). */
const screenerColumns: ColumnDescriptions = {
  token_slug: 'the token (`app.tokens.slug`)',
  effective_market_cap: 'effective market cap, USD',
  effective_ratio: 'effective / reported market cap',
  annualized_revenue: 'annualized holder FCF, USD',
  multiple_7d: multiples('7d', 'multiples.7d'),
  multiple_30d: multiples('30d', 'multiples.30d'),
  multiple_90d: multiples('90d', 'multiples.90d'),
  multiple_180d: multiples('180d', 'multiples.180d'),
  multiple_365d: multiples('365d', 'multiples.365d'),
  display_name: 'the token\'s name, as the row sends it',
  symbol: 'the token\'s symbol, as the row sends it',
  payload: 'the screener row as sent',
};

export const app: SchemaDescription = {
  name: 'app',
  title: 'the app host API (`/api/v1`)',
  description: 'The app host API (`/api/v1`), one table per resource.',
  sharedColumns: true,
  tables: {
    metrics: {
      summary: 'the metric catalog',
      columns: {
        slug: 'the metric, e.g. `effectiveMarketCap`, `multiple.30d`, `stream.annualizedRevenue`',
        unit: '`USD`, `x`',
        kind: '`gauge`, `rate`, `ratio`',
        group: 'the surface it belongs to, e.g. `screener`, `snapshot`',
        payload: 'the catalog entry as sent',
      },
      notes: 'A metric a catalog read whole (every item readable) no longer lists closes; values already stored for it stay in their own tables.',
    },
    tokens: {
      summary: 'tokens and what the API covers for them',
      columns: {
        slug: 'the token',
        display_name: 'its name',
        symbol: 'its ticker symbol',
        image_url: 'its image, as sent',
        coverage_screener: 'whether the screener covers the token',
        coverage_snapshot: 'whether its snapshot route exists',
        coverage_metric_history: 'whether its metric history route exists',
        coverage_trend: 'whether its trend route exists',
        coverage_charts: 'whether its chart routes exist',
        coverage_backtests: 'whether its backtest routes exist',
        delisted_at:
          'set when the token list stops listing it, cleared if it returns; set only from a complete list, never from a failure',
        freshness: 'upstream\'s freshness marker, e.g. `{"status":"fresh"}`, without its `asOf`: a verdict that changes is a new version, a moved `asOf` is not (the list\'s newest is in `sync.resource_state.as_of`)',
        payload: 'the token list entry as sent',
      },
      asOf: 'The universe of an instant: the tokens listed then (`delisted_at` null as known then), with the coverage flags known then.',
    },
    screener_rows: {
      summary: 'the latest screener',
      description: 'One row per token the screener lists, as last received.',
      columns: screenerColumns,
      notes:
        'A null value has its reason in `app.metric_values`. A token the screener no longer carries leaves this table (its version closes, the token stays listed in `app.tokens`), but only when every row of the screener named its token.',
    },
    token_snapshots: {
      summary: 'the latest snapshot of each token',
      columns: {
        token_slug: 'the token (`app.tokens.slug`)',
        display_name: 'the token\'s name, as the snapshot sends it',
        symbol: 'the token\'s symbol, as the snapshot sends it',
        effective_market_cap: 'effective market cap, USD',
        annualized_revenue: 'annualized holder FCF, USD',
        combined_revenue_annualized: 'combined revenue, annualized, USD (`combinedRevenue.annualized`)',
        fdv_to_revenue: 'fully diluted value / revenue (`fundamentals.fdvToRevenue`)',
        multiple_30d: multiples('30d', 'row.multiples.30d'),
        multiple_365d: multiples('365d', 'row.multiples.365d'),
        sections: 'section name → state',
        generated_at:
          'when upstream generated the snapshot, its `freshness.generatedAt`: often hours after `as_of`, and not a time the data is about. As it came with the row\'s current values: a later response that confirms them under a later `generatedAt` leaves it (no new version); the newest is in `sync.resource_state.details.generatedAt`',
        as_of: asOfFrom('the data\'s own time: the snapshot\'s `asOf`, else the response\'s `meta.asOf`'),
        freshness: 'the snapshot\'s freshness status',
        payload: 'the snapshot as sent',
      },
      notes: 'A null value has its reason in `app.metric_values`.',
    },
    metric_values: {
      summary: 'every number of screener rows and snapshots',
      description: 'Every MetricValue / numeric cell of the screener rows and snapshots, one row per place it sits.',
      columns: {
        token_slug: 'the token (`app.tokens.slug`)',
        surface: '`screener` or `snapshot`',
        path: 'where the number sits: `effectiveMarketCap`, `multiples.30d`, `row.multiples.365d`, `fundamentals.fdvToRevenue`, `streams.<stream>.annualizedRevenue`',
        metric: 'the catalog slug (`app.metrics.slug`)',
        value: 'the number (numeric), null when unavailable',
        unit: 'as the catalog or the cell says: `USD`, `x`',
        kind: 'as the catalog or the cell says: `gauge`, `rate`, `ratio`',
        status: '`ok`, `missing`, `stale`, `unsupported`, `not_computed`, or `invalid` when unreadable',
        reason: 'why the value is null, when upstream says',
        payload: 'the cell as sent',
      },
      notes:
        'A snapshot that carries all of `row`, `combinedRevenue`, `fundamentals` and `streams` states its cells: one it no longer has closes. A snapshot without one of them, and the screener, close no cell (absent is not empty).',
    },
    token_streams: {
      summary: 'revenue streams per token',
      columns: {
        token_slug: 'the token (`app.tokens.slug`)',
        stream_key: 'the stream',
        label: 'the stream\'s name',
        mix_percent_label: 'its share of revenue, as sent (e.g. `41.2%`)',
        annualized_revenue: 'annualized revenue of the stream, USD',
        payload: 'the stream as sent',
      },
      notes: 'A stream a snapshot with a `streams` array no longer carries closes; a snapshot without the array closes none.',
    },
    metric_history: {
      summary: 'daily history, long format',
      description:
        'Every stream (`aggregate` and per stream), every metric (`holderFcf` USD, `effectiveMarketCap` USD, `erm7d` ... `erm365d`: P/FCF per window), every day upstream has.',
      columns: {
        token_slug: 'the token (`app.tokens.slug`)',
        stream:
          'the real stream key, never `all`, whichever form upstream answered `stream=all` in; when that answer could not be split by stream for certain, tesync asked for the streams one by one (the token\'s `sync.resource_state.details.form` says `per-stream`)',
        metric: '`holderFcf` (USD), `effectiveMarketCap` (USD), `erm7d`, `erm30d`, `erm90d`, `erm180d`, `erm365d` (P/FCF per trailing window)',
        ts: 'the day (timestamptz, UTC midnight for daily rows)',
        interval: '`1d`',
        value: 'the number',
        unit: '`USD`, `x`',
        kind: '`gauge`, `rate`, `ratio`',
        as_of: asOfFrom('the response\'s `meta.asOf`'),
      },
      notes:
        'Revised values overwrite by key; a value received again unchanged is not rewritten. The overlap (`TE_HISTORY_OVERLAP_DAYS`) catches recent revisions, and a whole fetch every `TE_HISTORY_FULL_REFETCH_DAYS` (7) older ones. A whole fetch (no `from=`) states the token\'s history: a day, metric or stream it no longer carries closes (stream by stream, each stream fetched whole states its own). An incremental fetch closes nothing.',
    },
    charts: {
      summary: 'chart catalog of each token',
      columns: {
        token_slug: 'the token (`app.tokens.slug`)',
        chart_key: 'the chart',
        title: 'its title',
        section: 'the page section it belongs to',
        row_count: 'rows the catalog says the chart has',
        data_path: 'the documented route tesync reads its data from; never an off-site link',
        payload: 'the catalog entry as sent',
      },
      notes: 'A chart a catalog read whole (a list, every item readable) no longer lists closes.',
    },
    chart_points: {
      summary: 'chart data, long format',
      columns: {
        token_slug: 'the token (`app.tokens.slug`)',
        chart_key: 'the chart (`app.charts.chart_key`)',
        x: 'the x cell as sent, e.g. a date',
        series: 'the column key of the value; prefixed by a dimension\'s value when the chart has one (`fees/revenue`)',
        ts: '`x` as a timestamp, when it is one',
        value: 'the number',
        unit: 'the column\'s unit, as sent',
        kind: 'the column\'s kind, as sent',
      },
      notes:
        'A column of text is no series: when it tells apart rows of one `x` (a dimension), its value prefixes the series (`fees/revenue`); otherwise it only labels rows and is not stored here (the chart\'s state lists it in `details.labelColumns`; the body is in `sync.raw_responses`). A chart\'s data states all its points: one it no longer carries closes.',
    },
    research_bundles: {
      summary: 'the research bundle of each token, from the API key routes',
      columns: {
        token_slug: 'the token (`app.tokens.slug`)',
        status:
          '`ok`, `skipped` (no API key configured), `unauthorized` (401), `no_credits` (402: the token is not enabled for the key), `missing_scope` (403; `missing_scope` names the scope needed), `invalid`',
        missing_scope: 'the scope the key lacks, when `status` is `missing_scope`',
        summary: 'the bundle\'s summary',
        problem_code: 'the upstream problem code of a refusal',
        payload: 'the bundle as sent',
      },
      notes: 'A refusal keeps the summary, the payload and the drivers an earlier fetch stored.',
    },
    value_drivers: {
      summary: 'the drivers of a token\'s research graph',
      columns: {
        token_slug: 'the token (`app.tokens.slug`)',
        driver_id: 'the driver; valid only within this token\'s bundle',
        type: 'the driver\'s type',
        description: 'what it is',
        formula: 'how it is computed, as sent',
        payload: 'the driver as sent',
      },
      notes:
        'Ids are valid only within one token\'s bundle (every key starts with `token_slug`); a token\'s drivers, edges and functions are replaced together, in one transaction, each time its bundle is fetched. A bundle that leaves out `valueDrivers`, `valueDriverEdges` or `tokenFunctions` states no graph: it is refused (`invalid`, its body kept) and the stored graph stays.',
    },
    value_driver_edges: {
      summary: 'the edges of a token\'s research graph',
      columns: {
        token_slug: 'the token (`app.tokens.slug`)',
        from_driver_id: 'the driver the edge leaves (`app.value_drivers.driver_id` of the same token)',
        to_driver_id: 'the driver it reaches (`app.value_drivers.driver_id` of the same token)',
        payload: 'the edge as sent',
      },
      notes: 'Replaced with the token\'s drivers and functions each time its bundle is fetched.',
    },
    token_functions: {
      summary: 'the functions of a token\'s research graph',
      columns: {
        token_slug: 'the token (`app.tokens.slug`)',
        function_id: 'the function; valid only within this token\'s bundle',
        type: 'its type',
        description: 'what it is',
        parent_id: 'the function it belongs to (`function_id` of the same token)',
        payload: 'the function as sent',
      },
      notes: 'Replaced with the token\'s drivers and edges each time its bundle is fetched.',
    },
  },
};
