-- The analytics views and their as-of forms: generated from src/schema/warehouse/analytics.ts
-- by `npm run db:analytics`; edit the declarations, not this file.

CREATE SCHEMA IF NOT EXISTS "analytics";

CREATE OR REPLACE VIEW "analytics"."app_universe" AS
select t.slug as token_slug, t.display_name, t.symbol,
  t.coverage_screener, t.coverage_snapshot, t.coverage_metric_history, t.coverage_trend, t.coverage_charts,
  s.effective_market_cap, s.effective_ratio, s.annualized_revenue as holder_fcf_annualized,
  s.multiple_7d as pfcf_7d,
  s.multiple_30d as pfcf_30d,
  s.multiple_90d as pfcf_90d,
  s.multiple_180d as pfcf_180d,
  s.multiple_365d as pfcf_365d,
  s.freshness, s.as_of, s.fetched_at
from "app"."tokens" t
left join "app"."screener_rows" s on s.token_slug = t.slug
where t.delisted_at is null;

CREATE OR REPLACE FUNCTION "analytics"."app_universe_as_of"("at" timestamptz) RETURNS SETOF "analytics"."app_universe" LANGUAGE sql STABLE PARALLEL SAFE AS $body$
select t.slug as token_slug, t.display_name, t.symbol,
  t.coverage_screener, t.coverage_snapshot, t.coverage_metric_history, t.coverage_trend, t.coverage_charts,
  s.effective_market_cap, s.effective_ratio, s.annualized_revenue as holder_fcf_annualized,
  s.multiple_7d as pfcf_7d,
  s.multiple_30d as pfcf_30d,
  s.multiple_90d as pfcf_90d,
  s.multiple_180d as pfcf_180d,
  s.multiple_365d as pfcf_365d,
  s.freshness, s.as_of, s.fetched_at
from "app"."tokens_as_of"("at") t
left join "app"."screener_rows_as_of"("at") s on s.token_slug = t.slug
where t.delisted_at is null
$body$;

CREATE OR REPLACE VIEW "analytics"."gateway_universe" AS
select t.slug as token_slug, t.name, t.symbol,
  s.price_usd, s.mcap as market_cap, s.eff_mcap as effective_market_cap, s.eff_ratio as effective_ratio,
  s.rev_annualized as holder_fcf_annualized, s.mult_annualized as pfcf_annualized,
  w.pfcf_7d,
  w.pfcf_30d,
  w.pfcf_90d,
  w.pfcf_180d,
  w.pfcf_365d,
  w.holder_fcf_7d,
  w.holder_fcf_30d,
  w.holder_fcf_90d,
  w.holder_fcf_180d,
  w.holder_fcf_365d,
  s.fcf_momentum, s.data_freshness, s.as_of, s.fetched_at
from "gateway"."tokens" t
left join "gateway"."screener_rows" s on s.token_slug = t.slug
left join (
  select token_slug,
  max(mult) filter (where "window" = '7d') as pfcf_7d,
  max(mult) filter (where "window" = '30d') as pfcf_30d,
  max(mult) filter (where "window" = '90d') as pfcf_90d,
  max(mult) filter (where "window" = '180d') as pfcf_180d,
  max(mult) filter (where "window" = '365d') as pfcf_365d,
  max(rev) filter (where "window" = '7d') as holder_fcf_7d,
  max(rev) filter (where "window" = '30d') as holder_fcf_30d,
  max(rev) filter (where "window" = '90d') as holder_fcf_90d,
  max(rev) filter (where "window" = '180d') as holder_fcf_180d,
  max(rev) filter (where "window" = '365d') as holder_fcf_365d
  from "gateway"."screener_windows"
  group by token_slug
) w on w.token_slug = t.slug
where t.delisted_at is null;

CREATE OR REPLACE FUNCTION "analytics"."gateway_universe_as_of"("at" timestamptz) RETURNS SETOF "analytics"."gateway_universe" LANGUAGE sql STABLE PARALLEL SAFE AS $body$
select t.slug as token_slug, t.name, t.symbol,
  s.price_usd, s.mcap as market_cap, s.eff_mcap as effective_market_cap, s.eff_ratio as effective_ratio,
  s.rev_annualized as holder_fcf_annualized, s.mult_annualized as pfcf_annualized,
  w.pfcf_7d,
  w.pfcf_30d,
  w.pfcf_90d,
  w.pfcf_180d,
  w.pfcf_365d,
  w.holder_fcf_7d,
  w.holder_fcf_30d,
  w.holder_fcf_90d,
  w.holder_fcf_180d,
  w.holder_fcf_365d,
  s.fcf_momentum, s.data_freshness, s.as_of, s.fetched_at
from "gateway"."tokens_as_of"("at") t
left join "gateway"."screener_rows_as_of"("at") s on s.token_slug = t.slug
left join (
  select token_slug,
  max(mult) filter (where "window" = '7d') as pfcf_7d,
  max(mult) filter (where "window" = '30d') as pfcf_30d,
  max(mult) filter (where "window" = '90d') as pfcf_90d,
  max(mult) filter (where "window" = '180d') as pfcf_180d,
  max(mult) filter (where "window" = '365d') as pfcf_365d,
  max(rev) filter (where "window" = '7d') as holder_fcf_7d,
  max(rev) filter (where "window" = '30d') as holder_fcf_30d,
  max(rev) filter (where "window" = '90d') as holder_fcf_90d,
  max(rev) filter (where "window" = '180d') as holder_fcf_180d,
  max(rev) filter (where "window" = '365d') as holder_fcf_365d
  from "gateway"."screener_windows_as_of"("at")
  group by token_slug
) w on w.token_slug = t.slug
where t.delisted_at is null
$body$;

CREATE OR REPLACE VIEW "analytics"."app_pfcf_daily" AS
select token_slug, stream, (ts at time zone 'UTC')::date as day,
  max(value) filter (where metric = 'effectiveMarketCap') as effective_market_cap,
  max(value) filter (where metric = 'holderFcf') as holder_fcf_annualized,
  max(value) filter (where metric = 'erm7d') as pfcf_7d,
  max(value) filter (where metric = 'erm30d') as pfcf_30d,
  max(value) filter (where metric = 'erm90d') as pfcf_90d,
  max(value) filter (where metric = 'erm180d') as pfcf_180d,
  max(value) filter (where metric = 'erm365d') as pfcf_365d,
  max(as_of) as as_of, max(fetched_at) as fetched_at
from "app"."metric_history"
where metric in ('effectiveMarketCap', 'holderFcf', 'erm7d', 'erm30d', 'erm90d', 'erm180d', 'erm365d')
group by token_slug, stream, ts;

CREATE OR REPLACE FUNCTION "analytics"."app_pfcf_daily_as_of"("at" timestamptz) RETURNS SETOF "analytics"."app_pfcf_daily" LANGUAGE sql STABLE PARALLEL SAFE AS $body$
select token_slug, stream, (ts at time zone 'UTC')::date as day,
  max(value) filter (where metric = 'effectiveMarketCap') as effective_market_cap,
  max(value) filter (where metric = 'holderFcf') as holder_fcf_annualized,
  max(value) filter (where metric = 'erm7d') as pfcf_7d,
  max(value) filter (where metric = 'erm30d') as pfcf_30d,
  max(value) filter (where metric = 'erm90d') as pfcf_90d,
  max(value) filter (where metric = 'erm180d') as pfcf_180d,
  max(value) filter (where metric = 'erm365d') as pfcf_365d,
  max(as_of) as as_of, max(fetched_at) as fetched_at
from "app"."metric_history_as_of"("at")
where metric in ('effectiveMarketCap', 'holderFcf', 'erm7d', 'erm30d', 'erm90d', 'erm180d', 'erm365d')
group by token_slug, stream, ts
$body$;

CREATE OR REPLACE VIEW "analytics"."gateway_pfcf_daily" AS
select token_slug, period, (ts at time zone 'UTC')::date as day,
  max(value) filter (where series_key = 'effMcap') as effective_market_cap,
  max(value) filter (where series_key = 'revAnnualized') as holder_fcf_annualized,
  max(value) filter (where series_key = 'multAnnualized') as pfcf_annualized,
  max(as_of) as as_of, max(fetched_at) as fetched_at
from "gateway"."trend_points"
where series_key in ('effMcap', 'revAnnualized', 'multAnnualized')
group by token_slug, period, ts;

CREATE OR REPLACE FUNCTION "analytics"."gateway_pfcf_daily_as_of"("at" timestamptz) RETURNS SETOF "analytics"."gateway_pfcf_daily" LANGUAGE sql STABLE PARALLEL SAFE AS $body$
select token_slug, period, (ts at time zone 'UTC')::date as day,
  max(value) filter (where series_key = 'effMcap') as effective_market_cap,
  max(value) filter (where series_key = 'revAnnualized') as holder_fcf_annualized,
  max(value) filter (where series_key = 'multAnnualized') as pfcf_annualized,
  max(as_of) as as_of, max(fetched_at) as fetched_at
from "gateway"."trend_points_as_of"("at")
where series_key in ('effMcap', 'revAnnualized', 'multAnnualized')
group by token_slug, period, ts
$body$;

CREATE OR REPLACE VIEW "analytics"."metric_crosswalk" AS
select coalesce(x.concept, 'app catalog: ' || m.slug) as concept,
  coalesce(x.app_catalog_slug, m.slug) as app_catalog_slug, x.app_history_key, x.app_screener_path, x.app_column,
  x.gateway_field, x.gateway_column, x.analytics_column,
  coalesce(m.unit, x.unit) as unit, coalesce(m.kind, x.kind) as kind,
  m.unit as app_catalog_unit, m.kind as app_catalog_kind, m.slug is not null as in_app_catalog
from (values
    ('effective market cap', 'effectiveMarketCap', 'effectiveMarketCap', 'effectiveMarketCap', 'app.screener_rows.effective_market_cap', 'effMcap', 'gateway.screener_rows.eff_mcap', 'USD', 'gauge', 'effective_market_cap'),
    ('effective ratio', 'effectiveRatio', null::text, 'effectiveRatio', 'app.screener_rows.effective_ratio', 'effRatio', 'gateway.screener_rows.eff_ratio', 'x', 'ratio', 'effective_ratio'),
    ('holder FCF, annualized', 'annualizedRevenue', 'holderFcf', 'annualizedRevenue', 'app.screener_rows.annualized_revenue', 'revAnnualized', 'gateway.screener_rows.rev_annualized', 'USD', 'rate', 'holder_fcf_annualized'),
    ('P/FCF, annualized', null::text, null::text, null::text, null::text, 'multAnnualized', 'gateway.screener_rows.mult_annualized', 'x', 'ratio', 'pfcf_annualized'),
    ('P/FCF, 7d window', 'multiple.7d', 'erm7d', 'multiples.7d', 'app.screener_rows.multiple_7d', 'windows.7d.mult', 'gateway.screener_windows.mult (window = ''7d'')', 'x', 'ratio', 'pfcf_7d'),
    ('P/FCF, 30d window', 'multiple.30d', 'erm30d', 'multiples.30d', 'app.screener_rows.multiple_30d', 'windows.30d.mult', 'gateway.screener_windows.mult (window = ''30d'')', 'x', 'ratio', 'pfcf_30d'),
    ('P/FCF, 90d window', 'multiple.90d', 'erm90d', 'multiples.90d', 'app.screener_rows.multiple_90d', 'windows.90d.mult', 'gateway.screener_windows.mult (window = ''90d'')', 'x', 'ratio', 'pfcf_90d'),
    ('P/FCF, 180d window', 'multiple.180d', 'erm180d', 'multiples.180d', 'app.screener_rows.multiple_180d', 'windows.180d.mult', 'gateway.screener_windows.mult (window = ''180d'')', 'x', 'ratio', 'pfcf_180d'),
    ('P/FCF, 365d window', 'multiple.365d', 'erm365d', 'multiples.365d', 'app.screener_rows.multiple_365d', 'windows.365d.mult', 'gateway.screener_windows.mult (window = ''365d'')', 'x', 'ratio', 'pfcf_365d'),
    ('holder FCF, 7d window, annualized', 'revenue.7d', null::text, 'revenues.7d', 'app.metric_values.value (surface = ''screener'', path = ''revenues.7d'')', 'windows.7d.rev', 'gateway.screener_windows.rev (window = ''7d'')', 'USD', 'rate', 'holder_fcf_7d'),
    ('holder FCF, 30d window, annualized', 'revenue.30d', null::text, 'revenues.30d', 'app.metric_values.value (surface = ''screener'', path = ''revenues.30d'')', 'windows.30d.rev', 'gateway.screener_windows.rev (window = ''30d'')', 'USD', 'rate', 'holder_fcf_30d'),
    ('holder FCF, 90d window, annualized', 'revenue.90d', null::text, 'revenues.90d', 'app.metric_values.value (surface = ''screener'', path = ''revenues.90d'')', 'windows.90d.rev', 'gateway.screener_windows.rev (window = ''90d'')', 'USD', 'rate', 'holder_fcf_90d'),
    ('holder FCF, 180d window, annualized', 'revenue.180d', null::text, 'revenues.180d', 'app.metric_values.value (surface = ''screener'', path = ''revenues.180d'')', 'windows.180d.rev', 'gateway.screener_windows.rev (window = ''180d'')', 'USD', 'rate', 'holder_fcf_180d'),
    ('holder FCF, 365d window, annualized', 'revenue.365d', null::text, 'revenues.365d', 'app.metric_values.value (surface = ''screener'', path = ''revenues.365d'')', 'windows.365d.rev', 'gateway.screener_windows.rev (window = ''365d'')', 'USD', 'rate', 'holder_fcf_365d'),
    ('price', null::text, null::text, null::text, null::text, 'priceUsd', 'gateway.screener_rows.price_usd', 'USD', 'gauge', 'price_usd'),
    ('market cap (reported)', null::text, null::text, null::text, null::text, 'mcap', 'gateway.screener_rows.mcap', 'USD', 'gauge', 'market_cap'),
    ('FCF momentum', null::text, null::text, null::text, null::text, 'fcfMomentum', 'gateway.screener_rows.fcf_momentum', null::text, 'signal', 'fcf_momentum'),
    ('data freshness', null::text, null::text, 'freshness', 'app.screener_rows.freshness', 'dataFreshness', 'gateway.screener_rows.data_freshness', 'text', 'label', null::text),
    ('stream holder FCF, annualized', 'stream.annualizedRevenue', null::text, 'streams[].annualizedRevenue', 'app.token_streams.annualized_revenue', 'streams[]', 'gateway.screener_streams', 'USD', 'rate', null::text)
  ) as x(concept, app_catalog_slug, app_history_key, app_screener_path, app_column, gateway_field, gateway_column, unit, kind, analytics_column)
full join "app"."metrics" m on m.slug = x.app_catalog_slug;

CREATE OR REPLACE FUNCTION "analytics"."metric_crosswalk_as_of"("at" timestamptz) RETURNS SETOF "analytics"."metric_crosswalk" LANGUAGE sql STABLE PARALLEL SAFE AS $body$
select coalesce(x.concept, 'app catalog: ' || m.slug) as concept,
  coalesce(x.app_catalog_slug, m.slug) as app_catalog_slug, x.app_history_key, x.app_screener_path, x.app_column,
  x.gateway_field, x.gateway_column, x.analytics_column,
  coalesce(m.unit, x.unit) as unit, coalesce(m.kind, x.kind) as kind,
  m.unit as app_catalog_unit, m.kind as app_catalog_kind, m.slug is not null as in_app_catalog
from (values
    ('effective market cap', 'effectiveMarketCap', 'effectiveMarketCap', 'effectiveMarketCap', 'app.screener_rows.effective_market_cap', 'effMcap', 'gateway.screener_rows.eff_mcap', 'USD', 'gauge', 'effective_market_cap'),
    ('effective ratio', 'effectiveRatio', null::text, 'effectiveRatio', 'app.screener_rows.effective_ratio', 'effRatio', 'gateway.screener_rows.eff_ratio', 'x', 'ratio', 'effective_ratio'),
    ('holder FCF, annualized', 'annualizedRevenue', 'holderFcf', 'annualizedRevenue', 'app.screener_rows.annualized_revenue', 'revAnnualized', 'gateway.screener_rows.rev_annualized', 'USD', 'rate', 'holder_fcf_annualized'),
    ('P/FCF, annualized', null::text, null::text, null::text, null::text, 'multAnnualized', 'gateway.screener_rows.mult_annualized', 'x', 'ratio', 'pfcf_annualized'),
    ('P/FCF, 7d window', 'multiple.7d', 'erm7d', 'multiples.7d', 'app.screener_rows.multiple_7d', 'windows.7d.mult', 'gateway.screener_windows.mult (window = ''7d'')', 'x', 'ratio', 'pfcf_7d'),
    ('P/FCF, 30d window', 'multiple.30d', 'erm30d', 'multiples.30d', 'app.screener_rows.multiple_30d', 'windows.30d.mult', 'gateway.screener_windows.mult (window = ''30d'')', 'x', 'ratio', 'pfcf_30d'),
    ('P/FCF, 90d window', 'multiple.90d', 'erm90d', 'multiples.90d', 'app.screener_rows.multiple_90d', 'windows.90d.mult', 'gateway.screener_windows.mult (window = ''90d'')', 'x', 'ratio', 'pfcf_90d'),
    ('P/FCF, 180d window', 'multiple.180d', 'erm180d', 'multiples.180d', 'app.screener_rows.multiple_180d', 'windows.180d.mult', 'gateway.screener_windows.mult (window = ''180d'')', 'x', 'ratio', 'pfcf_180d'),
    ('P/FCF, 365d window', 'multiple.365d', 'erm365d', 'multiples.365d', 'app.screener_rows.multiple_365d', 'windows.365d.mult', 'gateway.screener_windows.mult (window = ''365d'')', 'x', 'ratio', 'pfcf_365d'),
    ('holder FCF, 7d window, annualized', 'revenue.7d', null::text, 'revenues.7d', 'app.metric_values.value (surface = ''screener'', path = ''revenues.7d'')', 'windows.7d.rev', 'gateway.screener_windows.rev (window = ''7d'')', 'USD', 'rate', 'holder_fcf_7d'),
    ('holder FCF, 30d window, annualized', 'revenue.30d', null::text, 'revenues.30d', 'app.metric_values.value (surface = ''screener'', path = ''revenues.30d'')', 'windows.30d.rev', 'gateway.screener_windows.rev (window = ''30d'')', 'USD', 'rate', 'holder_fcf_30d'),
    ('holder FCF, 90d window, annualized', 'revenue.90d', null::text, 'revenues.90d', 'app.metric_values.value (surface = ''screener'', path = ''revenues.90d'')', 'windows.90d.rev', 'gateway.screener_windows.rev (window = ''90d'')', 'USD', 'rate', 'holder_fcf_90d'),
    ('holder FCF, 180d window, annualized', 'revenue.180d', null::text, 'revenues.180d', 'app.metric_values.value (surface = ''screener'', path = ''revenues.180d'')', 'windows.180d.rev', 'gateway.screener_windows.rev (window = ''180d'')', 'USD', 'rate', 'holder_fcf_180d'),
    ('holder FCF, 365d window, annualized', 'revenue.365d', null::text, 'revenues.365d', 'app.metric_values.value (surface = ''screener'', path = ''revenues.365d'')', 'windows.365d.rev', 'gateway.screener_windows.rev (window = ''365d'')', 'USD', 'rate', 'holder_fcf_365d'),
    ('price', null::text, null::text, null::text, null::text, 'priceUsd', 'gateway.screener_rows.price_usd', 'USD', 'gauge', 'price_usd'),
    ('market cap (reported)', null::text, null::text, null::text, null::text, 'mcap', 'gateway.screener_rows.mcap', 'USD', 'gauge', 'market_cap'),
    ('FCF momentum', null::text, null::text, null::text, null::text, 'fcfMomentum', 'gateway.screener_rows.fcf_momentum', null::text, 'signal', 'fcf_momentum'),
    ('data freshness', null::text, null::text, 'freshness', 'app.screener_rows.freshness', 'dataFreshness', 'gateway.screener_rows.data_freshness', 'text', 'label', null::text),
    ('stream holder FCF, annualized', 'stream.annualizedRevenue', null::text, 'streams[].annualizedRevenue', 'app.token_streams.annualized_revenue', 'streams[]', 'gateway.screener_streams', 'USD', 'rate', null::text)
  ) as x(concept, app_catalog_slug, app_history_key, app_screener_path, app_column, gateway_field, gateway_column, unit, kind, analytics_column)
full join "app"."metrics_as_of"("at") m on m.slug = x.app_catalog_slug
$body$;

CREATE OR REPLACE VIEW "analytics"."data_age" AS
with r as (
  select source, coalesce(kind, 'other') as "group", status, as_of, details, last_success_at, verified_at,
    coalesce(substring(freshness from '"(?:status|freshness)":"([A-Za-z_-]+)"'), substring(freshness from '^([A-Za-z_-]+)$')) as verdict
  from sync.resource_state
  where active
), g as (
  select source, "group",
    count(*)::int as resources,
    count(*) filter (where status not in ('ok', 'unchanged', 'not_materialized', 'skipped'))::int as not_ok,
    max(as_of) as data_as_of,
    max(case when details->>'lastTs' ~ '^\d{4}-' then (details->>'lastTs')::timestamptz end) as newest_point_at,
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
  where e.value ~ '^\d{1,9}$'
), f as (
  select source, "group", string_agg(verdict || ' ' || n, ', ' order by verdict) as freshness
  from (select source, "group", verdict, sum(n)::int as n from v group by 1, 2, 3) c
  group by source, "group"
), t (table_name, source, "group") as (
  values
    ('app.metrics', 'app', 'catalog'),
    ('app.tokens', 'app', 'tokens'),
    ('app.screener_rows', 'app', 'screener'),
    ('app.screener_daily', 'app', 'screener'),
    ('app.token_snapshots', 'app', 'snapshot'),
    ('app.token_snapshots_daily', 'app', 'snapshot'),
    ('app.metric_values', 'app', 'screener'),
    ('app.metric_values', 'app', 'snapshot'),
    ('app.token_streams', 'app', 'snapshot'),
    ('app.metric_history', 'app', 'history'),
    ('app.charts', 'app', 'charts'),
    ('app.chart_points', 'app', 'chart'),
    ('app.research_bundles', 'app', 'bundle'),
    ('app.value_drivers', 'app', 'bundle'),
    ('app.value_driver_edges', 'app', 'bundle'),
    ('app.token_functions', 'app', 'bundle'),
    ('gateway.tokens', 'gateway', 'tokens'),
    ('gateway.screener_rows', 'gateway', 'screener'),
    ('gateway.screener_daily', 'gateway', 'screener'),
    ('gateway.screener_windows', 'gateway', 'screener'),
    ('gateway.screener_streams', 'gateway', 'screener'),
    ('gateway.screener_unmatched', 'gateway', 'screener'),
    ('gateway.screener_insights', 'gateway', 'screener'),
    ('gateway.token_pages', 'gateway', 'page'),
    ('gateway.token_sections', 'gateway', 'page'),
    ('gateway.trend_points', 'gateway', 'history'),
    ('gateway.charts', 'gateway', 'charts'),
    ('gateway.chart_timeframes', 'gateway', 'chart'),
    ('gateway.chart_series', 'gateway', 'chart'),
    ('gateway.chart_points', 'gateway', 'chart')
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
left join f on f.source = g.source and f."group" = g."group";

CREATE OR REPLACE VIEW "analytics"."coverage_resources" AS
with app_listed as (
  select slug, coverage_snapshot, coverage_metric_history, coverage_charts from app.tokens where delisted_at is null
), gateway_listed as (
  select slug from gateway.tokens where delisted_at is null
), walked (source) as (
  select v.source from (values ('app'), ('gateway')) v(source) where exists (select 1 from sync.resource_state s where s.source = v.source)
), planned_periods as (
  select p.period from sync.resource_state s cross join lateral jsonb_array_elements_text(s.details->'historyPeriods') p(period)
  where s.source = 'gateway' and s.resource = 'tokens' and jsonb_typeof(s.details->'historyPeriods') = 'array'
), gateway_periods as (
  select period from planned_periods
  union
  select split_part(resource, '/', 4) from sync.resource_state
  where source = 'gateway' and kind = 'history' and active and not exists (select 1 from planned_periods)
), changed as (
  select (select max(fetched_at) from app.tokens) as app_tokens, (select max(fetched_at) from app.charts) as app_charts,
    (select max(fetched_at) from gateway.tokens) as gateway_tokens, (select max(fetched_at) from gateway.charts) as gateway_charts
), promised (source, "group", resource, token_slug, list_changed_at) as (
  select w.source, g."group", g.resource, null::text, null::timestamptz
  from walked w join (values
    ('app', 'catalog', 'metrics'),
    ('app', 'tokens', 'tokens'),
    ('app', 'screener', 'screener'),
    ('gateway', 'tokens', 'tokens'),
    ('gateway', 'screener', 'screener'),
    ('gateway', 'contract', 'openapi')
  ) g(source, "group", resource) on g.source = w.source
  union all
  select 'app', 'snapshot', r.* from (select 'token/' || t.slug || '/snapshot', t.slug, c.app_tokens from app_listed t, changed c where t.coverage_snapshot) r
  union all
  select 'app', 'history', r.* from (select 'token/' || t.slug || '/history', t.slug, c.app_tokens from app_listed t, changed c where t.coverage_metric_history) r
  union all
  select 'app', 'charts', r.* from (select 'token/' || t.slug || '/charts', t.slug, c.app_tokens from app_listed t, changed c where t.coverage_charts) r
  union all
  select 'app', 'chart', r.* from (select 'token/' || t.slug || '/chart/' || ch.chart_key, t.slug, greatest(c.app_tokens, c.app_charts)
    from app_listed t join app.charts ch on ch.token_slug = t.slug, changed c where t.coverage_charts) r
  union all
  select 'app', 'bundle', r.* from (select 'token/' || t.slug || '/bundle', t.slug, c.app_tokens from app_listed t, changed c) r
  union all
  select 'gateway', 'page', r.* from (select 'token/' || t.slug || '/page', t.slug, c.gateway_tokens from gateway_listed t, changed c) r
  union all
  select 'gateway', 'history', r.* from (select 'token/' || t.slug || '/history/' || p.period, t.slug, c.gateway_tokens from gateway_listed t cross join gateway_periods p, changed c) r
  union all
  select 'gateway', 'charts', r.* from (select 'token/' || t.slug || '/charts', t.slug, c.gateway_tokens from gateway_listed t, changed c) r
  union all
  select 'gateway', 'chart', r.* from (select 'token/' || t.slug || '/chart/' || ch.chart_key || '/' || tf.timeframe, t.slug, greatest(c.gateway_tokens, c.gateway_charts)
    from gateway_listed t join gateway.charts ch on ch.token_slug = t.slug cross join lateral unnest(ch.mirrored_timeframes) tf(timeframe), changed c) r
)
select p.source, p."group", p.resource, p.token_slug, s.status, s.last_success_at, s.verified_at,
  coalesce(s.status not in ('not_found', 'skipped', 'unauthorized', 'no_credits', 'missing_scope'), true) as offered,
  coalesce(s.status not in ('not_found', 'skipped', 'unauthorized', 'no_credits', 'missing_scope') and s.last_success_at is not null, false) as held,
  case
    when s.resource is null then 'never fetched'
    when s.status = 'not_found' then 'upstream says it does not exist (not_found)'
    when s.status = 'skipped' then 'skipped by configuration (skipped)'
    when s.status in ('not_found', 'skipped', 'unauthorized', 'no_credits', 'missing_scope') then 'declined to this key (' || s.status || ')'
    when s.last_success_at is null then s.status || coalesce(' (' || nullif(concat_ws(' ', s.error_type, s.http_status::text, s.error_code), '') || ')', '') || ', nothing held'
  end as why,
  p.list_changed_at
from promised p
left join sync.resource_state s on s.source = p.source and s.resource = p.resource;

CREATE OR REPLACE VIEW "analytics"."coverage" AS
with g as (
  select source, "group",
    count(*) filter (where offered)::int as expected,
    count(*) filter (where held)::int as covered,
    count(*) filter (where offered and not held)::int as missing,
    count(*) filter (where not offered)::int as not_offered,
    max(list_changed_at) as list_changed_at
  from analytics.coverage_resources
  group by source, "group"
)
select g.source, g."group", g.expected, g.covered, g.missing, g.not_offered,
  case when g.expected = 0 then 100.0 else round(100.0 * g.covered / g.expected, 1) end as coverage_pct,
  g.list_changed_at,
  exists (
    select 1 from sync.runs r
    cross join lateral (select coalesce(r.options->'groups', r.options->'only') as groups, r.options->'tokens' as tokens) o
    where r.finished_at is not null and g.source = any(r.sources)
      and (g.list_changed_at is null or r.finished_at > g.list_changed_at)
      and (jsonb_typeof(o.tokens) is distinct from 'array' or jsonb_array_length(o.tokens) = 0)
      and (jsonb_typeof(o.groups) is distinct from 'array' or jsonb_array_length(o.groups) = 0
        or o.groups ? g."group" or o.groups ? (g.source || '.' || g."group") or g."group" in ('catalog', 'tokens'))
  ) as walked_since
from g;
