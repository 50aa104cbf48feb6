// The gateway: /v1 product routes (Bearer key), /v1/internal (X-Api-Key, so tests can catch a
// client calling it) and /openapi-product.json (served with or without a key).
import type { Period, Timeframe } from './dataset-types.ts';
import type { DataRouteKind } from './forms.ts';
import { bearerKey, problem, type Outcome, type RouteEnv, type RouteRequest } from './outcome.ts';
import { renderGatewayChartCatalog, renderGatewayRow } from './render.ts';
import { toJson } from './json.ts';

export const GATEWAY_PREFIX = '/v1';
export const OPENAPI_PATH = '/openapi-product.json';

const PERIODS: readonly Period[] = ['7d', '30d', '90d', '180d', '365d', '1y'];
const TIMEFRAMES: readonly Timeframe[] = [...PERIODS, 'all'];
const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;
const CHART_KEY = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const DEFAULT_PERIOD: Period = '30d';
export const DEFAULT_TIMEFRAME: Timeframe = '90d';

interface Source {
  surface: string;
  backing: string;
  chartKey?: string | null;
  timeframe?: string | null;
}

function ok(env: RouteEnv, data: unknown, src: Source, o: { count?: number; asOf?: string; siblings?: Record<string, unknown> } = {}): Outcome {
  const meta = {
    asOf: o.asOf ?? env.view.asOf,
    count: o.count ?? null,
    source: { type: 'read_plane', surface: src.surface, backing: src.backing, chartKey: src.chartKey ?? null, timeframe: src.timeframe ?? null },
  };
  const out: Outcome = { kind: 'ok', data, meta, surface: src.surface };
  if (o.siblings) out.siblings = o.siblings;
  return out;
}

export function handleOpenapi(env: RouteEnv): Outcome {
  return { kind: 'raw', status: 200, body: toJson(env.view.openapi()), contentType: 'application/json; charset=utf-8', surface: 'openapi' };
}

/** tesync's name for the route (src/upstream/routes.ts), for forms applied per route */
export function gatewayRouteKind(segments: readonly (string | null)[]): DataRouteKind | null {
  const [a, , c, d] = segments;
  const n = segments.length;
  if (n === 1) return a === 'tokens' ? 'gateway.tokens' : a === 'screener' ? 'gateway.screener' : null;
  // /v1/internal is no route of tesync's
  if (a !== 'tokens') return null;
  if (n === 2) return 'gateway.token';
  if (n === 3) return c === 'charts' ? 'gateway.charts' : null;
  if (n === 4 && c === 'charts') return 'gateway.chart';
  return n === 4 && c === 'metrics' && d === 'history' ? 'gateway.history' : null;
}

export function handleGateway(req: RouteRequest, env: RouteEnv): Outcome {
  const s = req.segments;
  if (s[0] === 'internal') return internal(req, env);
  const key = bearerKey(req.headers);
  if (key === null || !env.gatewayKeys.has(key)) {
    return { kind: 'problem', status: 401, code: 'unauthorized', detail: key === null ? 'A Bearer API key is required.' : 'The API key is not valid.', headers: { 'WWW-Authenticate': 'Bearer' } };
  }
  const [a, slug, c, d] = s;
  if (s.length === 1 && a === 'tokens') return tokens(env);
  if (s.length === 1 && a === 'screener') return screener(env);
  if (a === 'tokens' && s.length >= 2 && s.length <= 4) {
    if (slug === null || slug === undefined || !SLUG.test(slug)) return problem(400, 'invalid-parameter', 'The token slug is not valid.', { parameter: 'slug' });
    if (!env.view.gatewayListed(slug)) return problem(404, 'token-not-found', `Token "${slug}" is not covered.`);
    if (s.length === 2) return page(slug, env);
    if (s.length === 3 && c === 'charts') return charts(slug, env);
    if (s.length === 4 && c === 'metrics' && d === 'history') return trend(slug, req, env);
    if (s.length === 4 && c === 'charts') return chart(slug, d ?? null, req, env);
  }
  return problem(404, 'not-found', `No route for ${req.path}.`);
}

function internal(req: RouteRequest, env: RouteEnv): Outcome {
  if (!req.headers['x-api-key']) return { kind: 'problem', status: 401, code: 'unauthorized', detail: 'Private route.' };
  return ok(env, { private: true, note: 'internal route: external clients must never call it' }, { surface: 'internal', backing: 'internal' });
}

function tokens(env: RouteEnv): Outcome {
  const list = env.view.gatewayTokens().map((t) => ({ ...t }));
  return ok(env, list, { surface: 'token_catalog', backing: 'mv_token_catalog' }, { count: list.length });
}

function screener(env: RouteEnv): Outcome {
  const rows = env.view.gatewayScreenerRows().map((r) => renderGatewayRow(r, env.render));
  const insights = env.view.gatewayInsights().map((i) => ({ ...i }));
  return ok(env, rows, { surface: 'screener', backing: 'mv_screener_rows' }, { count: rows.length, siblings: { insights } });
}

function page(slug: string, env: RouteEnv): Outcome {
  const shell = env.view.gatewayPage(slug);
  if (!shell) return problem(404, 'token-not-found', `Token "${slug}" is not covered.`);
  return ok(env, shell, { surface: 'token_snapshot', backing: 'mv_token_page' });
}

function trend(slug: string, req: RouteRequest, env: RouteEnv): Outcome {
  const raw = req.query.get('period');
  const period = (raw ?? DEFAULT_PERIOD) as Period;
  if (!PERIODS.includes(period)) return problem(400, 'invalid-parameter', `period must be one of ${PERIODS.join(', ')}.`, { parameter: 'period' });
  const data = env.view.gatewayTrend(slug, period);
  const src = { surface: 'token_trend', backing: 'mv_token_trend', timeframe: period };
  return ok(env, data, src, { asOf: env.view.lastDate });
}

function charts(slug: string, env: RouteEnv): Outcome {
  const list = env.view.gatewayCharts(slug) ?? [];
  return ok(env, renderGatewayChartCatalog(slug, list, env.render), { surface: 'chart_catalog', backing: 'curated_chart_defs' }, { count: list.length });
}

function chart(slug: string, key: string | null, req: RouteRequest, env: RouteEnv): Outcome {
  if (key === null || !CHART_KEY.test(key)) return problem(400, 'invalid-parameter', 'The chart key is not valid.', { parameter: 'chart_key' });
  const entry = env.view.gatewayCharts(slug)?.find((e) => e.key === key);
  if (!entry) return problem(404, 'chart-item-not-found', `Chart "${key}" is not covered for ${slug}.`);
  const raw = req.query.get('timeframe');
  const timeframe = (raw ?? DEFAULT_TIMEFRAME) as Timeframe;
  if (!TIMEFRAMES.includes(timeframe)) return problem(400, 'invalid-parameter', `timeframe must be one of ${TIMEFRAMES.join(', ')}.`, { parameter: 'timeframe' });
  if (!entry.timeframes.includes(timeframe)) {
    return problem(400, 'invalid-parameter', `Chart "${key}" supports the timeframes ${entry.timeframes.join(', ')}.`, { parameter: 'timeframe', supported: [...entry.timeframes] });
  }
  const item = env.view.gatewayChartData(slug, key, timeframe);
  if (!item) return problem(404, 'chart-item-not-found', `Chart "${key}" is not covered for ${slug}.`);
  return ok(env, item, { surface: 'chart_item', backing: 'curated_chart_rows', chartKey: key, timeframe }, { asOf: env.view.lastDate });
}
