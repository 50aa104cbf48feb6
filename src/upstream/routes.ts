// Every route tesync may call, as data. URLs are only ever built from this table, so a
// caller cannot send a key where none is due nor reach a path outside it (`/v1/internal/*`
// is deliberately absent).
import { isPlainPath, serverPath } from './decoded-path.ts';
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

/** What a request to a path is due: the key or not, and the bucket it counts against. */
export type PathRules = Pick<Route, 'auth' | 'bucket'>;

/**
 * The rules of a path of `source` below its base URL (a redirect's target): those of the route
 * the path stands for, the one whose template, below the API prefix, the path ends with (the
 * longest: a route moved below its prefix, `/api/v1/moved/tokens/x/full`, is still the
 * bundle). A path no route stands for gets what every route of the source gets where they
 * agree (the gateway: the key), else the rules of the source's routes without a key.
 * The path is judged as a server reads it (decoded-path.ts): one that is not plain (decoding
 * changes it: `%69nternal`, `%2F`, `%2e%2e`, a backslash), or that is private once decoded,
 * stands for no route and never gets the key.
 */
export function rulesAt(source: Source, pathBelowBase: string): PathRules {
  const own: Route[] = Object.values(ROUTES).filter((r) => r.source === source);
  const decoded = serverPath(pathBelowBase);
  if (decoded === null || !isPlainPath(pathBelowBase) || isForbiddenPath(decoded)) return keylessRules(own);
  pathBelowBase = decoded;
  const prefix = API_PREFIXES[source];
  let best: { route: Route; length: number } | undefined;
  if (pathBelowBase.startsWith(prefix)) {
    const got = pathBelowBase.slice(prefix.length).replace(/\/$/, '').split('/');
    for (const route of own) {
      if (!route.template.startsWith(prefix)) continue;
      const want = route.template.slice(prefix.length).split('/');
      if (want.length > got.length || (best && best.length >= want.length)) continue;
      const tail = got.slice(got.length - want.length);
      if (want.every((w, i) => (/^\{[A-Za-z]+\}$/.test(w) ? tail[i] !== '' : w === tail[i]))) best = { route, length: want.length };
    }
  }
  if (best) return { auth: best.route.auth, bucket: best.route.bucket };
  const first = own[0]!;
  if (own.every((r) => r.auth === first.auth && r.bucket === first.bucket)) return { auth: first.auth, bucket: first.bucket };
  const keyless = own.find((r) => r.auth === 'none') ?? first;
  return { auth: keyless.auth, bucket: keyless.bucket };
}

/** No key, on the bucket the source's keyless requests count against (the gateway limits per IP either way). */
function keylessRules(own: readonly Route[]): PathRules {
  const keyless = own.find((r) => r.auth === 'none') ?? own[0]!;
  return { auth: 'none', bucket: keyless.bucket };
}

export function isRouteName(name: string): name is RouteName {
  return Object.hasOwn(ROUTES, name);
}

/** The names of a template's path parameters, in order. */
export function templateParams(template: string): string[] {
  return [...template.matchAll(/\{([A-Za-z]+)\}/g)].map((m) => m[1] as string);
}
