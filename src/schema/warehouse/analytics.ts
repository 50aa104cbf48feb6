// The `analytics` schema: views that answer the questions analysts ask of the mirror, in one
// vocabulary (P/FCF is `pfcf_<window>`, holder FCF `holder_fcf_<window>` whichever API it came
// from). A view's body names the tables it reads as `{schema.table}`: the view reads the tables,
// and where every table it reads is versioned its as-of form `analytics.<view>_as_of(at)` reads
// `T_as_of(at)` instead, so both come from one definition (src/store/schema/analytics-sql.ts).
import { getTableConfig } from 'drizzle-orm/pg-core';
import { declaredTables, type DeclaredTable } from './declare-table.ts';
import { COVERAGE_VIEWS } from './coverage.ts';
import { VERSIONED } from './history.ts';
import * as app from './app.ts';
import * as gateway from './gateway.ts';

export const ANALYTICS_SCHEMA = 'analytics';

export interface AnalyticsView {
  name: string;
  /** A SELECT; `{schema.table}` where it reads a table of the mirror. */
  body: string;
}

/** The trailing windows of P/FCF and holder FCF (methodology: 7d ... 365d). */
export const WINDOWS = ['7d', '30d', '90d', '180d', '365d'] as const;
const perWindow = (f: (w: (typeof WINDOWS)[number]) => string) => WINDOWS.map(f).join(',\n  ');

/**
 * One row per metric concept across the two APIs (contract and methodology glossary). The
 * crosswalk view adds every slug of the app's metric catalog this list does not name, so the
 * catalog is covered whatever upstream adds.
 */
export interface CrosswalkEntry {
  concept: string;
  appCatalogSlug: string | null;
  appHistoryKey: string | null;
  appScreenerPath: string | null;
  /** Where tesync keeps the app's value: table.column (or table and the row that holds it). */
  appColumn: string | null;
  gatewayField: string | null;
  gatewayColumn: string | null;
  unit: 'USD' | 'x' | 'text' | null;
  kind: 'gauge' | 'rate' | 'ratio' | 'signal' | 'label';
  analyticsColumn: string | null;
}

export const CROSSWALK: readonly CrosswalkEntry[] = [
  { concept: 'effective market cap', appCatalogSlug: 'effectiveMarketCap', appHistoryKey: 'effectiveMarketCap', appScreenerPath: 'effectiveMarketCap', appColumn: 'app.screener_rows.effective_market_cap', gatewayField: 'effMcap', gatewayColumn: 'gateway.screener_rows.eff_mcap', unit: 'USD', kind: 'gauge', analyticsColumn: 'effective_market_cap' },
  { concept: 'effective ratio', appCatalogSlug: 'effectiveRatio', appHistoryKey: null, appScreenerPath: 'effectiveRatio', appColumn: 'app.screener_rows.effective_ratio', gatewayField: 'effRatio', gatewayColumn: 'gateway.screener_rows.eff_ratio', unit: 'x', kind: 'ratio', analyticsColumn: 'effective_ratio' },
  { concept: 'holder FCF, annualized', appCatalogSlug: 'annualizedRevenue', appHistoryKey: 'holderFcf', appScreenerPath: 'annualizedRevenue', appColumn: 'app.screener_rows.annualized_revenue', gatewayField: 'revAnnualized', gatewayColumn: 'gateway.screener_rows.rev_annualized', unit: 'USD', kind: 'rate', analyticsColumn: 'holder_fcf_annualized' },
  { concept: 'P/FCF, annualized', appCatalogSlug: null, appHistoryKey: null, appScreenerPath: null, appColumn: null, gatewayField: 'multAnnualized', gatewayColumn: 'gateway.screener_rows.mult_annualized', unit: 'x', kind: 'ratio', analyticsColumn: 'pfcf_annualized' },
  ...WINDOWS.map((w): CrosswalkEntry => ({
    concept: `P/FCF, ${w} window`,
    appCatalogSlug: `multiple.${w}`,
    appHistoryKey: `erm${w}`,
    appScreenerPath: `multiples.${w}`,
    appColumn: `app.screener_rows.multiple_${w}`,
    gatewayField: `windows.${w}.mult`,
    gatewayColumn: `gateway.screener_windows.mult (window = '${w}')`,
    unit: 'x',
    kind: 'ratio',
    analyticsColumn: `pfcf_${w}`,
  })),
  ...WINDOWS.map((w): CrosswalkEntry => ({
    concept: `holder FCF, ${w} window, annualized`,
    appCatalogSlug: `revenue.${w}`,
    appHistoryKey: null,
    appScreenerPath: `revenues.${w}`,
    appColumn: `app.metric_values.value (surface = 'screener', path = 'revenues.${w}')`,
    gatewayField: `windows.${w}.rev`,
    gatewayColumn: `gateway.screener_windows.rev (window = '${w}')`,
    unit: 'USD',
    kind: 'rate',
    analyticsColumn: `holder_fcf_${w}`,
  })),
  { concept: 'price', appCatalogSlug: null, appHistoryKey: null, appScreenerPath: null, appColumn: null, gatewayField: 'priceUsd', gatewayColumn: 'gateway.screener_rows.price_usd', unit: 'USD', kind: 'gauge', analyticsColumn: 'price_usd' },
  { concept: 'market cap (reported)', appCatalogSlug: null, appHistoryKey: null, appScreenerPath: null, appColumn: null, gatewayField: 'mcap', gatewayColumn: 'gateway.screener_rows.mcap', unit: 'USD', kind: 'gauge', analyticsColumn: 'market_cap' },
  { concept: 'FCF momentum', appCatalogSlug: null, appHistoryKey: null, appScreenerPath: null, appColumn: null, gatewayField: 'fcfMomentum', gatewayColumn: 'gateway.screener_rows.fcf_momentum', unit: null, kind: 'signal', analyticsColumn: 'fcf_momentum' },
  { concept: 'data freshness', appCatalogSlug: null, appHistoryKey: null, appScreenerPath: 'freshness', appColumn: 'app.screener_rows.freshness', gatewayField: 'dataFreshness', gatewayColumn: 'gateway.screener_rows.data_freshness', unit: 'text', kind: 'label', analyticsColumn: null },
  { concept: 'stream holder FCF, annualized', appCatalogSlug: 'stream.annualizedRevenue', appHistoryKey: null, appScreenerPath: 'streams[].annualizedRevenue', appColumn: 'app.token_streams.annualized_revenue', gatewayField: 'streams[]', gatewayColumn: 'gateway.screener_streams', unit: 'USD', kind: 'rate', analyticsColumn: null },
];

const text = (v: string | null) => (v === null ? 'null::text' : `'${v.replaceAll("'", "''")}'`);

/** The crosswalk's static rows as a VALUES list. */
const crosswalkValues = CROSSWALK.map(
  (e) => `(${[e.concept, e.appCatalogSlug, e.appHistoryKey, e.appScreenerPath, e.appColumn, e.gatewayField, e.gatewayColumn, e.unit, e.kind, e.analyticsColumn].map(text).join(', ')})`,
).join(',\n    ');

/**
 * `data_age`, from the tables' declarations (`declaredTables`): the resource group (the
 * `sync.resource_state.kind`) that fills each table. Pure.
 */
export function dataAgeView(tables: readonly DeclaredTable[]): AnalyticsView {
  const tableGroups = tables
    .flatMap(({ name, source, groups }) => groups.map((g) => `(${text(name)}, ${text(source)}, ${text(g)})`))
    .join(',\n    ');
  return {
    name: 'data_age',
    // Per resource group (the `g` part), then repeated for every table the group fills; a group
    // that fills no app or gateway table (the gateway's OpenAPI document, `contract`) has a
    // row of its own with table_name null. `tesync status` reads the groups from here.
    // Upstream's verdict of a resource is read from its change marker, which holds upstream's
    // freshness as JSON with sorted keys (`{"asOf":...,"status":"stale"}`, a chart's
    // `{"freshness":"stale","rowCount":...}`) or as a bare word; dates and versions are no
    // verdict. A list (a screener) has none of its own: its rows' verdicts, counted, are in
    // `details.freshness` (src/engine/kit/rows.ts verdictCounts).
    body: `with r as (
  select source, coalesce(kind, 'other') as "group", status, as_of, details, last_success_at, verified_at,
    coalesce(substring(freshness from '"(?:status|freshness)":"([A-Za-z_-]+)"'), substring(freshness from '^([A-Za-z_-]+)$')) as verdict
  from sync.resource_state
  where active
), g as (
  select source, "group",
    count(*)::int as resources,
    count(*) filter (where status not in ('ok', 'unchanged', 'not_materialized', 'skipped'))::int as not_ok,
    max(as_of) as data_as_of,
    max(case when details->>'lastTs' ~ '^\\d{4}-' then (details->>'lastTs')::timestamptz end) as newest_point_at,
    max(last_success_at) as last_changed_at,
    max(verified_at) as last_confirmed_at,
    min(verified_at) as stalest_confirmed_at,
    count(*) filter (where verified_at is null)::int as unconfirmed
  from r
  group by source, "group"
), v as (
  select source, "group", verdict, 1 as n from r where verdict is not null
  union all
  select r.source, r."group", e.key, e.value::int
  from r cross join lateral jsonb_each_text(case when jsonb_typeof(r.details->'freshness') = 'object' then r.details->'freshness' end) e
  where e.value ~ '^\\d{1,9}$'
), f as (
  select source, "group", string_agg(verdict || ' ' || n, ', ' order by verdict) as freshness
  from (select source, "group", verdict, sum(n)::int as n from v group by 1, 2, 3) c
  group by source, "group"
), t (table_name, source, "group") as (
  values
    ${tableGroups}
)
select t.table_name, coalesce(t.source, g.source) as source, coalesce(t."group", g."group") as "group",
  coalesce(g.resources, 0) as resources,
  coalesce(g.not_ok, 0) as not_ok,
  g.data_as_of,
  g.newest_point_at,
  g.last_changed_at,
  g.last_confirmed_at,
  g.stalest_confirmed_at,
  f.freshness,
  coalesce(g.unconfirmed, 0) as unconfirmed
from t
full join g on g.source = t.source and g."group" = t."group"
left join f on f.source = g.source and f."group" = g."group"`,
  };
}

export const ANALYTICS_VIEWS: readonly AnalyticsView[] = [
  {
    name: 'app_universe',
    body: `select t.slug as token_slug, t.display_name, t.symbol,
  t.coverage_screener, t.coverage_snapshot, t.coverage_metric_history, t.coverage_trend, t.coverage_charts,
  s.effective_market_cap, s.effective_ratio, s.annualized_revenue as holder_fcf_annualized,
  ${perWindow((w) => `s.multiple_${w} as pfcf_${w}`)},
  s.freshness, s.as_of, s.fetched_at
from {app.tokens} t
left join {app.screener_rows} s on s.token_slug = t.slug
where t.delisted_at is null`,
  },
  {
    name: 'gateway_universe',
    body: `select t.slug as token_slug, t.name, t.symbol,
  s.price_usd, s.mcap as market_cap, s.eff_mcap as effective_market_cap, s.eff_ratio as effective_ratio,
  s.rev_annualized as holder_fcf_annualized, s.mult_annualized as pfcf_annualized,
  ${perWindow((w) => `w.pfcf_${w}`)},
  ${perWindow((w) => `w.holder_fcf_${w}`)},
  s.fcf_momentum, s.data_freshness, s.as_of, s.fetched_at
from {gateway.tokens} t
left join {gateway.screener_rows} s on s.token_slug = t.slug
left join (
  select token_slug,
  ${perWindow((w) => `max(mult) filter (where "window" = '${w}') as pfcf_${w}`)},
  ${perWindow((w) => `max(rev) filter (where "window" = '${w}') as holder_fcf_${w}`)}
  from {gateway.screener_windows}
  group by token_slug
) w on w.token_slug = t.slug
where t.delisted_at is null`,
  },
  {
    name: 'app_pfcf_daily',
    body: `select token_slug, stream, (ts at time zone 'UTC')::date as day,
  max(value) filter (where metric = 'effectiveMarketCap') as effective_market_cap,
  max(value) filter (where metric = 'holderFcf') as holder_fcf_annualized,
  ${perWindow((w) => `max(value) filter (where metric = 'erm${w}') as pfcf_${w}`)},
  max(as_of) as as_of, max(fetched_at) as fetched_at
from {app.metric_history}
where metric in ('effectiveMarketCap', 'holderFcf', ${WINDOWS.map((w) => `'erm${w}'`).join(', ')})
group by token_slug, stream, ts`,
  },
  {
    name: 'gateway_pfcf_daily',
    body: `select token_slug, period, (ts at time zone 'UTC')::date as day,
  max(value) filter (where series_key = 'effMcap') as effective_market_cap,
  max(value) filter (where series_key = 'revAnnualized') as holder_fcf_annualized,
  max(value) filter (where series_key = 'multAnnualized') as pfcf_annualized,
  max(as_of) as as_of, max(fetched_at) as fetched_at
from {gateway.trend_points}
where series_key in ('effMcap', 'revAnnualized', 'multAnnualized')
group by token_slug, period, ts`,
  },
  {
    name: 'metric_crosswalk',
    body: `select coalesce(x.concept, 'app catalog: ' || m.slug) as concept,
  coalesce(x.app_catalog_slug, m.slug) as app_catalog_slug, x.app_history_key, x.app_screener_path, x.app_column,
  x.gateway_field, x.gateway_column, x.analytics_column,
  coalesce(m.unit, x.unit) as unit, coalesce(m.kind, x.kind) as kind,
  m.unit as app_catalog_unit, m.kind as app_catalog_kind, m.slug is not null as in_app_catalog
from (values
    ${crosswalkValues}
  ) as x(concept, app_catalog_slug, app_history_key, app_screener_path, app_column, gateway_field, gateway_column, unit, kind, analytics_column)
full join {app.metrics} m on m.slug = x.app_catalog_slug`,
  },
  dataAgeView(declaredTables(app, gateway)),
  ...COVERAGE_VIEWS,
];

/** How a view's body names a table it reads: `{app.tokens}`. */
export const TABLE_PLACEHOLDER = /\{(app|gateway)\.(\w+)\}/g;

const versioned = new Set(VERSIONED.map((t) => `${getTableConfig(t).schema}.${getTableConfig(t).name}`));

/** The tables a view's body reads. Pure. */
export function tablesOf(view: AnalyticsView): string[] {
  return [...new Set([...view.body.matchAll(TABLE_PLACEHOLDER)].map((m) => `${m[1]}.${m[2]}`))];
}

/** Whether the view has an as-of form: every table it reads is versioned. */
export function hasAsOf(view: AnalyticsView): boolean {
  const tables = tablesOf(view);
  return tables.length > 0 && tables.every((t) => versioned.has(t));
}
