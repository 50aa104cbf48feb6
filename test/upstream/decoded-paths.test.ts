// Every URL tesync would request from upstream's word (a redirect's Location, a next link) is
// judged as the server will read it: percent-decoded until stable, `%2F` `%5C` `\` as
// separators, dot segments removed; and requested only when that is the path it sends
// (contract: "Upstream rules the worker keeps"; issue 45 item 1). The simulator sits behind
// a recording proxy this test runs, so every request line and Authorization header that left
// tesync is seen, whatever path it took.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProblemError, UnsafeRequestError } from '../../src/lib/errors.ts';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import type { UpstreamRequest } from '../../src/upstream/index.ts';
import { decodedBelow, removeDotSegments, serverPath } from '../../src/upstream/decoded-path.ts';
import { routesAt, type RouteName } from '../../src/upstream/routes.ts';
import { resolveLink, resolveRedirect } from '../../src/upstream/safe-url.ts';
import { chooseNext, readPageSignals } from '../../src/engine/fetch/next-page.ts';
import { canaryKey } from '../helpers/services.ts';
import { proxiedUpstream, startRecordingProxy, type RecordingProxy, type SeenRequest } from '../helpers/recording-proxy.ts';

const APP_KEY = canaryKey('app');
const GW_KEY = canaryKey('gw');

let sim: Simulator;
let proxy: RecordingProxy;
let proxyUrl: string;
/** Every request line and key header that left tesync, as the proxy saw it. */
let seen: SeenRequest[];

beforeAll(async () => {
  sim = await startSimulator({ tokens: 6, appKeys: { [APP_KEY]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [GW_KEY] });
  proxy = await startRecordingProxy(sim.port);
  ({ url: proxyUrl, seen } = proxy);
});

afterAll(async () => {
  await proxy?.close();
  await sim?.close();
});

beforeEach(() => {
  seen.length = 0;
  sim.resetRequests();
  sim.clearRedirects();
});

const client = () => proxiedUpstream(proxyUrl, { app: APP_KEY, gateway: GW_KEY });

/**
 * The path a decoding server routes a request line's target to, computed here apart from
 * src/upstream/decoded-path.ts: decoded until stable, `\` as `/`, dot segments removed by
 * WHATWG URL parsing. Undecodable paths stay as received.
 */
function routedPath(target: string): string {
  let p = target.split('?')[0] as string;
  for (let i = 0; i < 10; i++) {
    let next: string;
    try {
      next = decodeURIComponent(p);
    } catch {
      break;
    }
    if (next === p) break;
    p = next;
  }
  return new URL(p.replace(/\\/g, '/').replace(/\/{2,}/g, '/'), 'http://x.invalid').pathname;
}

type Via = 'redirect' | 'next link';
interface Row {
  via: Via;
  encoding: string;
  route: RouteName;
  params: Record<string, string>;
  /** The route's own path: the one request that may be seen. */
  own: string;
  /** The Location, or the next link, as upstream gives it. */
  given: string;
  /** The path it means to a decoding server: never requested. */
  target: string;
  /** For next links: in the body's `meta.next`, or in a `Link` header. */
  place?: 'meta.next' | 'Link';
}

const PUBLIC = { route: 'app.token' as const, params: { slug: 'aurora' }, own: '/api/v1/tokens/aurora' };
const PUBLIC_LIST = { route: 'app.tokens' as const, params: {}, own: '/api/v1/tokens' };
const BUNDLE = { route: 'app.bundle' as const, params: { slug: 'aurora' }, own: '/api/v1/tokens/aurora/full' };
const GATEWAY = { route: 'gateway.token' as const, params: { slug: 'aurora' }, own: '/v1/tokens/aurora' };
const GATEWAY_LIST = { route: 'gateway.tokens' as const, params: {}, own: '/v1/tokens' };

/** Each encoding: the path as given, on a public and on a keyed app target, and on the gateway. */
const ENCODINGS: { encoding: string; app: [string, string]; bundle: [string, string]; gateway: [string, string] }[] = [
  {
    encoding: '%69nternal',
    app: ['/api/v1/%69nternal/tokens', '/api/v1/internal/tokens'],
    bundle: ['/api/v1/%69nternal/tokens/aurora/full', '/api/v1/internal/tokens/aurora/full'],
    gateway: ['/v1/%69nternal/tokens', '/v1/internal/tokens'],
  },
  {
    encoding: '%2569nternal (double)',
    app: ['/api/v1/%2569nternal/tokens', '/api/v1/internal/tokens'],
    bundle: ['/api/v1/%2569nternal/tokens/aurora/full', '/api/v1/internal/tokens/aurora/full'],
    gateway: ['/v1/%2569nternal/tokens', '/v1/internal/tokens'],
  },
  {
    encoding: '%2e%2e/%2e%2e/ out of the prefix',
    app: ['/api/v1/tokens/aurora/%2e%2e/%2e%2e/%2e%2e/%2e%2e/admin', '/admin'],
    bundle: ['/api/v1/tokens/aurora/%2e%2e/%2e%2e/%2e%2e/%2e%2e/internal/tokens/aurora/full', '/internal/tokens/aurora/full'],
    gateway: ['/v1/tokens/aurora/%2e%2e/%2e%2e/%2e%2e/internal/tokens', '/internal/tokens'],
  },
  {
    encoding: '%252e%252e (double) out of the prefix',
    app: ['/api/v1/tokens/aurora/%252e%252e/%252e%252e/%252e%252e/internal/tokens', '/api/internal/tokens'],
    bundle: ['/api/v1/tokens/aurora/%252e%252e/%252e%252e/internal/tokens/aurora/full', '/api/v1/internal/tokens/aurora/full'],
    gateway: ['/v1/tokens/aurora/%252e%252e/%252e%252e/internal/tokens', '/v1/internal/tokens'],
  },
  {
    encoding: '%2F inside a segment',
    app: ['/api/v1/tokens/aurora%2F..%2F..%2Finternal%2Ftokens', '/api/v1/internal/tokens'],
    bundle: ['/api/v1/internal%2Ftokens/aurora/full', '/api/v1/internal/tokens/aurora/full'],
    gateway: ['/v1/tokens/aurora%2F..%2F..%2Finternal%2Ftokens', '/v1/internal/tokens'],
  },
  {
    encoding: 'backslash',
    app: ['/api/v1/tokens/aurora\\..\\..\\internal\\tokens', '/api/v1/internal/tokens'],
    bundle: ['/api/v1/tokens/aurora\\..\\..\\internal\\tokens\\aurora\\full', '/api/v1/internal/tokens/aurora/full'],
    gateway: ['/v1/tokens/aurora\\..\\..\\internal\\tokens', '/v1/internal/tokens'],
  },
  {
    encoding: '%5C (encoded backslash)',
    app: ['/api/v1/tokens/aurora%5C..%5C..%5Cinternal%5Ctokens', '/api/v1/internal/tokens'],
    bundle: ['/api/v1/tokens/aurora%5C..%5C..%5Cinternal%5Ctokens%5Caurora%5Cfull', '/api/v1/internal/tokens/aurora/full'],
    gateway: ['/v1/tokens/aurora%5C..%5C..%5Cinternal%5Ctokens', '/v1/internal/tokens'],
  },
  {
    encoding: 'plain ..',
    app: ['/api/v1/tokens/aurora/../../internal/tokens', '/api/v1/internal/tokens'],
    bundle: ['/api/v1/tokens/aurora/../../internal/tokens/aurora/full', '/api/v1/internal/tokens/aurora/full'],
    gateway: ['/v1/tokens/aurora/../../internal/tokens', '/v1/internal/tokens'],
  },
  {
    encoding: 'mixed case %2E%2e',
    app: ['/api/v1/tokens/aurora/%2E%2e/%2e%2E/internal/tokens', '/api/v1/internal/tokens'],
    bundle: ['/api/v1/tokens/aurora/%2E%2e/%2e%2E/internal/tokens/aurora/full', '/api/v1/internal/tokens/aurora/full'],
    gateway: ['/v1/tokens/aurora/%2E%2e/%2e%2E/internal/tokens', '/v1/internal/tokens'],
  },
  {
    // A keyed route's tail under a decoded private path: a path is a route whole or not at all.
    encoding: '%2569 before a keyed tail, double-encoded slash',
    app: ['/api/v1/%69nternal%252Ftokens', '/api/v1/internal/tokens'],
    bundle: ['/api/v1/tokens%252F..%252F%2569nternal/tokens/aurora/full', '/api/v1/internal/tokens/aurora/full'],
    gateway: ['/v1/tokens%252F..%252F%69nternal/tokens/aurora', '/v1/internal/tokens/aurora'],
  },
];

const ROWS: Row[] = ENCODINGS.flatMap((e) => [
  { via: 'redirect' as const, encoding: e.encoding, ...PUBLIC, given: e.app[0], target: e.app[1] },
  { via: 'redirect' as const, encoding: e.encoding, ...BUNDLE, given: e.bundle[0], target: e.bundle[1] },
  { via: 'redirect' as const, encoding: e.encoding, ...GATEWAY, given: e.gateway[0], target: e.gateway[1] },
  { via: 'next link' as const, encoding: e.encoding, ...PUBLIC_LIST, given: e.app[0], target: e.app[1], place: 'Link' as const },
  { via: 'next link' as const, encoding: e.encoding, ...BUNDLE, given: e.bundle[0], target: e.bundle[1], place: 'meta.next' as const },
  { via: 'next link' as const, encoding: e.encoding, ...GATEWAY_LIST, given: e.gateway[0], target: e.gateway[1], place: 'meta.next' as const },
]);

/** The key a route is sent with, or undefined for a public one. */
function keyOf(route: RouteName): string | undefined {
  return route === 'app.bundle' ? APP_KEY : route.startsWith('gateway.') ? GW_KEY : undefined;
}

function linkHeader(link: string): string {
  return `<${link}>; rel="next"`;
}

describe('the table holds what it claims', () => {
  it.each(ROWS.map((r) => [r.via, r.encoding, r.route, r.given, r]))('%s %s on %s: %s means a path that is not the one sent', (_v, _e, _r, _g, row) => {
    const sent = new URL(row.given, proxyUrl).pathname;
    // Every target is what a decoding server would route the URL to, and is not the route's own.
    expect(routedPath(sent)).toBe(row.target);
    expect(serverPath(sent)).toBe(row.target);
    expect(row.target).not.toBe(row.own);
  });
});

describe('a redirect whose decoded target is not the path it sends is never followed', () => {
  it.each(ROWS.filter((r) => r.via === 'redirect').map((r) => [r.encoding, r.route, r.given, r]))('%s on %s (Location %s)', async (_e, _r, _g, row) => {
    sim.script(row.own, [{ status: 307, headers: { Location: row.given } }]);
    const { upstream, recorder, lines } = client();
    const err = await upstream.get({ route: row.route, params: row.params }).catch((e: unknown) => e);

    // The resource failed with the redirect's own status, telling the target's host only.
    expect(err).toBeInstanceOf(ProblemError);
    const host = new URL(proxyUrl).host;
    expect(err).toMatchObject({ status: 307, path: row.own, title: expect.stringMatching(new RegExp(`^redirect to ${host.replace(/\./g, '\\.')} not followed: (off the route prefix|an unsafe path|not a route)$`)) });
    // The target was never requested: the proxy saw the route's own request and nothing else.
    expect(seen.some((s) => routedPath(s.path) === row.target)).toBe(false);
    expect(seen.map((s) => s.line)).toEqual([`GET ${row.own} HTTP/1.1`]);
    // The key went only with the route's own request, and only where the route needs it.
    expect(seen.filter((s) => s.authorization !== undefined).map((s) => [s.path, s.authorization])).toEqual(keyOf(row.route) ? [[row.own, `Bearer ${keyOf(row.route)}`]] : []);
    expect(recorder.requests.map((r) => [r.path, r.httpStatus])).toEqual([[row.own, 307]]);
    // Nothing of the Location but its host is told: not in the error, the request log or a log line.
    const told = JSON.stringify([String(err), err, recorder.requests, lines()]);
    expect(told).not.toContain(row.target);
    expect(told).not.toContain(JSON.stringify(row.given).slice(1, -1));
  });
});

describe('a next link whose decoded path is not the path it sends is never requested', () => {
  it.each(ROWS.filter((r) => r.via === 'next link').map((r) => [r.encoding, r.route, r.place, r.given, r]))('%s on %s (in %s: %s)', async (_e, _r, _p, _g, row) => {
    // Page 1 names the next page, as upstream gives it.
    if (row.place === 'Link') sim.script(row.own, [{ status: 200, headers: { Link: linkHeader(row.given) } }]);
    else sim.script(row.own, [{ status: 200, body: JSON.stringify({ data: [], meta: { next: row.given } }) }]);
    const { upstream } = client();
    const first = await upstream.get({ route: row.route, params: row.params });
    const next = chooseNext(readPageSignals(first.body, first.headers).nexts, first.path);
    expect(next).not.toBeNull();
    expect(next && 'link' in next).toBe(true);
    const link = (next as { link: string }).link;

    // The request for it (as fetch-list makes it: the link is the request) is refused before the wire.
    const req: UpstreamRequest = { route: row.route, params: row.params, link, linkOnly: true };
    await expect(upstream.get(req)).rejects.toBeInstanceOf(UnsafeRequestError);
    expect(seen.some((s) => routedPath(s.path) === row.target)).toBe(false);
    expect(seen.map((s) => s.line)).toEqual([`GET ${row.own} HTTP/1.1`]);
    expect(seen.filter((s) => s.authorization !== undefined).map((s) => [s.path, s.authorization])).toEqual(keyOf(row.route) ? [[row.own, `Bearer ${keyOf(row.route)}`]] : []);
  });
});

describe('what stays on the route is still followed', () => {
  it('redirect: a same-route 307 on a keyed gateway route is followed, with the key, to the path given', async () => {
    sim.script(GATEWAY.own, [{ status: 307, headers: { Location: '/v1/tokens/aurora?moved=1' } }]);
    const { upstream } = client();
    const res = await upstream.get({ route: GATEWAY.route, params: GATEWAY.params });
    expect(res).toMatchObject({ status: 200, path: GATEWAY.own });
    expect(seen.map((s) => [s.line, s.authorization])).toEqual([
      [`GET ${GATEWAY.own} HTTP/1.1`, `Bearer ${GW_KEY}`],
      ['GET /v1/tokens/aurora?moved=1 HTTP/1.1', `Bearer ${GW_KEY}`],
    ]);
  });

  it('next link: a next page on the same route (Link header) is requested as given, with the key', async () => {
    sim.script(GATEWAY_LIST.own, [{ status: 200, headers: { Link: linkHeader('/v1/tokens?page=2') } }]);
    const { upstream } = client();
    const first = await upstream.get({ route: GATEWAY_LIST.route });
    const next = chooseNext(readPageSignals(first.body, first.headers).nexts, first.path);
    expect(next).toEqual({ link: '/v1/tokens?page=2' });
    const res = await upstream.get({ route: GATEWAY_LIST.route, link: (next as { link: string }).link, linkOnly: true });
    expect(res).toMatchObject({ status: 200, path: '/v1/tokens?page=2' });
    expect(seen.map((s) => [s.line, s.authorization])).toEqual([
      [`GET ${GATEWAY_LIST.own} HTTP/1.1`, `Bearer ${GW_KEY}`],
      ['GET /v1/tokens?page=2 HTTP/1.1', `Bearer ${GW_KEY}`],
    ]);
  });
});

describe('the pure rules judge the decoded path', () => {
  const APP = 'http://app.test:8080';
  const from = new URL(`${APP}/api/v1/tokens/aurora/full`);

  it.each([
    ['/api/v1/%69nternal/tokens/aurora/full'],
    ['/api/v1/tokens/%61urora/full'],
    ['/api/v1/tokens%2Faurora/full'],
    ['/api/v1/x/%252e%252e/tokens/aurora/full'],
  ])('a bundle redirect to %s is no route: not followed, so no key goes there', (path) => {
    expect(resolveRedirect(APP, 'app.bundle', path, from)).toMatchObject({ follow: false });
  });

  it('the route a plain decoded path is, exactly, keeps its key rules (and the gateway on its routes)', () => {
    expect(resolveRedirect(APP, 'app.bundle', '/api/v1/tokens/a%3Ab/full', from)).toMatchObject({ follow: true, route: { auth: 'bearer', bucket: 'app-key' } });
    expect(routesAt('gateway', '/v1/tokens/aurora').map((m) => m.route.auth)).toEqual(['bearer']);
    expect(routesAt('gateway', '/v1/internal/tokens')).toEqual([]);
  });

  it('resolveRedirect and resolveLink refuse what decodes elsewhere, and take what is plain', () => {
    const r = (loc: string) => resolveRedirect(APP, 'app.bundle', loc, from);
    expect(r('/api/v1/%69nternal/tokens/aurora/full')).toMatchObject({ follow: false, host: 'app.test:8080', reason: 'off the route prefix' });
    expect(r('/api/v1/tokens/%61urora/full')).toMatchObject({ follow: false, host: 'app.test:8080', reason: 'an unsafe path' });
    expect(r('/api/v1/tokens/a%3Ab/full')).toMatchObject({ follow: true, route: { template: '/api/v1/tokens/{slug}/full' } });
    expect(resolveLink(APP, 'app.tokens', '/api/v1/%74okens')).toBeNull();
    expect(resolveLink(APP, 'app.tokens', '/api/v1/tokens?page=2')).toEqual({ params: {}, query: { page: '2' } });
    expect(resolveLink(APP, 'app.chart', '/api/v1/tokens/aurora/charts/a%3Ab')).toEqual({ params: { slug: 'aurora', chartKey: 'a:b' }, query: {} });
  });

  it('serverPath: decoded until stable, separators, dot segments; unreadable is null', () => {
    expect(serverPath('/a/%25252e%25252e/b')).toBe('/b');
    expect(serverPath('/a/%zz')).toBeNull();
    expect(serverPath('/a/%C3')).toBeNull();
    expect(serverPath('/a/%00b')).toBeNull();
    expect(serverPath(`/${'%25'.repeat(9)}41`)).toBeNull();
    expect(removeDotSegments('/a/b/c/./../../g')).toBe('/a/g');
    expect(removeDotSegments('/a/..')).toBe('/');
    expect(decodedBelow('/base/v1/tokens', '/base')).toEqual({ below: '/v1/tokens', plain: true });
    expect(decodedBelow('/base/v1/x/%2e%2e/%2e%2e/%2e%2e/etc', '/base')).toEqual({ below: null, plain: false });
    expect(decodedBelow('/base/v1/%74okens', '/base')).toEqual({ below: '/v1/tokens', plain: false });
  });
});
