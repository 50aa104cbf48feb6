// Safe URLs. Path parameters come from upstream (slugs, chart keys), so they are validated
// against an allow-list BEFORE encoding: encodeURIComponent leaves `.` alone, and `..` would
// collapse the path. The built URL is then checked again for origin and route prefix.
import { UnsafeRequestError } from '../lib/errors.ts';
import { decodedBelow } from './decoded-path.ts';
import { API_PREFIXES, isForbiddenPath, matchTemplate, ROUTES, templateParams, type Route, type RouteName } from './routes.ts';

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
 * RFC 3986's characters of a URI reference: unreserved, reserved and `%`. A reference whose
 * path is written in anything else (whitespace, a control character, `\`, `"`, `<`, `{`,
 * non-ASCII) is rewritten by whoever parses it (WHATWG drops tabs, reads `\` as `/`), so what
 * it names depends on the reader: it is not followed.
 */
const URI_TEXT = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;

/** Whether a reference, up to its query or fragment, is written in URI characters only. */
export function writtenAsUri(ref: string): boolean {
  const end = ref.search(/[?#]/);
  return URI_TEXT.test(end < 0 ? ref : ref.slice(0, end));
}

/** The path a route's URLs stay under: its source's API prefix, or (the OpenAPI document) its own path. */
function prefixOf(r: Route): string {
  return r.template.startsWith(API_PREFIXES[r.source]) ? API_PREFIXES[r.source] : r.template;
}

type OnRoute = { route: Route; params: Record<string, string> } | { refused: 'off the route prefix' | 'an unsafe path' | 'not a route' };

/**
 * The one route among `candidates` that `url`'s path is, exactly, with its parameters. The path
 * is judged as the server will read it (decoded-path.ts: decoded until stable, `%2F` `%5C` `\`
 * as separators, dot segments removed) and taken only when that is the path it sends (`plain`),
 * below the base URL's path (`basePath`) and `prefix`, not private; then it must be a template
 * segment by segment (matchTemplate: a fixed segment exactly, same case; no empty segment, no
 * trailing slash) with every parameter one that tesync would send itself (isSafePathParam).
 * Anything else is refused: the rule says what a route is, not what an attack looks like.
 */
function exactRoute(url: URL, basePath: string, prefix: string, candidates: readonly Route[]): OnRoute {
  const { below, plain } = decodedBelow(url.pathname, basePath);
  const underPrefix = below !== null && (prefix.endsWith('/') ? below.startsWith(prefix) : below === prefix);
  if (!underPrefix || isForbidden(below)) return { refused: 'off the route prefix' };
  if (!plain) return { refused: 'an unsafe path' };
  const found = candidates.flatMap((route) => {
    const params = matchTemplate(route.template, below);
    return params && Object.values(params).every(isSafePathParam) ? [{ route, params }] : [];
  });
  // Two routes the same path could be would leave its key rules to chance: neither is taken.
  return found.length === 1 ? found[0]! : { refused: 'not a route' };
}

/**
 * Reads a link given by upstream (a chart's data endpoint, an href, a next page) as parameters
 * of `route`. Returns null, so the caller builds the documented path from the key instead (or
 * refuses a next link), unless the link is written in URI characters, resolves to the same
 * origin without credentials, its path is exactly `route` (exactRoute: as the server reads
 * it, below the base path, each parameter valid), agrees with every parameter in `expected`,
 * and its query is well-formed.
 */
export function resolveLink(baseUrl: string, route: Route | RouteName, link: unknown, expected: Record<string, string> = {}): ResolvedLink | null {
  if (typeof link !== 'string' || link.length === 0 || link.length > MAX_LINK || !writtenAsUri(link)) return null;
  const r = routeOf(route);
  const { origin, basePath } = parseBase(baseUrl);
  let url: URL;
  try {
    url = new URL(link, `${origin}${basePath}/`);
  } catch {
    return null;
  }
  if (url.origin !== origin || url.username || url.password) return null;
  const on = exactRoute(url, basePath, prefixOf(r), [r]);
  if ('refused' in on) return null;
  for (const [name, value] of Object.entries(expected)) if (on.params[name] !== undefined && on.params[name] !== value) return null;

  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    if (!QUERY_KEY.test(key) || value.length > MAX_QUERY_VALUE) return null;
    query[key] = value;
  }
  return { params: on.params, query };
}

export type RedirectTarget =
  /** `route`: the route the target is, exactly; its key rules are the hop's (hopSending in redirects.ts). */
  | { follow: true; url: URL; route: Route }
  /** `host` is all that may be told of a target not followed: its path or query could carry anything. */
  | { follow: false; host: string; reason: string };

/**
 * Where a redirect's `Location` (relative to the URL that answered, RFC 9110) may take a
 * request of `route`: followed only when it is written in URI characters, stays on the base
 * URL's origin, and its path is exactly a route of the same source (exactRoute): one below the
 * API prefix (`/api/v1/`, `/v1/`) for a route there, the OpenAPI document only to itself; when
 * its query is well-formed; and when no key (`secrets`) appears in it, since the path of every
 * request is recorded. The hop's key rules are those of the route it is (nextHop).
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
  const prefix = prefixOf(r);
  const candidates = Object.values(ROUTES).filter((x: Route) => x.source === r.source && x.template.startsWith(prefix));
  const on = exactRoute(url, basePath, prefix, candidates);
  if ('refused' in on) return { follow: false, host, reason: on.refused };
  if (!writtenAsUri(location.trim())) return { follow: false, host, reason: 'an unsafe path' };
  for (const [key, value] of url.searchParams) {
    if (!QUERY_KEY.test(key) || value.length > MAX_QUERY_VALUE) return { follow: false, host, reason: 'an unsafe query' };
  }
  const seen = [location, safeDecode(location) ?? '', url.href, safeDecode(url.href) ?? ''];
  if (secrets.some((k) => k !== undefined && k.length > 0 && seen.some((s) => s.includes(k)))) return { follow: false, host, reason: 'a key in the Location' };
  return { follow: true, url, route: on.route };
}

function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}
