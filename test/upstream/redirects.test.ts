// Where a redirect may take a request: pure functions, no IO.
import { describe, expect, it } from 'vitest';
import { FOLLOWED_REDIRECTS, hopSending, isFollowedRedirect, nextHop, redirectRefused, sendingOf, targetHost } from '../../src/upstream/redirects.ts';
import { matchTemplate, ROUTES, routesAt } from '../../src/upstream/routes.ts';
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
    ['/api/v1/tokens/aurora/charts/revenue?limit=5&moved=1', `${APP}/api/v1/tokens/aurora/charts/revenue?limit=5&moved=1`],
    ['revenue-v2', `${APP}/api/v1/tokens/aurora/charts/revenue-v2`],
    ['../charts/revenue', `${APP}/api/v1/tokens/aurora/charts/revenue`],
    ['/api/v1/tokens/aurora', `${APP}/api/v1/tokens/aurora`],
    ['HTTP://APP.TEST:8080/api/v1/tokens/aurora/charts/revenue?v=2#frag', `${APP}/api/v1/tokens/aurora/charts/revenue?v=2`],
    ['/api/v1/tokens/aurora/charts/rev%2Dnue', `${APP}/api/v1/tokens/aurora/charts/rev%2Dnue`],
    ['/api/v1/tokens/aurora/charts/a%3Ab', `${APP}/api/v1/tokens/aurora/charts/a%3Ab`],
  ])('follows %s (same origin, exactly a route of the seeds)', (location, href) => {
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
    ['/api/v1/moved/tokens/aurora/charts/revenue', 'app.test:8080', 'not a route'],
    ['../charts/revenue/', 'app.test:8080', 'not a route'],
    ['http://app.test:8080/api/v1/charts/aurora/revenue', 'app.test:8080', 'not a route'],
    ['/api/v1/Tokens/aurora', 'app.test:8080', 'not a route'],
    ['/api/v1/tokens\\aurora', 'app.test:8080', 'an unsafe path'],
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
    expect(follow('/base/v1/tokens/aurora/charts/fees?moved=1', gwFrom, GW, 'gateway.chart')).toBe(`${GW}/v1/tokens/aurora/charts/fees?moved=1`);
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
    const hop = nextHop({ ...base, location: '/api/v1/tokens/aurora/charts/revenue?moved=1', visited: new Set([chartFrom.href]) });
    expect('url' in hop && hop.url.href).toBe(`${APP}/api/v1/tokens/aurora/charts/revenue?moved=1`);
    expect(hop).toMatchObject({ keyed: false, bucket: 'app-public' });
  });

  it('goes with the key rules of the exact route it goes to, below a base URL with a path too', () => {
    const bundle = new URL(`${GW}/api/v1/tokens/aurora/full`);
    const hop = (location: string, route: keyof typeof ROUTES, from: URL) => {
      const h = nextHop({ ...base, baseUrl: GW, route: ROUTES[route], from, location, visited: new Set(), sent: sendingOf(ROUTES[route]) });
      return 'url' in h ? [h.url.pathname, h.keyed, h.bucket] : h;
    };
    expect(hop('/base/api/v1/tokens/aurora', 'app.bundle', bundle)).toEqual(['/base/api/v1/tokens/aurora', false, 'app-public']);
    expect(hop('/base/api/v1/tokens/aurora/full?v=2', 'app.bundle', bundle)).toEqual(['/base/api/v1/tokens/aurora/full', true, 'app-key']);
    expect(hop('/base/api/v1/tokens/aurora/full', 'app.token', new URL(`${GW}/api/v1/tokens/aurora`))).toEqual(['/base/api/v1/tokens/aurora/full', false, 'app-public']);
    expect(hop('/base/v1/tokens/aurora/charts?moved=1', 'gateway.charts', new URL(`${GW}/v1/tokens/aurora/charts`))).toEqual(['/base/v1/tokens/aurora/charts', true, 'gateway']);
    // A moved path no route stands for gets no rules at all: it is not requested.
    expect(hop('/base/api/v1/moved/tokens/aurora/full', 'app.bundle', bundle)).toEqual({ host: 'gw.test', reason: 'not a route' });
  });

  it('refuses a target already requested in this attempt (a loop), even when it differs only by fragment', () => {
    expect(nextHop({ ...base, location: `${chartFrom.href}#x`, visited: new Set([chartFrom.href]) })).toEqual({ host: 'app.test:8080', reason: 'a redirect loop' });
  });

  it('refuses one hop more than the bound', () => {
    expect(nextHop({ ...base, location: '/api/v1/metrics', visited: new Set(), hops: 2 })).toEqual({ host: 'app.test:8080', reason: 'more than 2 redirects' });
  });
});

describe('the route a path is, exactly', () => {
  it('matchTemplate: fixed segments exactly, a parameter one non-empty segment, nothing more or less', () => {
    const t = '/api/v1/tokens/{slug}/full';
    expect(matchTemplate(t, '/api/v1/tokens/aurora/full')).toEqual({ slug: 'aurora' });
    expect(matchTemplate('/v1/tokens', '/v1/tokens')).toEqual({});
    for (const path of ['/api/v1/tokens/aurora/full/', '/api/v1/tokens//full', '/api/v1/v2/tokens/aurora/full', '/api/v1/moved/tokens/aurora/full', '/api/v1/tokens/aurora/Full', '/API/v1/tokens/aurora/full', '/api/v1/tokens/aurora/full.', '/api/v1/tokens/aurora', 'api/v1/tokens/aurora/full']) {
      expect(matchTemplate(t, path), path).toBeNull();
    }
  });

  it('routesAt: every template of the table, filled, is that route and no other', () => {
    for (const [name, route] of Object.entries(ROUTES)) {
      const path = route.template.replace(/\{[A-Za-z]+\}/g, 'full');
      expect(routesAt(route.source, path).map((m) => m.route), name).toEqual([route]);
    }
    // A token slugged `full` is a token, not a bundle; a chart keyed `full` a chart.
    expect(routesAt('app', '/api/v1/tokens/full').map((m) => m.route)).toEqual([ROUTES['app.token']]);
    expect(routesAt('app', '/api/v1/tokens/aurora/charts/full').map((m) => m.route)).toEqual([ROUTES['app.chart']]);
    // No tail matching: a route's template at the end of a longer path is no route.
    expect(routesAt('app', '/api/v1/v2/tokens/aurora/full')).toEqual([]);
    expect(routesAt('gateway', '/v1/elsewhere')).toEqual([]);
    expect(routesAt('gateway', '/api/v1/tokens')).toEqual([]);
  });

  it('a request never gains the key on the way, and a keyless one stays on its bucket', () => {
    const keyed = sendingOf(ROUTES['app.bundle']);
    const keyless = sendingOf(ROUTES['app.token']);
    expect(keyed).toEqual({ keyed: true, bucket: 'app-key' });
    expect(hopSending(keyed, ROUTES['app.token'])).toEqual({ keyed: false, bucket: 'app-public' });
    expect(hopSending(keyed, ROUTES['app.bundle'])).toEqual({ keyed: true, bucket: 'app-key' });
    expect(hopSending(keyless, ROUTES['app.bundle'])).toEqual({ keyed: false, bucket: 'app-public' });
    expect(hopSending(sendingOf(ROUTES['gateway.token']), ROUTES['gateway.charts'])).toEqual({ keyed: true, bucket: 'gateway' });
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
