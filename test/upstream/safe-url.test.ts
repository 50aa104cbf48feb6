import { describe, expect, it } from 'vitest';
import { UnsafeRequestError } from '../../src/lib/errors.ts';
import { buildUrl, pathOf, pathParam, resolveLink } from '../../src/upstream/safe-url.ts';
import { ROUTES } from '../../src/upstream/routes.ts';

const APP = 'http://app.test:8080';
const GW = 'https://gw.test';

describe('pathParam', () => {
  it.each(['aave', 'uniswap-v3', 'Token_1', 'a.b', 'x~y', 'revenue:daily', 'a'.repeat(128)])('accepts %s', (v) => {
    expect(pathParam(v)).toBe(encodeURIComponent(v));
  });

  it.each([
    ['.'],
    ['..'],
    ['%2e%2e'],
    ['%2E%2E'],
    ['a/b'],
    ['a\\b'],
    ['?x=1'],
    ['a?x=1'],
    ['#'],
    ['a#b'],
    [''],
    ['a'.repeat(129)],
    ['a'.repeat(10_000)],
    ['a%2fb'],
    ['a b'],
    ['a\nb'],
    ['a\u0000'],
    ['-rf'],
    ['é'],
    [undefined],
    [42],
  ])('rejects %j', (v) => {
    expect(() => pathParam(v)).toThrow(UnsafeRequestError);
  });

  it('does not echo a huge value in its message', () => {
    try {
      pathParam('x/'.repeat(5000));
    } catch (err) {
      expect((err as Error).message.length).toBeLessThan(200);
    }
  });
});

describe('buildUrl', () => {
  it('builds the documented path with encoded params and sorted query', () => {
    const url = buildUrl(APP, 'app.history', { slug: 'aave' }, { stream: 'all', metrics: 'erm30d,effectiveMarketCap', skip: undefined });
    expect(url.origin).toBe(APP);
    expect(pathOf(url)).toBe('/api/v1/tokens/aave/metrics/history?metrics=erm30d%2CeffectiveMarketCap&stream=all');
  });

  it('keeps a base path prefix', () => {
    expect(pathOf(buildUrl('https://host.test/prefix', 'gateway.chart', { slug: 'a', chartKey: 'tvl:1' }))).toBe('/prefix/v1/tokens/a/charts/tvl%3A1');
    expect(pathOf(buildUrl(GW, 'gateway.openapi'))).toBe('/openapi-product.json');
  });

  it('refuses missing, unknown and hostile params', () => {
    expect(() => buildUrl(APP, 'app.token', {})).toThrow(UnsafeRequestError);
    expect(() => buildUrl(APP, 'app.token', { slug: 'a', other: 'b' })).toThrow(UnsafeRequestError);
    expect(() => buildUrl(APP, 'app.token', { slug: '..' })).toThrow(UnsafeRequestError);
    expect(() => buildUrl(APP, 'app.chart', { slug: 'a', chartKey: '../../../v1/internal/x' })).toThrow(UnsafeRequestError);
  });

  it('refuses odd query names and absurd values', () => {
    expect(() => buildUrl(APP, 'app.screener', {}, { 'a b': '1' })).toThrow(UnsafeRequestError);
    expect(() => buildUrl(APP, 'app.screener', {}, { sort: 'x'.repeat(5000) })).toThrow(UnsafeRequestError);
  });

  it('encodes query values rather than letting them break out', () => {
    expect(pathOf(buildUrl(APP, 'app.screener', {}, { sort: '-x&admin=1#frag' }))).toBe('/api/v1/screener?sort=-x%26admin%3D1%23frag');
  });

  it('refuses a private route even when handed one', () => {
    expect(() => buildUrl(GW, { source: 'gateway', template: '/v1/internal/tokens', auth: 'bearer', bucket: 'gateway' })).toThrow(UnsafeRequestError);
  });

  it('the routes table has no private route and keys only where due', () => {
    for (const [name, r] of Object.entries(ROUTES)) {
      expect(r.template.includes('/internal')).toBe(false);
      if (r.source === 'app') expect(r.auth === 'bearer').toBe(name === 'app.bundle');
      else expect(r.auth).toBe('bearer');
    }
  });
});

describe('resolveLink', () => {
  it('accepts a same-origin link that matches the route', () => {
    expect(resolveLink(APP, 'app.chart', '/api/v1/tokens/aave/charts/tvl')).toEqual({ params: { slug: 'aave', chartKey: 'tvl' }, query: {} });
    expect(resolveLink(GW, 'gateway.chart', 'https://gw.test/v1/tokens/aave/charts/fees?timeframe=30d', { slug: 'aave' })).toEqual({
      params: { slug: 'aave', chartKey: 'fees' },
      query: { timeframe: '30d' },
    });
    expect(resolveLink('https://host.test/prefix', 'gateway.chart', '/prefix/v1/tokens/a/charts/b')).toEqual({ params: { slug: 'a', chartKey: 'b' }, query: {} });
  });

  it("keeps a JSON:API page member in a list's next link, and builds it back encoded", () => {
    const link = resolveLink(GW, 'gateway.tokens', 'https://gw.test/v1/tokens?page[number]=2&page%5Bsize%5D=7');
    expect(link).toEqual({ params: {}, query: { 'page[number]': '2', 'page[size]': '7' } });
    expect(pathOf(buildUrl(GW, 'gateway.tokens', link!.params, link!.query))).toBe('/v1/tokens?page%5Bnumber%5D=2&page%5Bsize%5D=7');
    expect(resolveLink(GW, 'gateway.tokens', 'https://gw.test/v1/tokens?page[a][b]=2')).toBeNull();
    expect(resolveLink(GW, 'gateway.tokens', 'https://gw.test/v1/tokens?[x]=2')).toBeNull();
  });

  it.each([
    ['another host', 'https://evil.test/v1/tokens/aave/charts/fees'],
    ['another scheme', 'http://gw.test/v1/tokens/aave/charts/fees'],
    ['another port', 'https://gw.test:444/v1/tokens/aave/charts/fees'],
    ['protocol-relative', '//evil.test/v1/tokens/aave/charts/fees'],
    ['credentials', 'https://user:pw@gw.test/v1/tokens/aave/charts/fees'],
    ['private route', '/v1/internal/tokens/aave/charts/fees'],
    ['dot segments into private', '/v1/tokens/aave/charts/../../../internal/charts'],
    ['encoded dots', '/v1/tokens/aave/charts/%2e%2e'],
    ['encoded slash', '/v1/tokens/aave/charts/a%2Fb'],
    ['another route', '/v1/tokens/aave'],
    ['a longer path', '/v1/tokens/aave/charts/fees/extra'],
    ['another token than expected', '/v1/tokens/other/charts/fees'],
    ['javascript', 'javascript:alert(1)'],
    ['empty', ''],
    ['huge', `/v1/tokens/aave/charts/${'a'.repeat(5000)}`],
  ])('refuses %s', (_what, link) => {
    expect(resolveLink(GW, 'gateway.chart', link, { slug: 'aave' })).toBeNull();
  });

  it('refuses a link below another base path', () => {
    expect(resolveLink('https://host.test/prefix', 'gateway.chart', '/v1/tokens/a/charts/b')).toBeNull();
  });
});
