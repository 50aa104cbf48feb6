// Coverage: what the lists promise against what the warehouse holds, computed by the warehouse
// itself (two views of the `analytics` schema, generated with the others by
// src/store/schema/analytics-sql.ts). A promise is a resource a list plans: each listed token's
// routes its coverage flags say exist, each chart its catalog lists, each period and timeframe
// configured. One SELECT per group below says which resources that group's lists promise;
// each names its resources as the group's job does (`JobDefinition.resource`), which
// test/schema/warehouse/coverage.test.ts holds them to. Freshness is judged over the resources that
// exist; a listed token none of whose resources exists is counted here, and only here.

/** A view of the generated analytics SQL: its name and its SELECT (no `{schema.table}`: no as-of form). */
export interface CoverageView {
  name: string;
  body: string;
}

/**
 * Statuses of a promised resource that upstream or the configuration excuses: it does not
 * exist upstream (`not_found`), upstream declines it to this key (`unauthorized`, `no_credits`,
 * `missing_scope`: research bundles), or tesync skips it (`skipped`: bundles without a key).
 * Such a resource is not expected, and counted apart.
 */
export const NOT_OFFERED = ['not_found', 'skipped', 'unauthorized', 'no_credits', 'missing_scope'] as const;

/** Groups whose one resource each source walks whole (no list promises it: the walk does). */
export const SINGLE: readonly [source: string, group: string, resource: string][] = [
  ['app', 'catalog', 'metrics'],
  ['app', 'tokens', 'tokens'],
  ['app', 'screener', 'screener'],
  ['gateway', 'tokens', 'tokens'],
  ['gateway', 'screener', 'screener'],
  ['gateway', 'contract', 'openapi'],
];

/** Per group: the resources its lists promise, each with its token and when its lists last changed. */
export const PROMISES: readonly { source: string; group: string; select: string }[] = [
  { source: 'app', group: 'snapshot', select: `select 'token/' || t.slug || '/snapshot', t.slug, c.app_tokens from app_listed t, changed c where t.coverage_snapshot` },
  { source: 'app', group: 'history', select: `select 'token/' || t.slug || '/history', t.slug, c.app_tokens from app_listed t, changed c where t.coverage_metric_history` },
  { source: 'app', group: 'charts', select: `select 'token/' || t.slug || '/charts', t.slug, c.app_tokens from app_listed t, changed c where t.coverage_charts` },
  {
    source: 'app',
    group: 'chart',
    select: `select 'token/' || t.slug || '/chart/' || ch.chart_key, t.slug, greatest(c.app_tokens, c.app_charts)
    from app_listed t join app.charts ch on ch.token_slug = t.slug, changed c where t.coverage_charts`,
  },
  // Every listed token: no coverage flag speaks of research bundles (without a key they are `skipped`).
  { source: 'app', group: 'bundle', select: `select 'token/' || t.slug || '/bundle', t.slug, c.app_tokens from app_listed t, changed c` },
  { source: 'gateway', group: 'page', select: `select 'token/' || t.slug || '/page', t.slug, c.gateway_tokens from gateway_listed t, changed c` },
  {
    source: 'gateway',
    group: 'history',
    select: `select 'token/' || t.slug || '/history/' || p.period, t.slug, c.gateway_tokens from gateway_listed t cross join gateway_periods p, changed c`,
  },
  { source: 'gateway', group: 'charts', select: `select 'token/' || t.slug || '/charts', t.slug, c.gateway_tokens from gateway_listed t, changed c` },
  {
    source: 'gateway',
    group: 'chart',
    select: `select 'token/' || t.slug || '/chart/' || ch.chart_key || '/' || tf.timeframe, t.slug, greatest(c.gateway_tokens, c.gateway_charts)
    from gateway_listed t join gateway.charts ch on ch.token_slug = t.slug cross join lateral unnest(ch.mirrored_timeframes) tf(timeframe), changed c`,
  },
];

const quoted = (s: string) => `'${s.replaceAll("'", "''")}'`;
const notOffered = NOT_OFFERED.map(quoted).join(', ');

/** One row per resource a list promises, held or not, and why not. */
export const coverageResourcesView: CoverageView = {
  name: 'coverage_resources',
  // A list's rows change (`fetched_at`, their known time) only when what it lists does: a
  // token listed, delisted or with a coverage flag flipped, a chart added, a timeframe mirrored.
  // The gateway's history periods are those its token list last planned with (the token
  // list's state, `historyPeriods`); before it recorded them, those of its tracked resources.
  body: `with app_listed as (
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
    ${SINGLE.map(([s, g, r]) => `(${quoted(s)}, ${quoted(g)}, ${quoted(r)})`).join(',\n    ')}
  ) g(source, "group", resource) on g.source = w.source
${PROMISES.map((p) => `  union all\n  select ${quoted(p.source)}, ${quoted(p.group)}, r.* from (${p.select}) r`).join('\n')}
)
select p.source, p."group", p.resource, p.token_slug, s.status, s.last_success_at, s.verified_at,
  coalesce(s.status not in (${notOffered}), true) as offered,
  coalesce(s.status not in (${notOffered}) and s.last_success_at is not null, false) as held,
  case
    when s.resource is null then 'never fetched'
    when s.status = 'not_found' then 'upstream says it does not exist (not_found)'
    when s.status = 'skipped' then 'skipped by configuration (skipped)'
    when s.status in (${notOffered}) then 'declined to this key (' || s.status || ')'
    when s.last_success_at is null then s.status || coalesce(' (' || nullif(concat_ws(' ', s.error_type, s.http_status::text, s.error_code), '') || ')', '') || ', nothing held'
  end as why,
  p.list_changed_at
from promised p
left join sync.resource_state s on s.source = p.source and s.resource = p.resource`,
};

/** Per source and group: promised, held, missing, and whether a walk of the group has ended since its lists changed. */
export const coverageView: CoverageView = {
  name: 'coverage',
  // A run walked a group when it walked its source for every token, and its groups (a worker
  // walk's `groups`, a sync's `only`) are none (all) or name the group; every walk runs the
  // lists (catalog, tokens). Any end counts, an interruption's too: what it left is missing.
  body: `with g as (
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
from g`,
};

export const COVERAGE_VIEWS: readonly CoverageView[] = [coverageResourcesView, coverageView];
