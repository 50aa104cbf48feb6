// The app host: /api/v1 routes, their query validation and their snake_case errors.
import type { AppMetricValue, AppScreenerRow, HistoryMetricKey } from './dataset-types.ts';
import { isIsoDate } from './calendar.ts';
import { compareDecimal } from './decimal.ts';
import type { DataRouteKind } from './forms.ts';
import { HISTORY_METRICS, WINDOWS } from './metrics-catalog.ts';
import { bearerKey, problem, type Outcome, type RouteEnv, type RouteRequest } from './outcome.ts';
import { renderAppChartCatalog, renderAppChartData, renderHistory, renderHistoryAll, renderScreenerRow, renderSnapshot, type HistoryQuery } from './render.ts';

export const APP_PREFIX = '/api/v1';
const MAX_LIMIT = 1000;

export function isAppKeyRoute(segments: readonly (string | null)[]): boolean {
  return segments.length === 3 && segments[0] === 'tokens' && segments[2] === 'full';
}

/** tesync's name for the route (src/upstream/routes.ts), for forms applied per route */
export function appRouteKind(segments: readonly (string | null)[]): DataRouteKind | null {
  const [a, , c, d] = segments;
  const n = segments.length;
  if (n === 1) return a === 'metrics' ? 'app.metrics' : a === 'tokens' ? 'app.tokens' : a === 'screener' ? 'app.screener' : null;
  if (a !== 'tokens') return null;
  if (n === 2) return 'app.token';
  if (n === 3) return c === 'full' ? 'app.bundle' : c === 'charts' ? 'app.charts' : null;
  if (n === 4 && c === 'charts') return 'app.chart';
  return n === 4 && c === 'metrics' && d === 'history' ? 'app.history' : null;
}

export function handleApp(req: RouteRequest, env: RouteEnv): Outcome {
  const s = req.segments;
  const [a, slug, c, d] = s;
  if (s.length === 1 && a === 'metrics') return metrics(env);
  if (s.length === 1 && a === 'tokens') return tokens(env);
  if (s.length === 1 && a === 'screener') return screener(req, env);
  if (a === 'tokens' && s.length >= 2) {
    if (slug === null || slug === undefined) return tokenNotFound(String(slug));
    if (s.length === 2) return snapshot(slug, env);
    if (s.length === 3 && c === 'full') return bundle(slug, req, env);
    if (s.length === 3 && c === 'charts') return chartCatalog(slug, env);
    if (s.length === 4 && c === 'charts') return d === null || d === undefined ? problem(404, 'chart_not_found', 'No such chart.') : chartData(slug, d, env);
    if (s.length === 4 && c === 'metrics' && d === 'history') return history(slug, req, env);
  }
  return problem(404, 'not_found', `No route for ${req.path}.`);
}

function ok(env: RouteEnv, data: unknown, count?: number): Outcome {
  const meta: Record<string, unknown> = { asOf: env.view.asOf };
  if (count !== undefined) meta.count = count;
  return { kind: 'ok', data, meta };
}

function tokenNotFound(slug: string): Outcome {
  return problem(404, 'token_not_found', `Token "${slug}" does not exist.`);
}

function metrics(env: RouteEnv): Outcome {
  const list = env.view.appMetrics().map((m) => ({ ...m }));
  return ok(env, list, list.length);
}

function tokens(env: RouteEnv): Outcome {
  const list = env.view.appTokens().map((t) => ({ ...t, coverage: { ...t.coverage } }));
  return ok(env, list, list.length);
}

// ---- screener ----

type SortValue = (row: AppScreenerRow) => string | null;

function sortKeys(): Map<string, SortValue> {
  const v = (mv: AppMetricValue | undefined) => mv?.value ?? null;
  const keys = new Map<string, SortValue>([
    ['effectiveMarketCap', (r) => v(r.effectiveMarketCap)],
    ['effectiveRatio', (r) => v(r.effectiveRatio)],
    ['annualizedRevenue', (r) => v(r.annualizedRevenue)],
  ]);
  for (const w of WINDOWS) {
    for (const prefix of ['multiple', 'multiples']) keys.set(`${prefix}.${w}`, (r) => v(r.multiples[w]));
    for (const prefix of ['revenue', 'revenues']) keys.set(`${prefix}.${w}`, (r) => v(r.revenues[w]));
  }
  return keys;
}
const SORT_KEYS = sortKeys();

function screener(req: RouteRequest, env: RouteEnv): Outcome {
  let rows = [...env.view.appScreenerRows()];
  const sort = req.query.get('sort');
  if (sort !== null && sort !== '') {
    const desc = sort.startsWith('-');
    const name = desc || sort.startsWith('+') ? sort.slice(1) : sort;
    const value = SORT_KEYS.get(name);
    if (!value) return problem(400, 'invalid_sort', `Unknown sort key "${name}".`, { allowed: [...SORT_KEYS.keys()] });
    // nulls last in both directions; ties keep list order
    rows = rows
      .map((row, i) => ({ row, i, v: value(row) }))
      .sort((x, y) => {
        if (x.v === null || y.v === null) return x.v === y.v ? x.i - y.i : x.v === null ? 1 : -1;
        const c = compareDecimal(x.v, y.v);
        return c === 0 ? x.i - y.i : desc ? -c : c;
      })
      .map((x) => x.row);
  }
  return ok(env, rows.map((r) => renderScreenerRow(r, env.render)), rows.length);
}

// ---- token routes ----

function snapshot(slug: string, env: RouteEnv): Outcome {
  const snap = env.view.appSnapshot(slug);
  return snap ? ok(env, renderSnapshot(snap, env.render)) : tokenNotFound(slug);
}

function history(slug: string, req: RouteRequest, env: RouteEnv): Outcome {
  const docs = env.view.appHistory(slug);
  if (!docs) return tokenNotFound(slug);
  const q = req.query;

  let metricKeys: HistoryMetricKey[] = [...HISTORY_METRICS];
  const rawMetrics = q.get('metrics');
  if (rawMetrics !== null && rawMetrics.trim() !== '') {
    const asked = rawMetrics.split(',').map((m) => m.trim());
    const unknown = asked.filter((m) => !(HISTORY_METRICS as readonly string[]).includes(m));
    if (unknown.length > 0) return problem(400, 'invalid_metric', `Unsupported metric key(s): ${unknown.join(', ')}.`, { invalidMetrics: unknown, allowed: [...HISTORY_METRICS] });
    metricKeys = [...new Set(asked)] as HistoryMetricKey[];
  }

  let limit: number | null = null;
  const rawLimit = q.get('limit');
  if (rawLimit !== null) {
    if (!/^\d+$/.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > MAX_LIMIT) {
      return problem(400, 'invalid_limit', `limit must be an integer from 1 to ${MAX_LIMIT}.`, { min: 1, max: MAX_LIMIT });
    }
    limit = Number(rawLimit);
  }

  const from = q.get('from');
  const to = q.get('to');
  for (const [name, value] of [['from', from], ['to', to]] as const) {
    if (value !== null && !isIsoDate(value)) return problem(400, 'invalid_date', `${name} must be a date in the form YYYY-MM-DD.`, { parameter: name });
  }
  if (from !== null && to !== null && from > to) return problem(400, 'invalid_date_range', 'from is after to.');

  const streams = docs.map((d) => d.stream);
  const stream = q.get('stream') ?? '';
  const query: HistoryQuery = { metrics: metricKeys, from, to, limit };
  // meta.count stays the number of streams, whichever shape holds them
  if (stream === 'all') return ok(env, renderHistoryAll(docs, query, env.render), docs.length);
  const chosen = stream === '' ? docs[0] : docs.find((d) => d.stream === stream);
  if (!chosen) return problem(400, 'stream_not_found', `Stream "${stream}" is not available for ${slug}.`, { streams });
  return ok(env, renderHistory(chosen, query, env.render));
}

function chartCatalog(slug: string, env: RouteEnv): Outcome {
  const charts = env.view.appCharts(slug);
  if (!charts) return tokenNotFound(slug);
  return ok(env, renderAppChartCatalog(slug, charts, env.render), charts.length);
}

function chartData(slug: string, key: string, env: RouteEnv): Outcome {
  if (!env.view.listed(slug)) return tokenNotFound(slug);
  const data = env.view.appChartData(slug, key);
  return data ? ok(env, renderAppChartData(slug, key, data, env.render)) : problem(404, 'chart_not_found', `Chart "${key}" is not available for ${slug}.`);
}

// ---- the API-key route ----

function bundle(slug: string, req: RouteRequest, env: RouteEnv): Outcome {
  const key = bearerKey(req.headers);
  const grant = key === null ? undefined : env.appKeys[key];
  if (!grant) {
    const detail = key === null ? 'A Bearer API key is required.' : 'The API key is not valid.';
    return { kind: 'problem', status: 401, code: 'unauthorized', detail, headers: { 'WWW-Authenticate': 'Bearer' } };
  }
  const b = env.view.researchBundle(slug);
  if (!b) return tokenNotFound(slug);
  const scope = `tokens:read:${slug}`;
  if (!grant.scopes.includes('tokens:read') && !grant.scopes.includes(scope)) {
    return problem(403, 'missing_scope', `The key lacks the scope ${scope}.`, { scope });
  }
  if (grant.credits !== 'all' && !grant.credits.includes(slug)) {
    return problem(402, 'no_credits_for_token', `The key has no credits for ${slug}.`, { token: slug });
  }
  return ok(env, {
    summary: b.summary,
    valueDrivers: b.valueDrivers.map((v) => ({ ...v })),
    valueDriverEdges: b.valueDriverEdges.map((e) => ({ ...e })),
    tokenFunctions: b.tokenFunctions.map((f) => ({ ...f })),
  });
}
