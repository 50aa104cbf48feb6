// The `analytics` schema: views over the mirror (src/schema/warehouse/analytics.ts). Its section of
// docs/warehouse.md is written by hand; the per-view reference generated from here goes in its
// own block there (`ownBlock`). A view has an as-of form where the generator makes one.
import { ANALYTICS_VIEWS, hasAsOf, WINDOWS } from '../analytics.ts';
import { app } from './app.ts';
import { gateway } from './gateway.ts';
import type { ColumnDescriptions, SchemaDescription } from './types.ts';

/** Whether the generator gives the view an as-of form (a view described but not declared: a test names it). */
const asOfForm = (name: string): boolean => {
  const view = ANALYTICS_VIEWS.find((v) => v.name === name);
  return view !== undefined && hasAsOf(view);
};

const perWindow = (f: (w: string) => [string, string]): ColumnDescriptions => Object.fromEntries(WINDOWS.map(f));
const appToken = app.tables!.tokens!.columns;
const appScreener = app.tables!.screener_rows!.columns;
const gatewayScreener = gateway.tables!.screener_rows!.columns;

export const analytics: SchemaDescription = {
  name: 'analytics',
  title: 'the questions, answered',
  description:
    'Views over the mirror for the questions analysts ask, in one vocabulary whichever API a number came from: P/FCF is `pfcf_<window>` (`pfcf_annualized` for the gateway\'s headline multiple), holder FCF is `holder_fcf_<window>` / `holder_fcf_annualized`, `effective_market_cap` is the capital base both divide. Where every table a view reads keeps its versions, the view has an as-of form, `analytics.<view>_as_of(at timestamptz)`, returning the same columns as tesync knew them at `at`.',
  ownBlock: true,
  views: {
    app_universe: {
      summary: 'the listed app tokens with their latest screener values',
      description: 'Delisted tokens are left out: one row per token of `app.tokens` with `delisted_at` null, its screener row beside it (null values when the screener has none).',
      key: ['token_slug'],
      hasAsOf: asOfForm('app_universe'),
      asOf: 'The universe and the values of an instant: the tokens listed then, with the values known then.',
      columns: {
        token_slug: 'the token (`app.tokens.slug`)',
        display_name: 'the token\'s name (`app.tokens.display_name`)',
        symbol: 'the token\'s ticker symbol (`app.tokens.symbol`)',
        coverage_screener: appToken.coverage_screener!,
        coverage_snapshot: appToken.coverage_snapshot!,
        coverage_metric_history: appToken.coverage_metric_history!,
        coverage_trend: appToken.coverage_trend!,
        coverage_charts: appToken.coverage_charts!,
        effective_market_cap: `${appScreener.effective_market_cap} (\`app.screener_rows.effective_market_cap\`)`,
        effective_ratio: `${appScreener.effective_ratio} (\`app.screener_rows.effective_ratio\`)`,
        holder_fcf_annualized: `${appScreener.annualized_revenue} (\`app.screener_rows.annualized_revenue\`)`,
        ...perWindow((w) => [`pfcf_${w}`, appScreener[`multiple_${w}`]!]),
        freshness: 'the screener row\'s freshness marker, as sent',
        as_of: 'the screener row\'s data time (`app.screener_rows.as_of`)',
        fetched_at: 'when tesync first received the screener row\'s current values (`app.screener_rows.fetched_at`)',
      },
    },
    gateway_universe: {
      summary: 'the listed gateway tokens with their screener values, every window wide',
      description: 'Delisted tokens are left out: one row per token of `gateway.tokens` with `delisted_at` null, its screener row and windows beside it.',
      key: ['token_slug'],
      hasAsOf: asOfForm('gateway_universe'),
      asOf: 'The universe and the values of an instant.',
      columns: {
        token_slug: 'the token (`gateway.tokens.slug`)',
        name: 'the token\'s name (`gateway.tokens.name`)',
        symbol: 'the token\'s ticker symbol (`gateway.tokens.symbol`)',
        price_usd: `${gatewayScreener.price_usd} (\`gateway.screener_rows.price_usd\`)`,
        market_cap: `${gatewayScreener.mcap} (\`gateway.screener_rows.mcap\`)`,
        effective_market_cap: `${gatewayScreener.eff_mcap} (\`gateway.screener_rows.eff_mcap\`)`,
        effective_ratio: `${gatewayScreener.eff_ratio} (\`gateway.screener_rows.eff_ratio\`)`,
        holder_fcf_annualized: `${gatewayScreener.rev_annualized} (\`gateway.screener_rows.rev_annualized\`)`,
        pfcf_annualized: `the gateway's headline ${gatewayScreener.mult_annualized}; not any one window's (\`gateway.screener_rows.mult_annualized\`)`,
        ...perWindow((w) => [`pfcf_${w}`, `P/FCF over the trailing ${w} window: \`eff_mcap / rev\` (\`gateway.screener_windows.mult\`, window \`${w}\`)`]),
        ...perWindow((w) => [`holder_fcf_${w}`, `annualized holder FCF over the trailing ${w} window, USD (\`gateway.screener_windows.rev\`, window \`${w}\`)`]),
        fcf_momentum: `${gatewayScreener.fcf_momentum} (\`gateway.screener_rows.fcf_momentum\`)`,
        data_freshness: gatewayScreener.data_freshness!,
        as_of: 'the screener response\'s `meta.asOf` (`gateway.screener_rows.as_of`)',
        fetched_at: 'when tesync first received the screener row\'s current values (`gateway.screener_rows.fetched_at`)',
      },
    },
    app_pfcf_daily: {
      summary: 'P/FCF, holder FCF and effective market cap per token, stream and UTC day, from the app\'s history',
      description: '`app.metric_history` wide: one column per metric.',
      key: ['token_slug', 'stream', 'day'],
      hasAsOf: asOfForm('app_pfcf_daily'),
      asOf: 'The history as known at `at`, without later revisions.',
      columns: {
        token_slug: 'the token (`app.tokens.slug`)',
        stream: 'the stream (`aggregate` or a stream key; a token with one stream has only that one)',
        day: 'the UTC day of the history point',
        effective_market_cap: 'effective market cap, USD (history metric `effectiveMarketCap`)',
        holder_fcf_annualized: 'annualized holder FCF, USD (history metric `holderFcf`)',
        ...perWindow((w) => [`pfcf_${w}`, `P/FCF over the trailing ${w} window (history metric \`erm${w}\`)`]),
        as_of: 'the newest `as_of` of the day\'s values (the responses\' `meta.asOf`)',
        fetched_at: 'the newest `fetched_at` of the day\'s values',
      },
    },
    gateway_pfcf_daily: {
      summary: 'P/FCF, holder FCF and effective market cap per token, trend period and UTC day, from the gateway\'s trend data',
      description:
        '`gateway.trend_points` wide: one column per series. Each period is its own response; tesync does not assume two periods agree on a day.',
      key: ['token_slug', 'period', 'day'],
      hasAsOf: asOfForm('gateway_pfcf_daily'),
      asOf: 'The trend data as known at `at`, without later revisions.',
      columns: {
        token_slug: 'the token (`gateway.tokens.slug`)',
        period: 'the trend period (`gateway.trend_points.period`)',
        day: 'the UTC day of the point',
        effective_market_cap: 'effective market cap, USD (series `effMcap`)',
        holder_fcf_annualized: 'annualized holder FCF, USD (series `revAnnualized`)',
        pfcf_annualized: 'P/FCF, the gateway\'s headline multiple (series `multAnnualized`)',
        as_of: 'the newest `as_of` of the day\'s points (the responses\' `meta.asOf`)',
        fetched_at: 'the newest `fetched_at` of the day\'s points',
      },
    },
    metric_crosswalk: {
      summary: 'every name of each metric concept across the two APIs',
      description:
        'One row per concept: the app\'s catalog slug, history key and screener path, where tesync keeps the app\'s and the gateway\'s values, the gateway\'s field, the column name in these views, unit and kind. Every slug of the app\'s metric catalog (`app.metrics`) appears; those tesync does not map yet as `app catalog: <slug>`.',
      key: ['concept'],
      hasAsOf: asOfForm('metric_crosswalk'),
      asOf: 'The catalog as known at `at`.',
      columns: {
        concept: 'what the metric is, e.g. `P/FCF, 30d window`; `app catalog: <slug>` for a catalog slug tesync does not map yet',
        app_catalog_slug: 'its slug in the app\'s metric catalog (`app.metrics.slug`)',
        app_history_key: 'its key in the app\'s history (`app.metric_history.metric`)',
        app_screener_path: 'where it sits in the app\'s screener row (`app.metric_values.path`)',
        app_column: 'where tesync keeps the app\'s value: `table.column`, or the table and the row that holds it',
        gateway_field: 'its field in the gateway\'s screener',
        gateway_column: 'where tesync keeps the gateway\'s value: `table.column`, or the table and the row that holds it',
        analytics_column: 'its column name in the analytics views',
        unit: 'the catalog\'s unit where it has the slug, else the crosswalk\'s: `USD`, `x`, `text`',
        kind: 'the catalog\'s kind where it has the slug, else the crosswalk\'s: `gauge`, `rate`, `ratio`, `signal`, `label`',
        app_catalog_unit: 'the unit the app\'s catalog gives (`app.metrics.unit`)',
        app_catalog_kind: 'the kind the app\'s catalog gives (`app.metrics.kind`)',
        in_app_catalog: 'whether the app\'s metric catalog lists the slug',
      },
    },
    data_age: {
      summary: 'how old the data of each table is',
      description:
        'One row per app or gateway table and resource group that fills it (`sync.resource_state.kind`), and one per group that fills none (`table_name` null: the gateway\'s OpenAPI document, group `contract`); a group\'s figures repeat on each of its tables. Data time (what the data is about) and known time (when tesync confirmed it) side by side; `tesync status` shows the groups. No as-of form: it reads `sync.resource_state`, which keeps no versions.',
      key: ['table_name', 'source', 'group'],
      columns: {
        table_name: 'an `app` or `gateway` table; null for a group that fills none',
        source: '`app` or `gateway`',
        group: 'the resource group that fills it (`sync.resource_state.kind`)',
        resources: 'resources of the group tesync tracks',
        not_ok: 'those whose status is not `ok`, `unchanged`, `not_materialized` or `skipped`',
        data_as_of: 'the newest `asOf` upstream gave (data time)',
        newest_point_at: 'the newest history point (data time), for history groups',
        last_changed_at: 'the last fetch written (`last_success_at`)',
        last_confirmed_at: 'when tesync last confirmed the newest resource current (`verified_at`, known time)',
        stalest_confirmed_at: 'when tesync confirmed the least recently confirmed resource (`verified_at`, known time); resources never confirmed are counted in `unconfirmed`',
        freshness: 'upstream\'s freshness verdicts and how many carry each, e.g. `fresh 5, stale 1`: each resource\'s verdict, and for a screener each row\'s; null where upstream gives none (the gateway\'s pages, trends and charts)',
        unconfirmed: 'resources tesync has never confirmed (never fetched successfully nor found unchanged)',
      },
    },
    coverage_resources: {
      summary: 'each resource the lists promise, held or not',
      description:
        'One row per resource a list promises: for each source walked, its catalog, token list, screener (and the gateway\'s OpenAPI document); for each listed token (`delisted_at` null), the routes its coverage flags say exist (app: `coverage_snapshot`, `coverage_metric_history`, `coverage_charts`; a research bundle for every token), every gateway route times the history periods the gateway\'s token list last planned (`TE_GATEWAY_HISTORY_PERIODS`); for each chart a listed token\'s catalog lists, its data (gateway: per timeframe mirrored, `gateway.charts.mirrored_timeframes`). Beside each, its `sync.resource_state`: a resource with no state was never fetched. No as-of form: it reads `sync.resource_state`, which keeps no versions.',
      key: ['source', 'resource'],
      columns: {
        source: '`app` or `gateway`',
        group: 'the resource group (`sync.resource_state.kind`)',
        resource: 'the resource, as `sync.resource_state.resource` names it: `token/<slug>/snapshot`, `token/<slug>/chart/<key>/<timeframe>`',
        token_slug: 'the token it belongs to; null for a resource of no token',
        status: 'its status in `sync.resource_state`; null: never fetched',
        last_success_at: 'its last fetch written; null: nothing of it was ever written',
        verified_at: 'when tesync last confirmed it (known time)',
        offered: 'false when upstream or the configuration excuses it: upstream says it does not exist (`not_found`), declines it to the key (`unauthorized`, `no_credits`, `missing_scope`), or tesync skips it (`skipped`); such a resource is not expected',
        held: 'whether the warehouse holds it: offered, and written at least once (`last_success_at`); what it holds may be old (`analytics.data_age`, `tesync status --max-age` judge that)',
        why: 'why it is not held, in words: `never fetched`, `failed (ProblemError 422 unprocessable_history), nothing held`, or why it is not offered; null when held',
        list_changed_at: 'when the lists that promise it last changed (known time): the newest `fetched_at` of its token list, and of its chart catalogs for a chart',
      },
    },
    coverage: {
      summary: 'per group, what the lists promise against what the warehouse holds',
      description:
        'One row per source and resource group with anything promised (`analytics.coverage_resources`): `covered` of `expected`, and the missing ones by name in `coverage_resources` (`where offered and not held`). A walk stopped half-way leaves the resources it did not reach missing: freshness (`data_age`) judges only the resources that exist. `tesync status --min-coverage`, the status page and `/metrics` (`tesync_coverage_*`) read it. No as-of form.',
      key: ['source', 'group'],
      columns: {
        source: '`app` or `gateway`',
        group: 'the resource group (`sync.resource_state.kind`)',
        expected: 'resources promised and offered',
        covered: 'of those, the ones the warehouse holds',
        missing: '`expected` less `covered`: never fetched, or never written',
        not_offered: 'resources promised that upstream or the configuration excuses (see `coverage_resources.offered`); not expected',
        coverage_pct: '`covered` per 100 `expected`, to one decimal; 100 when nothing is expected',
        list_changed_at: 'when the group\'s lists last changed (known time); null for a group no list promises (catalogs, token lists, screeners)',
        walked_since: 'whether a run that walked the group (its source, every token, and the group or every group) has ended since its lists last changed, whatever its status: below 100 is then something missing, not a walk under way. `tesync status` fails a group below 100 by default only then',
      },
    },
  },
};
