// Every route tesync may call, as data. URLs are only ever built from this table, so a
// caller cannot send a key where none is due nor reach a path outside it (`/v1/internal/*`
// is deliberately absent).
import type { Bucket, Source } from '../ports/sources.ts';

export type { Bucket, Source } from '../ports/sources.ts';
export type Auth = 'none' | 'bearer';

export interface Route {
  readonly source: Source;
  /** Path below the source's base URL; `{name}` marks a path parameter. */
  readonly template: string;
  readonly auth: Auth;
  readonly bucket: Bucket;
}

const app = (template: string): Route => ({ source: 'app', template: `/api/v1${template}`, auth: 'none', bucket: 'app-public' });
const gateway = (template: string): Route => ({ source: 'gateway', template, auth: 'bearer', bucket: 'gateway' });

export const ROUTES = {
  'app.metrics': app('/metrics'),
  'app.tokens': app('/tokens'),
  'app.token': app('/tokens/{slug}'),
  'app.screener': app('/screener'),
  'app.history': app('/tokens/{slug}/metrics/history'),
  'app.charts': app('/tokens/{slug}/charts'),
  'app.chart': app('/tokens/{slug}/charts/{chartKey}'),
  // The one app route with a key: its own bucket, since the app host limits per key.
  'app.bundle': { source: 'app', template: '/api/v1/tokens/{slug}/full', auth: 'bearer', bucket: 'app-key' },
  'gateway.tokens': gateway('/v1/tokens'),
  'gateway.screener': gateway('/v1/screener'),
  'gateway.token': gateway('/v1/tokens/{slug}'),
  'gateway.history': gateway('/v1/tokens/{slug}/metrics/history'),
  'gateway.charts': gateway('/v1/tokens/{slug}/charts'),
  'gateway.chart': gateway('/v1/tokens/{slug}/charts/{chartKey}'),
  'gateway.openapi': gateway('/openapi-product.json'),
} as const satisfies Record<string, Route>;

export type RouteName = keyof typeof ROUTES;

export const BUCKETS: readonly Bucket[] = ['app-public', 'app-key', 'gateway'];

/** The path every route of a source lives under: a redirect may move a request only within it. */
export const API_PREFIXES: Readonly<Record<Source, string>> = { app: '/api/v1/', gateway: '/v1/' };

/** Path prefixes no request may ever carry, whatever the table says. */
export const FORBIDDEN_PREFIXES: readonly string[] = ['/v1/internal/', '/api/v1/internal/'];

/** Whether a path below a base URL is private; give it decoded (decoded-path.ts), as a server reads it. */
export function isForbiddenPath(pathBelowBase: string): boolean {
  const lower = pathBelowBase.toLowerCase();
  return FORBIDDEN_PREFIXES.some((p) => lower.startsWith(p) || lower === p.slice(0, -1));
}

/**
 * Pure: the parameters of `path` (below the base URL, decoded as a server reads it:
 * decoded-path.ts) read as `template`, or null unless it is that template segment by segment:
 * each fixed segment exactly as written (same case, nothing added), each parameter exactly one
 * non-empty segment. No tail, no prefix, no trailing slash matches. What a parameter may hold
 * is the caller's to judge (isSafePathParam in safe-url.ts).
 */
export function matchTemplate(template: string, path: string): Record<string, string> | null {
  const want = template.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (const [i, w] of want.entries()) {
    const g = got[i] as string;
    const name = /^\{([A-Za-z]+)\}$/.exec(w)?.[1];
    if (name === undefined ? w !== g : g === '') return null;
    if (name !== undefined) params[name] = g;
  }
  return params;
}

/** The routes of a source whose template `path` is exactly (matchTemplate), with its parameters. */
export function routesAt(source: Source, path: string): { route: Route; params: Record<string, string> }[] {
  return Object.values(ROUTES).flatMap((route: Route) => {
    if (route.source !== source) return [];
    const params = matchTemplate(route.template, path);
    return params ? [{ route, params }] : [];
  });
}

export function isRouteName(name: string): name is RouteName {
  return Object.hasOwn(ROUTES, name);
}

/** The names of a template's path parameters, in order. */
export function templateParams(template: string): string[] {
  return [...template.matchAll(/\{([A-Za-z]+)\}/g)].map((m) => m[1] as string);
}
