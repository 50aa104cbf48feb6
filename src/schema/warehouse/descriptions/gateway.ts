// The `gateway` schema: the gateway API mirror (src/schema/warehouse/gateway.ts).
import { asOfFrom } from './shared.ts';
import type { ColumnDescriptions, SchemaDescription } from './types.ts';

/** The screener row's columns, in `gateway.screener_rows` (and its daily archive). */
const screenerColumns: ColumnDescriptions = {
  token_slug:
    'the row\'s token: its `slug` or `token.slug`, or, when it carries only a `symbol`, the catalog token with that symbol',
  matched_by: 'how the token was told: `slug`, `token.slug`, `token` (a bare string) or `symbol`',
  symbol: 'the token\'s symbol, as the row sends it',
  name: 'the token\'s name, as the row sends it',
  price_usd: 'token price, USD',
  mcap: 'reported market cap, USD',
  eff_mcap: 'effective market cap, USD: the capital base compared against holder FCF',
  eff_ratio: 'effective market cap / reported market cap (not limited to 0-1)',
  rev_annualized: 'annualized holder free cash flow, USD',
  mult_annualized: 'P/FCF: `eff_mcap / rev_annualized` (lower: a smaller capital base for the FCF run rate)',
  fcf_momentum: 'whether recent holder FCF improves or deteriorates against the longer run rate',
  data_freshness: 'upstream\'s `dataFreshness` (also in `freshness`)',
  as_of: asOfFrom('`meta.asOf` of the screener response'),
  payload: 'the row as sent, `streams` and unknown fields included',
};

const fromCatalog = 'the token (`gateway.tokens.slug`)';

export const gateway: SchemaDescription = {
  name: 'gateway',
  title: 'the gateway API (`/v1`)',
  description:
    'The gateway API (`/v1`), one table per resource. Money and ratio values arrive as JSON strings and are stored in `numeric` columns exactly as sent (`value::text` gives back the literal, up to Postgres normalizing an exponent or a leading `+`); a value that is not a decimal is null, its row has `status` `invalid`, and the value as sent stays in `payload`. Tokens the catalog stops listing keep their rows and get `delisted_at`; a whole screener without them closes their screener row.',
  sharedColumns: true,
  tables: {
    tokens: {
      summary: 'the token catalog',
      columns: {
        slug: 'the token',
        symbol: 'its ticker symbol',
        name: 'its name',
        href: 'the token\'s page path as sent (never followed off the base URL)',
        delisted_at:
          'set when a complete catalog stops listing the token, cleared if it returns; never from a failed or partial list',
        as_of: asOfFrom('`meta.asOf` of the catalog'),
        payload: 'the catalog entry as sent',
      },
      asOf: 'The universe of an instant: the tokens listed then (`delisted_at` null as known then).',
    },
    screener_rows: {
      summary: 'the latest screener',
      columns: screenerColumns,
      notes:
        'A null value means unavailable, unsupported, stale or not meaningful for the token\'s methodology. A token the screener no longer carries leaves this table (the token stays listed in `gateway.tokens`), but only when every row named a known token; its windows and streams likewise, when every row carries them.',
    },
    screener_windows: {
      summary: 'the screener per trailing window',
      columns: {
        token_slug: fromCatalog,
        window: '`7d`, `30d`, `90d`, `180d`, `365d`; annualized by 52, 12, 4, 2, 1',
        rev: 'annualized holder FCF for the window, USD',
        mult: 'P/FCF for the window: `eff_mcap / rev`',
        payload: 'the window as sent; `status` `invalid` when it was not an object',
      },
    },
    screener_streams: {
      summary: 'revenue streams of a screener row',
      description:
        'Stream entries that carry a `key`. Their shape is not documented upstream: every entry stays in `screener_rows.payload` too.',
      columns: {
        token_slug: fromCatalog,
        stream_key: 'the entry\'s `key`',
        label: 'the stream\'s name',
        rev: 'annualized holder FCF of the stream, USD',
        share_pct: 'share of holder FCF, percent',
        payload: 'the entry as sent',
      },
    },
    screener_unmatched: {
      summary: 'screener rows whose token could not be told',
      description:
        'Kept, never dropped, while the screener carries them: a screener without the row closes it (its version stays in `gateway.screener_unmatched_history`). `sync.resource_state` of `screener` lists them too, and its status is then `partial`.',
      columns: {
        row_key: '`symbol:<symbol>`, or `sha256:<hash of the row>` when it has no symbol',
        symbol: 'the row\'s symbol',
        name: 'the row\'s name',
        reason:
          '`unknown-symbol`: no catalog token has it; `ambiguous-symbol`: several do; `no-token`: neither slug nor symbol; `unreadable`: not an object',
        payload: 'the whole row',
      },
    },
    screener_insights: {
      summary: 'the screener\'s `insights`',
      columns: {
        id: 'the insight\'s own `id`, or `sha256:<hash of its content>` when it has none',
        type: 'its type, as sent',
        title: 'its title',
        token_slug: 'the token it is about; null for market-wide insights',
        value: 'its number (numeric)',
        window: 'the trailing window it is about, as sent',
        generated_at: 'when upstream generated it, as it came with the row\'s current values: a later `generatedAt` alone leaves the row as it is (no new version)',
        payload: 'the insight as sent',
      },
      notes: 'Insights upstream stops sending stay.',
    },
    token_pages: {
      summary: 'token page shells',
      columns: {
        token_slug: fromCatalog,
        token_id: 'upstream\'s numeric id of the token',
        symbol: 'the token\'s symbol',
        name: 'the token\'s name',
        chain: 'the chain it lives on',
        protocol_type: 'the kind of protocol, as sent',
        price_usd: 'token price, USD',
        image_url: 'its image, from `meta`',
        combined_annualized: 'combined holder revenue, annualized, USD',
        combined_all_time: 'combined holder revenue, all time, USD',
        combined_delta_pct: 'change of combined holder revenue, percent',
        combined_delta_abs: 'change of combined holder revenue, USD',
        kpis: 'KPI cards, as sent (jsonb; shape not documented upstream)',
        revenue_functions: 'revenue functions, as sent (jsonb; shape not documented upstream)',
        fundamentals: 'fundamentals, as sent (jsonb; shape not documented upstream)',
        methodology: 'methodology cards and formulas, as sent (jsonb)',
        verification: 'verification summary and gaps, as sent (jsonb)',
        chart_defs: 'chart definitions, as sent (jsonb)',
        as_of: asOfFrom('`meta.asOf` of the page'),
        payload: 'the page as sent',
      },
    },
    token_sections: {
      summary: 'page sections',
      columns: {
        token_slug: fromCatalog,
        section: '`trend`, `charts`, ...',
        supported: 'whether upstream supports the section for the token',
        state: '`ready`, ...',
        reason: 'why it is unsupported',
        as_of: asOfFrom('the section\'s own `asOf`'),
        payload: 'the section as sent',
      },
      notes: 'A section the page no longer has is removed with it. A page without `sections` states none: it is refused (`invalid`, its body kept) and the stored sections stay.',
    },
    trend_points: {
      summary: 'history (TrendData), long format',
      columns: {
        token_slug: fromCatalog,
        period: 'the configured `TE_GATEWAY_HISTORY_PERIODS`: `7d`, `30d`, `90d`, `180d`, `365d`, `1y`',
        series_key: 'e.g. `revAnnualized`, `effMcap`, `multAnnualized`; token-specific',
        ts: 'the point\'s time, UTC',
        value: 'the number',
        as_of: asOfFrom('`meta.asOf` of the response'),
        payload: 'the cell as sent when it was not a decimal',
      },
      notes:
        'When upstream answers `data: null` (not materialized for that token and period), `sync.resource_state` (`token/<slug>/history/<period>`) says `not_materialized` and earlier points stay. Like pages and chart catalogs, a period is asked again only when the token catalog\'s `meta.asOf` moves (or after `TE_MARKER_MAX_AGE_HOURS`), whether it was materialized or not. A period states its points from its first time on: a point within that range it no longer carries closes; points that slid out of the period since an earlier sync are kept: select by `ts` for the current window. Trend series and chart series are different series: never join them on key.',
    },
    charts: {
      summary: 'chart catalog',
      columns: {
        token_slug: fromCatalog,
        chart_key: 'the chart',
        title: 'its title',
        timeframes: 'the timeframes the catalog lists for the chart (text[]); null when it does not say',
        mirrored_timeframes:
          'the timeframes tesync mirrors for it (text[]), i.e. the values of `timeframe` in its `chart_timeframes` and `chart_points` rows',
        timeframe_substitutions:
          'jsonb: each configured `TE_GATEWAY_CHART_TIMEFRAMES` value the chart does not list, mapped to the timeframe mirrored instead, e.g. `{"all": "365d"}`; null as the value when it lists none tesync can ask for; `{}` when nothing was substituted',
        data_path: 'the documented route tesync reads; never an off-site link',
        as_of: asOfFrom('`meta.asOf` of the catalog'),
        payload: 'the catalog item as sent',
      },
      notes:
        'A chart is asked only for timeframes its catalog lists. When a configured timeframe is not among them (the default `all` often is not), tesync mirrors the longest one the chart lists instead (7d < 30d < 90d < 180d < 365d = 1y < all; of 365d and 1y, 365d), once even when several configured timeframes come down to it, and stores its points under that real timeframe, never relabelled. A chart listing no timeframe tesync can ask for maps to null (`{"all": null}`) and has no points, which is then on record. The substitution is also in the chart timeframe\'s `sync.resource_state` (`token/<slug>/chart/<key>/<timeframe>`): `details` has `mirrored`, `requested` (the configured timeframes it stands for), `substituted` and `substitutedFor`. A chart a catalog read whole (a list, every item readable) no longer lists closes.',
    },
    chart_timeframes: {
      summary: 'each fetched timeframe of a chart',
      columns: {
        token_slug: fromCatalog,
        chart_key: 'the chart (`gateway.charts.chart_key`)',
        timeframe:
          'the timeframe fetched: a configured `TE_GATEWAY_CHART_TIMEFRAMES` value the chart lists, or the one mirrored in place of one it does not list (see `gateway.charts`)',
        type: '`combo`, ...',
        current_timeframe: 'what upstream says is in effect',
        title: 'the chart\'s title',
        data_from: 'where the data starts',
        data_through: 'where the data ends',
        row_count: 'rows received',
        payload: 'the chart item as sent, without its rows',
      },
    },
    chart_series: {
      summary: 'series of a chart',
      columns: {
        token_slug: fromCatalog,
        chart_key: 'the chart (`gateway.charts.chart_key`)',
        series_key: 'the series: its key in `config.series` and in the rows',
        label: 'its label, from `config.series`',
        render: '`line`, `bar`, ...',
        declared: 'true when `config.series` declares it; false for a row key holding decimals that `config.series` does not declare',
        payload: 'its `config.series` entry as sent; null when undeclared',
      },
    },
    chart_points: {
      summary: 'chart rows, long format',
      columns: {
        token_slug: fromCatalog,
        chart_key: 'the chart (`gateway.charts.chart_key`)',
        timeframe: 'the timeframe fetched (`gateway.chart_timeframes.timeframe`)',
        ts: 'the row\'s `timestamp`',
        series_key: 'the series (`gateway.chart_series.series_key`)',
        value: 'the number; null when the row sends a null',
        payload: 'the cell as sent when it was not a decimal',
      },
      notes:
        'A series a row does not mention has no point there; a null it sends is a null `value`. A timeframe\'s `data` states its points from its first time on: a point within that range it no longer carries closes; points that slid out of the timeframe are kept.',
    },
  },
};
