// Safe URLs. Path parameters come from upstream (slugs, chart keys), so they are validated
// against an allow-list BEFORE encoding: encodeURIComponent leaves `.` alone, and `..` would
// collapse the path. The built URL is then checked again for origin and route prefix.
import { UnsafeRequestError } from '../lib/errors.ts';
import { decodedBelow } from './decoded-path.ts';
import { API_PREFIXES, isForbiddenPath, ROUTES, templateParams, type Route, type RouteName } from './routes.ts';

/** Starts with a letter or digit (so never `.`, `..`, `-x`), then URL-unreserved characters and `:@+`. */
const PARAM = /^[A-Za-z0-9][A-Za-z0-9._~:@+-]{0,127}$/;
// A plain name, or one bracketed member (JSON:API's `page[number]`, `page[cursor]` in next links).
const QUERY_KEY = /^[A-Za-z][A-Za-z0-9_.-]{0,63}(?:\[[A-Za-z0-9_.-]{1,63}\])?$/;
const MAX_QUERY_VALUE = 1024;
const MAX_LINK = 2048;

export type Query = Record<string, string | undefined>;

function preview(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

/** Whether a value may be used as a path parameter. */
export function isSafePathParam(value: unknown): value is string {
  return typeof value === 'string' && PARAM.test(value);
}

/** Validates a path parameter against the allow-list and percent-encodes it; throws UnsafeRequestError. */
export function pathParam(value: unknown): string {
  if (!isSafePathParam(value)) {
    const shown = typeof value === 'string' ? `${preview(value)} (${value.length} chars)` : typeof value;
    throw new UnsafeRequestError(`refusing path parameter ${shown}: not a plain slug or key`);
  }
  return encodeURIComponent(value);
}

function routeOf(route: Route | RouteName): Route {
  return typeof route === 'string' ? ROUTES[route] : route;
}

function parseBase(baseUrl: string): { origin: string; basePath: string } {
  const base = new URL(baseUrl);
  return { origin: base.origin, basePath: base.pathname.replace(/\/+$/, '') };
}

/** A private path (`/v1/internal/...`); given a decoded path, as a server reads it (decoded-path.ts). */
const isForbidden = isForbiddenPath;

/**
 * The URL of a route: base URL + template with validated, encoded parameters + sorted query
 * (sorted so the same request always records the same path). Throws UnsafeRequestError.
 */
export function buildUrl(baseUrl: string, route: Route | RouteName, params: Record<string, string> = {}, query: Query = {}): URL {
  const r = routeOf(route);
  const names = templateParams(r.template);
  for (const key of Object.keys(params)) {
    if (!names.includes(key)) throw new UnsafeRequestError(`route ${r.template} has no parameter ${preview(key)}`);
  }
  const filled = r.template.replace(/\{([A-Za-z]+)\}/g, (_m, name: string) => {
    if (!Object.hasOwn(params, name)) throw new UnsafeRequestError(`route ${r.template} needs parameter ${name}`);
    return pathParam(params[name]);
  });
  if (isForbidden(filled)) throw new UnsafeRequestError(`refusing a private route: ${filled}`);

  const { origin, basePath } = parseBase(baseUrl);
  const url = new URL(`${origin}${basePath}${filled}`);
  for (const key of Object.keys(query).sort()) {
    const value = query[key];
    if (value === undefined) continue;
    if (!QUERY_KEY.test(key)) throw new UnsafeRequestError(`refusing query parameter name ${preview(key)}`);
    if (typeof value !== 'string' || value.length > MAX_QUERY_VALUE) throw new UnsafeRequestError(`refusing query parameter ${key}: value too long or not a string`);
    url.searchParams.set(key, value);
  }
  // Belt and braces: nothing above may have moved the URL off the base or the route.
  if (url.origin !== origin || url.pathname !== `${basePath}${filled}`) {
    throw new UnsafeRequestError(`built URL left the route: ${url.pathname}`);
  }
  return url;
}

/** Path and query of a URL: what is recorded and logged (never the host, never a key). */
export function pathOf(url: URL): string {
  return `${url.pathname}${url.search}`;
}

export interface ResolvedLink {
  params: Record<string, string>;
  query: Record<string, string>;
}

/**
 * Reads a link given by upstream (a chart's data endpoint, an href, a next page) as parameters
 * of `route`. Returns null, so the caller builds the documented path from the key instead (or
 * refuses a next link), unless the link resolves to the same origin, its path read as the
 * server will read it (decoded-path.ts) is below the base path, is not private and is the path
 * it would send, matches the route's
 * template with valid parameters, and agrees with every parameter in `expected`.
 */
export function resolveLink(baseUrl: string, route: Route | RouteName, link: unknown, expected: Record<string, string> = {}): ResolvedLink | null {
  if (typeof link !== 'string' || link.length === 0 || link.length > MAX_LINK) return null;
  const r = routeOf(route);
  const { origin, basePath } = parseBase(baseUrl);
  let url: URL;
  try {
    url = new URL(link, `${origin}${basePath}/`);
  } catch {
    return null;
  }
  if (url.origin !== origin || url.username || url.password) return null;
  // Judged as the server will read it: decoded, dot segments gone; and taken only when that is
  // exactly the path it would send (a link whose meaning changes under decoding is refused).
  const { below, plain } = decodedBelow(url.pathname, basePath);
  if (below === null || isForbidden(below) || !plain) return null;

  const want = r.template.split('/');
  const got = below.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    const g = got[i] as string;
    const name = /^\{([A-Za-z]+)\}$/.exec(w)?.[1];
    if (!name) {
      if (w !== g) return null;
      continue;
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(g);
    } catch {
      return null;
    }
    if (!isSafePathParam(decoded)) return null;
    if (expected[name] !== undefined && expected[name] !== decoded) return null;
    params[name] = decoded;
  }

  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    if (!QUERY_KEY.test(key) || value.length > MAX_QUERY_VALUE) return null;
    query[key] = value;
  }
  return { params, query };
}

export type RedirectTarget =
  /** `pathBelowBase`: the target's path below the base URL's own (its key rules: rulesAt). */
  | { follow: true; url: URL; pathBelowBase: string }
  /** `host` is all that may be told of a target not followed: its path or query could carry anything. */
  | { follow: false; host: string; reason: string };

/**
 * Where a redirect's `Location` (relative to the URL that answered, RFC 9110) may take a
 * request of `route`: followed only when its path, read as the server will read it
 * (decoded-path.ts), stays on the base URL's origin, below its path and the route's API
 * prefix (`/api/v1/`, `/v1/`; the OpenAPI document only to itself), is not private, is the
 * path it would send (decoding changes nothing), every path segment is a plain word (the allow-list of path parameters) and
 * the query is well-formed; and when no key (`secrets`) appears in it, since the path of
 * every request is recorded. Whether the hop carries the key is the caller's to decide from
 * the target's path (nextHop in redirects.ts).
 */
export function resolveRedirect(baseUrl: string, route: Route | RouteName, location: string | null | undefined, from: URL, secrets: readonly (string | undefined)[] = []): RedirectTarget {
  if (typeof location !== 'string' || location.trim() === '') return { follow: false, host: 'nowhere', reason: 'no Location' };
  if (location.length > MAX_LINK) return { follow: false, host: 'unknown', reason: 'Location too long' };
  let url: URL;
  try {
    url = new URL(location.trim(), from);
  } catch {
    return { follow: false, host: 'unknown', reason: 'unreadable Location' };
  }
  url.hash = '';
  const host = url.host || url.protocol;
  const r = routeOf(route);
  const { origin, basePath } = parseBase(baseUrl);
  if (url.origin !== origin) return { follow: false, host, reason: 'off the base URL' };
  if (url.username || url.password) return { follow: false, host, reason: 'credentials in the Location' };
  const prefix = r.template.startsWith(API_PREFIXES[r.source]) ? API_PREFIXES[r.source] : r.template;
  // The target's path as the server will read it (decoded until stable, dot segments removed,
  // `%2F` `%5C` `\` as separators): that is what the prefix and the private paths judge ...
  const { below, plain } = decodedBelow(url.pathname, basePath);
  const onRoute = below !== null && (prefix.endsWith('/') ? below.startsWith(prefix) : below === prefix);
  if (!onRoute || isForbidden(below)) return { follow: false, host, reason: 'off the route prefix' };
  // ... and it is followed only when that is the path it would send (else an unsafe path).
  if (!plain) return { follow: false, host, reason: 'an unsafe path' };
  const segments = below.slice(prefix.length).split('/');
  // A trailing slash is a common canonical form; any other empty or odd segment is not.
  if (segments.length > 1 && segments.at(-1) === '') segments.pop();
  if (prefix.endsWith('/') && !segments.every((s) => isSafePathParam(safeDecode(s)))) return { follow: false, host, reason: 'an unsafe path' };
  for (const [key, value] of url.searchParams) {
    if (!QUERY_KEY.test(key) || value.length > MAX_QUERY_VALUE) return { follow: false, host, reason: 'an unsafe query' };
  }
  const seen = [location, safeDecode(location) ?? '', url.href, safeDecode(url.href) ?? ''];
  if (secrets.some((k) => k !== undefined && k.length > 0 && seen.some((s) => s.includes(k)))) return { follow: false, host, reason: 'a key in the Location' };
  return { follow: true, url, pathBelowBase: below };
}

function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}
