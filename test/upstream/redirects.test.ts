// Where a redirect may take a request: pure functions, no IO.
import { describe, expect, it } from 'vitest';
import { FOLLOWED_REDIRECTS, hopSending, isFollowedRedirect, nextHop, redirectRefused, sendingOf, targetHost } from '../../src/upstream/redirects.ts';
import { ROUTES, rulesAt } from '../../src/upstream/routes.ts';
import { resolveRedirect } from '../../src/upstream/safe-url.ts';

const APP = 'http://app.test:8080';
const GW = 'https://gw.test/base';
const KEY = 'te_secret_key_123456';
const chartFrom = new URL(`${APP}/api/v1/tokens/aurora/charts/revenue?limit=5`);
const gwFrom = new URL(`${GW}/v1/tokens/aurora/charts/fees`);

const follow = (location: string, from = chartFrom, base = APP, route: keyof typeof ROUTES = 'app.chart') => {
  const r = resolveRedirect(base, route, location, from, [KEY]);
  return r.follow ? r.url.href : `refused: ${r.host}: ${r.reason}`;
};

describe('resolveRedirect', () => {
  it.each([
    ['/api/v1/moved/tokens/aurora/charts/revenue?limit=5', `${APP}/api/v1/moved/tokens/aurora/charts/revenue?limit=5`],
    ['revenue-v2', `${APP}/api/v1/tokens/aurora/charts/revenue-v2`],
    ['../charts/revenue/', `${APP}/api/v1/tokens/aurora/charts/revenue/`],
    [`${APP}/api/v1/charts/aurora/revenue`, `${APP}/api/v1/charts/aurora/revenue`],
    ['HTTP://APP.TEST:8080/api/v1/tokens/aurora/charts/revenue?v=2#frag', `${APP}/api/v1/tokens/aurora/charts/revenue?v=2`],
    ['/api/v1/tokens/aurora/charts/rev%2Dnue', `${APP}/api/v1/tokens/aurora/charts/rev%2Dnue`],
  ])('follows %s (same origin, below the API prefix)', (location, href) => {
    expect(follow(location)).toBe(href);
  });

  it.each([
    ['http://evil.test/api/v1/tokens/aurora/charts/revenue?key=x', 'evil.test', 'off the base URL'],
    ['//evil.test:9000/api/v1/tokens', 'evil.test:9000', 'off the base URL'],
    ['https://app.test:8080/api/v1/tokens', 'app.test:8080', 'off the base URL'],
    ['http://app.test:8081/api/v1/tokens', 'app.test:8081', 'off the base URL'],
    ['http://user:pw@app.test:8080/api/v1/tokens', 'app.test:8080', 'credentials in the Location'],
    ['/api/v2/tokens/aurora', 'app.test:8080', 'off the route prefix'],
    ['/v1/tokens/aurora', 'app.test:8080', 'off the route prefix'],
    ['/api/v1/internal/keys', 'app.test:8080', 'off the route prefix'],
    ['/api/v1/INTERNAL/keys', 'app.test:8080', 'off the route prefix'],
    ['/api/v1/tokens/../../v1/internal/x', 'app.test:8080', 'off the route prefix'],
    ['/api/v1/tokens/%2e%2e/internal/x', 'app.test:8080', 'off the route prefix'],
    ['/api/v1/tokens/a%2Fb/charts', 'app.test:8080', 'an unsafe path'],
    ['/api/v1/tokens//charts', 'app.test:8080', 'an unsafe path'],
    ['/api/v1/tokens/%E2%82%AC', 'app.test:8080', 'an unsafe path'],
    ['/api/v1/tokens?bad%20key=1', 'app.test:8080', 'an unsafe query'],
    [`/api/v1/tokens/aurora?token=${KEY}`, 'app.test:8080', 'a key in the Location'],
    [`/api/v1/tokens/aurora?token=${encodeURIComponent(KEY).replace('_', '%5F')}`, 'app.test:8080', 'a key in the Location'],
    ['javascript:alert(1)', 'javascript:', 'off the base URL'],
    ['', 'nowhere', 'no Location'],
    ['http://[::1', 'unknown', 'unreadable Location'],
    [`/api/v1/${'a'.repeat(3000)}`, 'unknown', 'Location too long'],
  ])('refuses %s, telling only the host', (location, host, reason) => {
    expect(follow(location)).toBe(`refused: ${host}: ${reason}`);
  });

  it('respects a base URL with a path: the prefix is below it', () => {
    expect(follow('/base/v1/moved/tokens/aurora/charts/fees', gwFrom, GW, 'gateway.chart')).toBe(`${GW}/v1/moved/tokens/aurora/charts/fees`);
    expect(follow('/v1/tokens/aurora/charts/fees', gwFrom, GW, 'gateway.chart')).toBe('refused: gw.test: off the route prefix');
    expect(follow('/base/api/v1/tokens', gwFrom, GW, 'gateway.chart')).toBe('refused: gw.test: off the route prefix');
  });

  it('the OpenAPI document (outside the prefix) may move only to itself', () => {
    const from = new URL(`${GW}/openapi-product.json`);
    expect(follow('/base/openapi-product.json?v=2', from, GW, 'gateway.openapi')).toBe(`${GW}/openapi-product.json?v=2`);
    expect(follow('/base/v1/tokens', from, GW, 'gateway.openapi')).toBe('refused: gw.test: off the route prefix');
  });

  it('a missing Location is refused', () => {
    expect(resolveRedirect(APP, 'app.chart', null, chartFrom)).toEqual({ follow: false, host: 'nowhere', reason: 'no Location' });
  });
});

describe('nextHop', () => {
  const base = { baseUrl: APP, route: ROUTES['app.chart'], from: chartFrom, secrets: [KEY], hops: 0, maxHops: 2, sent: sendingOf(ROUTES['app.chart']) };

  it('follows a new target within the bound', () => {
    const hop = nextHop({ ...base, location: '/api/v1/moved/tokens/aurora/charts/revenue', visited: new Set([chartFrom.href]) });
    expect('url' in hop && hop.url.pathname).toBe('/api/v1/moved/tokens/aurora/charts/revenue');
    expect(hop).toMatchObject({ keyed: false, bucket: 'app-public' });
  });

  it("goes with the key rules of the target's path, below a base URL with a path too", () => {
    const bundle = new URL(`${GW}/api/v1/tokens/aurora/full`);
    const hop = (location: string, route: keyof typeof ROUTES, from: URL) => {
      const h = nextHop({ ...base, baseUrl: GW, route: ROUTES[route], from, location, visited: new Set(), sent: sendingOf(ROUTES[route]) });
      return 'url' in h ? [h.url.pathname, h.keyed, h.bucket] : h;
    };
    expect(hop('/base/api/v1/tokens/aurora', 'app.bundle', bundle)).toEqual(['/base/api/v1/tokens/aurora', false, 'app-public']);
    expect(hop('/base/api/v1/moved/tokens/aurora/full', 'app.bundle', bundle)).toEqual(['/base/api/v1/moved/tokens/aurora/full', true, 'app-key']);
    expect(hop('/base/api/v1/tokens/aurora/full', 'app.token', new URL(`${GW}/api/v1/tokens/aurora`))).toEqual(['/base/api/v1/tokens/aurora/full', false, 'app-public']);
    expect(hop('/base/v1/moved/tokens/aurora/charts', 'gateway.charts', new URL(`${GW}/v1/tokens/aurora/charts`))).toEqual(['/base/v1/moved/tokens/aurora/charts', true, 'gateway']);
  });

  it('refuses a target already requested in this attempt (a loop), even when it differs only by fragment', () => {
    expect(nextHop({ ...base, location: `${chartFrom.href}#x`, visited: new Set([chartFrom.href]) })).toEqual({ host: 'app.test:8080', reason: 'a redirect loop' });
  });

  it('refuses one hop more than the bound', () => {
    expect(nextHop({ ...base, location: '/api/v1/a', visited: new Set(), hops: 2 })).toEqual({ host: 'app.test:8080', reason: 'more than 2 redirects' });
  });
});

describe('key rules of a path', () => {
  it('are those of the route the path stands for, its template at the end of the path', () => {
    expect(rulesAt('app', '/api/v1/tokens/aurora/full')).toEqual({ auth: 'bearer', bucket: 'app-key' });
    expect(rulesAt('app', '/api/v1/tokens/aurora/full/')).toEqual({ auth: 'bearer', bucket: 'app-key' });
    expect(rulesAt('app', '/api/v1/v2/tokens/aurora/full')).toEqual({ auth: 'bearer', bucket: 'app-key' });
    // A token slugged `full` is a token, not a bundle.
    expect(rulesAt('app', '/api/v1/tokens/full')).toEqual({ auth: 'none', bucket: 'app-public' });
    expect(rulesAt('app', '/api/v1/tokens/aurora/charts/full')).toEqual({ auth: 'none', bucket: 'app-public' });
    expect(rulesAt('app', '/api/v1/tokens/aurora')).toEqual({ auth: 'none', bucket: 'app-public' });
  });

  it('on a path no route stands for: what every route of the source gets, else no key', () => {
    expect(rulesAt('app', '/api/v1/elsewhere')).toEqual({ auth: 'none', bucket: 'app-public' });
    expect(rulesAt('app', '/full')).toEqual({ auth: 'none', bucket: 'app-public' });
    expect(rulesAt('gateway', '/v1/elsewhere')).toEqual({ auth: 'bearer', bucket: 'gateway' });
  });

  it('a request never gains the key on the way, and a keyless one stays on its bucket', () => {
    const keyed = sendingOf(ROUTES['app.bundle']);
    const keyless = sendingOf(ROUTES['app.token']);
    expect(keyed).toEqual({ keyed: true, bucket: 'app-key' });
    expect(hopSending(keyed, 'app', '/api/v1/tokens/aurora')).toEqual({ keyed: false, bucket: 'app-public' });
    expect(hopSending(keyed, 'app', '/api/v1/tokens/cobalt/full')).toEqual({ keyed: true, bucket: 'app-key' });
    expect(hopSending(keyless, 'app', '/api/v1/tokens/aurora/full')).toEqual({ keyed: false, bucket: 'app-public' });
    expect(hopSending(sendingOf(ROUTES['gateway.token']), 'gateway', '/v1/tokens/aurora/charts')).toEqual({ keyed: true, bucket: 'gateway' });
  });
});

describe('statuses and the refusal', () => {
  it('follows 301, 302, 303, 307, 308 and nothing else', () => {
    expect([...FOLLOWED_REDIRECTS].sort()).toEqual([301, 302, 303, 307, 308]);
    for (const s of [300, 304, 305, 306, 200, 404]) expect(isFollowedRedirect(s)).toBe(false);
  });

  it('targetHost tells the host only, relative or absolute', () => {
    expect(targetHost(`http://evil.test:81/x?key=${KEY}`, chartFrom)).toBe('evil.test:81');
    expect(targetHost('/elsewhere', chartFrom)).toBe('app.test:8080');
    expect(targetHost(null, chartFrom)).toBe('nowhere');
    expect(targetHost('http://[::1', chartFrom)).toBe('unknown');
  });

  it('the problem carries the status, the request id and the host, nothing of the body or the target path', () => {
    const headers = new Headers({ 'x-request-id': 'r-1', location: `http://evil.test/x?key=${KEY}` });
    const p = redirectRefused({ status: 302, headers }, '/v1/tokens', { host: 'evil.test', reason: 'off the base URL' });
    expect(p).toMatchObject({ status: 302, requestId: 'r-1', path: '/v1/tokens', title: 'redirect to evil.test not followed: off the base URL', detail: undefined });
    expect(JSON.stringify(p)).not.toContain(KEY);
    expect(JSON.stringify(p)).not.toContain('/x');
  });
});
