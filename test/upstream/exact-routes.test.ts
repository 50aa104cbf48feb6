// A path is followed only when it is a route, exactly (issue 55, part 4): a redirect's
// Location or a next link is requested only when its path, as the server reads it, is a route
// template of the seeds segment by segment, with each parameter one tesync would send itself.
// The table holds every form a server might read otherwise; each is answered by a recording
// proxy this test runs in front of the simulator (the redirect, or the page that gives the next
// link), and the proxy sees every request that left tesync, with its headers.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProblemError, UnsafeRequestError } from '../../src/lib/errors.ts';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { ROUTES, type RouteName } from '../../src/upstream/routes.ts';
import { resolveLink, resolveRedirect } from '../../src/upstream/safe-url.ts';
import { canaryKey } from '../helpers/services.ts';
import { proxiedUpstream, startRecordingProxy, type RecordingProxy, type SeenRequest } from '../helpers/recording-proxy.ts';

const APP_KEY = canaryKey('app');
const GW_KEY = canaryKey('gw');
const SLUG = 'aurora';

/**
 * The forms, each a reading of the route path `${P}/tokens${rest}` that a server might take
 * otherwise: `rest` is `/aurora` for a token (a redirect's target) or '' for the list (a next
 * link). None of them is the route, exactly; none may be requested.
 */
function forms(P: string, rest: string): [string, string][] {
  const T = `${P}/tokens${rest}`;
  return [
    ['internal. (issue 55)', `${P}/internal./tokens`],
    ['internal~ (issue 55)', `${P}/internal~/x`],
    ['internal:8080 (issue 55)', `${P}/internal:8080/x`],
    ['internal@x (issue 55)', `${P}/internal@x/x`],
    ['internal+ (issue 55)', `${P}/internal+/x`],
    ['tokens./x', `${P}/tokens./x`],
    ['%69nternal', `${P}/%69nternal/tokens`],
    ['%2569nternal (double)', `${P}/%2569nternal/tokens`],
    ['%2e%2e/ into a private path', `${P}/tokens/x/%2e%2e/%2e%2e/internal/tokens`],
    ['/api/v1/tokens/x/%2e%2e/%2e%2e/y', '/api/v1/tokens/x/%2e%2e/%2e%2e/y'],
    ['%252e%252e/ (double) back onto the route', `${P}/x/%252e%252e${T.slice(P.length)}`],
    ['a%2Fb', `${P}/tokens/a%2Fb`],
    ['%2F..%2F back onto the route', `${P}/tokens%2F..%2Ftokens${rest}`],
    ['backslashes onto the route', T.replace(/\//g, '\\')],
    ['backslashes out of it', `${T}\\..\\..\\internal\\tokens`],
    ['a trailing dot', `${P}/tokens.${rest}`],
    ['~', `${P}/tokens~${rest}`],
    [':', `${P}/tokens:443${rest}`],
    ['@', `${P}/tokens@x${rest}`],
    ['+', `${P}/tokens+${rest}`],
    [';', `${P}/tokens;v=2${rest}`],
    ['!', `${P}/tokens!${rest}`],
    ['$', `${P}/tokens$${rest}`],
    [',', `${P}/tokens,${rest}`],
    ['=', `${P}/tokens=${rest}`],
    ['*', `${P}/tokens*${rest}`],
    ["'", `${P}/tokens'${rest}`],
    ['( )', `${P}/(tokens)${rest}`],
    ['%74okens (an escaped letter)', `${P}/%74okens${rest}`],
    ['% left after decoding (%25)', `${P}/tokens%25${rest}`],
    ['a bare %', `${P}/tokens%zz${rest}`],
    ['an encoded space', `${P}/tokens%20${rest}`],
    ['a space', `${P}/tokens ${rest}`],
    ['a tab', `${P}/tok\tens${rest}`],
    ['a control character (%01)', `${P}/tokens%01${rest}`],
    ['upper-case prefix', `${P.toUpperCase()}/tokens${rest}`],
    ['upper-case fixed segment', `${P}/Tokens${rest}`],
    ['an empty segment (//)', `${P}//tokens${rest}`],
    ['a trailing slash', `${T}/`],
    ['a moved path (no route)', `${P}/moved/tokens${rest}`],
    ["a route's tail below another path", `${P}/v2/tokens${rest}`],
  ];
}

/** Forms in a parameter's place: values the parameter's own validation refuses. */
function paramForms(P: string): [string, string][] {
  return [
    ['; in a slug', `${P}/tokens/${SLUG};v=2`],
    ['! in a slug', `${P}/tokens/${SLUG}!`],
    ['a leading dot in a slug', `${P}/tokens/.${SLUG}`],
    ['%2F in a slug', `${P}/tokens/${SLUG}%2Fx`],
    ['a non-ASCII slug', `${P}/tokens/${SLUG}%E2%82%AC`],
  ];
}

interface Row {
  form: string;
  given: string;
  route: RouteName;
  params: Record<string, string>;
  own: string;
}

const token = (route: RouteName, own: string): Omit<Row, 'form' | 'given'> => ({ route, params: { slug: SLUG }, own });
/** Redirects: from a keyed gateway route, the keyed bundle and a public app route, each to a token path. */
const REDIRECTS: Row[] = [
  ...[...forms('/v1', `/${SLUG}`), ...paramForms('/v1')].map(([form, given]) => ({ form, given, ...token('gateway.token', `/v1/tokens/${SLUG}`) })),
  ...[...forms('/api/v1', `/${SLUG}`), ...paramForms('/api/v1')].map(([form, given]) => ({ form, given, ...token('app.bundle', `/api/v1/tokens/${SLUG}/full`) })),
  ...[...forms('/api/v1', `/${SLUG}`), ...paramForms('/api/v1')].map(([form, given]) => ({ form, given, ...token('app.token', `/api/v1/tokens/${SLUG}`) })),
];
/** Next links: from the token lists, each to a form of the list's own path. */
const NEXT_LINKS: Row[] = [
  ...forms('/v1', '').map(([form, given]) => ({ form, given: `${given}?page=2`, route: 'gateway.tokens' as const, params: {}, own: '/v1/tokens' })),
  ...forms('/api/v1', '').map(([form, given]) => ({ form, given: `${given}?page=2`, route: 'app.tokens' as const, params: {}, own: '/api/v1/tokens' })),
];

let sim: Simulator;
let proxy: RecordingProxy;
let proxyUrl: string;
/** Every request that left tesync, as the proxy saw it. */
let seen: SeenRequest[];
/** What the proxy answers itself, by path and query as received; anything else goes to the simulator. */
let answers: RecordingProxy['answers'];

beforeAll(async () => {
  sim = await startSimulator({ tokens: 4, appKeys: { [APP_KEY]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [GW_KEY] });
  proxy = await startRecordingProxy(sim.port);
  ({ url: proxyUrl, seen, answers } = proxy);
});

afterAll(async () => {
  await proxy?.close();
  await sim?.close();
});

beforeEach(() => {
  seen.length = 0;
  answers.clear();
});

const client = () => proxiedUpstream(proxyUrl, { app: APP_KEY, gateway: GW_KEY });

/** The key a route is sent with, or undefined for a public one. */
function keyOf(route: RouteName): string | undefined {
  return ROUTES[route].auth === 'none' ? undefined : ROUTES[route].source === 'app' ? APP_KEY : GW_KEY;
}

/** The one request that may be seen: the route's own, with its key where it needs one. */
function onlyOwn(row: Row): [string, string | undefined][] {
  const key = keyOf(row.route);
  return [[`GET ${row.own} HTTP/1.1`, key && `Bearer ${key}`]];
}

const host = () => new URL(proxyUrl).host;
const REFUSED = /^redirect to 127\.0\.0\.1:\d+ not followed: (off the route prefix|an unsafe path|not a route)$/;

describe('the pure rules: no form of the table is a route', () => {
  const APP = 'http://app.test:8080';
  const GW = 'https://gw.test/base';
  it.each(REDIRECTS.map((r) => [r.form, r.route, r.given, r]))('%s: a redirect of %s to %j is refused', (_f, _r, _g, row) => {
    const base = ROUTES[row.route].source === 'app' ? APP : GW;
    const from = new URL(`${base}${row.own}`);
    const given = row.given.startsWith('/') && base === GW ? `/base${row.given}` : row.given;
    const r = resolveRedirect(base, row.route, given, from, [APP_KEY, GW_KEY]);
    expect(r.follow).toBe(false);
    expect(r).toMatchObject({ reason: expect.stringMatching(/^(off the route prefix|an unsafe path|not a route)$/) });
  });

  it.each(NEXT_LINKS.map((r) => [r.form, r.route, r.given, r]))('%s: a next link of %s to %j is refused', (_f, _r, _g, row) => {
    expect(resolveLink(GW, row.route, row.given.startsWith('/') ? `/base${row.given}` : row.given)).toBeNull();
    expect(resolveLink(APP, row.route, row.given)).toBeNull();
  });

  it.each(['\u0001', '\u007f', '\u00e9', '"', '<', '>', '{', '}', '|', '^', '`', '\\'])('a link written with %j, which URIs do not hold, is refused even where it would read as the route', (c) => {
    expect(resolveLink(APP, 'app.tokens', `/api/v1/tok${c}ens?page=2`)).toBeNull();
    expect(resolveLink(APP, 'app.tokens', `/api/v1${c}tokens?page=2`)).toBeNull();
    expect(resolveRedirect(APP, 'app.tokens', `/api/v1/tok${c}ens`, new URL(`${APP}/api/v1/tokens`))).toMatchObject({ follow: false });
    // The query keeps its own rules: the characters rule reads the path only.
    expect(resolveLink(APP, 'app.tokens', '/api/v1/tokens?page=2&cursor=a|b')).toEqual({ params: {}, query: { page: '2', cursor: 'a|b' } });
  });

  it('what is exactly a route is taken, its key rules those of that route', () => {
    const from = new URL(`${APP}/api/v1/tokens/${SLUG}/full`);
    const follow = (loc: string, route: RouteName = 'app.bundle') => {
      const r = resolveRedirect(APP, route, loc, from, [APP_KEY]);
      return r.follow ? [r.url.pathname + r.url.search, r.route.auth, r.route.bucket] : r.reason;
    };
    expect(follow(`/api/v1/tokens/${SLUG}/full?v=2`)).toEqual([`/api/v1/tokens/${SLUG}/full`, 'bearer', 'app-key'].map((x, i) => (i === 0 ? `${x}?v=2` : x)));
    expect(follow(`/api/v1/tokens/${SLUG}`)).toEqual([`/api/v1/tokens/${SLUG}`, 'none', 'app-public']);
    expect(follow('charts/a%3Ab')).toEqual(['/api/v1/tokens/aurora/charts/a%3Ab', 'none', 'app-public']);
    expect(follow('../../metrics')).toEqual(['/api/v1/metrics', 'none', 'app-public']);
    // The gateway's OpenAPI document is a route, but outside the prefix: a token route does not move there.
    expect(resolveRedirect(GW, 'gateway.token', '/base/openapi-product.json', new URL(`${GW}/v1/tokens/x`))).toMatchObject({ follow: false, reason: 'off the route prefix' });
    expect(resolveLink(GW, 'gateway.tokens', '/base/v1/tokens?page=2')).toEqual({ params: {}, query: { page: '2' } });
    expect(resolveLink(GW, 'gateway.chart', 'https://gw.test/base/v1/tokens/a/charts/b~c?timeframe=7d')).toEqual({ params: { slug: 'a', chartKey: 'b~c' }, query: { timeframe: '7d' } });
  });
});

describe('behind a recording proxy: a redirect to a form of the table is never requested', () => {
  it.each(REDIRECTS.map((r) => [r.form, r.route, r.given, r]))('%s on %s (Location %j)', async (_f, _r, _g, row) => {
    answers.set(row.own, { status: 307, headers: { Location: row.given }, body: `Redirecting to ${row.given}` });
    const { upstream, recorder, lines } = client();
    const err = await upstream.get({ route: row.route, params: row.params }).catch((e: unknown) => e);
    // The resource fails with the redirect's own status, telling the target's host only.
    expect(err).toBeInstanceOf(ProblemError);
    expect(err).toMatchObject({ status: 307, path: row.own, title: expect.stringMatching(REFUSED) });
    expect((err as ProblemError).title).toContain(host());
    // The proxy saw the route's own request and nothing else: no target, and no key anywhere else.
    expect(seen.map((s) => [s.line, s.authorization])).toEqual(onlyOwn(row));
    expect(recorder.requests.map((r) => [r.path, r.httpStatus])).toEqual([[row.own, 307]]);
    // Nothing of the Location but its host is told (a target that is a prefix of the route's own path aside).
    const told = JSON.stringify([String(err), err, recorder.requests, lines()]).replaceAll(row.own, '');
    expect(told).not.toContain(JSON.stringify(row.given).slice(1, -1));
  });
});

describe('behind a recording proxy: a next link to a form of the table is never requested', () => {
  it.each(NEXT_LINKS.map((r) => [r.form, r.route, r.given, r]))('%s on %s (Link %j)', async (_f, _r, _g, row) => {
    answers.set(row.own, { status: 200, headers: { 'content-type': 'application/json', Link: `<${row.given}>; rel="next"` }, body: JSON.stringify({ data: [], meta: { next: row.given } }) });
    const { upstream } = client();
    const first = await upstream.get({ route: row.route });
    expect(first.headers.link).toBe(`<${row.given}>; rel="next"`);
    // The next page, as the list asks it (the link is the request): refused before the wire.
    await expect(upstream.get({ route: row.route, link: row.given, linkOnly: true })).rejects.toBeInstanceOf(UnsafeRequestError);
    expect(seen.map((s) => [s.line, s.authorization])).toEqual(onlyOwn(row));
  });
});

describe('behind a recording proxy: what is exactly a route is followed, with its own key rules', () => {
  const redirect = (own: string, location: string) => answers.set(own, { status: 307, headers: { Location: location }, body: '' });

  it('a keyed gateway route to itself with another query: with the key', async () => {
    redirect(`/v1/tokens/${SLUG}`, `/v1/tokens/${SLUG}?moved=1`);
    const res = await client().upstream.get({ route: 'gateway.token', params: { slug: SLUG } });
    expect(res).toMatchObject({ status: 200, path: `/v1/tokens/${SLUG}` });
    expect(seen.map((s) => [s.line, s.authorization])).toEqual([
      [`GET /v1/tokens/${SLUG} HTTP/1.1`, `Bearer ${GW_KEY}`],
      [`GET /v1/tokens/${SLUG}?moved=1 HTTP/1.1`, `Bearer ${GW_KEY}`],
    ]);
  });

  it('the keyed bundle to itself keeps the key on its bucket; to a public route it goes keyless', async () => {
    redirect(`/api/v1/tokens/${SLUG}/full`, `/api/v1/tokens/${SLUG}/full?v=2`);
    const { upstream, recorder } = client();
    await upstream.get({ route: 'app.bundle', params: { slug: SLUG } });
    redirect(`/api/v1/tokens/${SLUG}/full`, `/api/v1/tokens/${SLUG}`);
    await upstream.get({ route: 'app.bundle', params: { slug: SLUG } });
    expect(seen.map((s) => [s.line, s.authorization ?? 'no key'])).toEqual([
      [`GET /api/v1/tokens/${SLUG}/full HTTP/1.1`, `Bearer ${APP_KEY}`],
      [`GET /api/v1/tokens/${SLUG}/full?v=2 HTTP/1.1`, `Bearer ${APP_KEY}`],
      [`GET /api/v1/tokens/${SLUG}/full HTTP/1.1`, `Bearer ${APP_KEY}`],
      [`GET /api/v1/tokens/${SLUG} HTTP/1.1`, 'no key'],
    ]);
    expect(recorder.requests.map((r) => r.bucket)).toEqual(['app-key', 'app-key', 'app-key', 'app-public']);
  });

  it('a public route to the keyed bundle never gains the key: upstream refuses it, and that is recorded', async () => {
    redirect(`/api/v1/tokens/${SLUG}`, `/api/v1/tokens/${SLUG}/full`);
    await expect(client().upstream.get({ route: 'app.token', params: { slug: SLUG } })).rejects.toMatchObject({ status: 401 });
    expect(seen.map((s) => [s.line, s.authorization ?? 'no key'])).toEqual([
      [`GET /api/v1/tokens/${SLUG} HTTP/1.1`, 'no key'],
      [`GET /api/v1/tokens/${SLUG}/full HTTP/1.1`, 'no key'],
    ]);
  });

  it('a next link on the list route itself is requested as given, with the key', async () => {
    const { upstream } = client();
    const res = await upstream.get({ route: 'gateway.tokens', link: '/v1/tokens?page=1', linkOnly: true });
    expect(res).toMatchObject({ status: 200, path: '/v1/tokens?page=1' });
    expect(seen.map((s) => [s.line, s.authorization])).toEqual([['GET /v1/tokens?page=1 HTTP/1.1', `Bearer ${GW_KEY}`]]);
  });
});
