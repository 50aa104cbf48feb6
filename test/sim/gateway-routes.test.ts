// The simulator's gateway (/v1 and /openapi-product.json) over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { get } from './support.ts';

let sim: Simulator;
const auth = { authorization: 'Bearer gw-key' };
const gw = (path: string, headers: Record<string, string> = auth) => get(`${sim.url}/v1${path}`, headers);
const DECIMAL = /^-?(0|[1-9]\d*)(\.\d*[1-9])?$/;

beforeAll(async () => {
  sim = await startSimulator({ gatewayKeys: ['gw-key'] });
});
afterAll(async () => {
  await sim.close();
});

function expectProblem(r: Awaited<ReturnType<typeof get>>, status: number, code: string, instance?: string): void {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toBe('application/problem+json');
  expect(r.json).toMatchObject({ status, code, type: expect.any(String), title: expect.any(String), detail: expect.any(String) });
  expect(r.json.instance).toMatch(/^\/v1(\/|$)/);
  expect(r.json.instance).not.toMatch(/^\/v1\/internal/);
  if (instance) expect(r.json.instance).toBe(instance);
}

function expectGatewayHeaders(r: Awaited<ReturnType<typeof get>>): void {
  for (const h of ['x-request-id', 'x-service-source', 'cache-control', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(r.headers.get(h), h).toBeTruthy();
}

describe('gateway auth', () => {
  it('401s every product route without a valid Bearer key', async () => {
    for (const p of ['/tokens', '/screener', '/tokens/aurora', '/tokens/aurora/metrics/history', '/tokens/aurora/charts', '/tokens/aurora/charts/revenue-by-stream']) {
      const none = await gw(p, {});
      expectProblem(none, 401, 'unauthorized', `/v1${p}`);
      expectGatewayHeaders(none);
      expectProblem(await gw(p, { authorization: 'Bearer nope' }), 401, 'unauthorized');
    }
  });
});

describe('gateway product routes', () => {
  it('lists the token catalog', async () => {
    const r = await gw('/tokens');
    expect(r.status).toBe(200);
    expectGatewayHeaders(r);
    expect(r.headers.get('x-service-source')).toBe('token_catalog');
    expect(r.json.data).toEqual(sim.data.gatewayTokens());
    expect(r.json.meta).toMatchObject({ count: r.json.data.length, asOf: sim.data.asOf, source: { type: expect.any(String), surface: 'token_catalog', backing: expect.any(String), chartKey: null, timeframe: null } });
    expect(r.json.data[0]).toEqual({ slug: 'aurora', symbol: 'AUR', name: 'Aurora', href: '/v1/tokens/aurora' });
  });

  it('serves screener rows with decimal strings and insights', async () => {
    const r = await gw('/screener');
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(['data', 'insights', 'meta']);
    expect(r.json.insights.length).toBeGreaterThan(0);
    for (const i of r.json.insights) expect(typeof i.id).toBe('string');
    expect(r.json.meta.count).toBe(r.json.data.length);
    const row = r.json.data[0];
    for (const f of ['slug', 'priceUsd', 'mcap', 'effMcap', 'effRatio', 'revAnnualized', 'multAnnualized', 'windows', 'streams', 'dataFreshness', 'fcfMomentum']) expect(row, f).toHaveProperty(f);
    expect(Object.keys(row.windows)).toEqual(['7d', '30d', '90d', '180d', '365d']);
    expect(Object.keys(row.windows['30d'])).toEqual(['rev', 'mult']);
    const strings: string[] = [];
    for (const x of r.json.data) {
      for (const f of ['priceUsd', 'mcap', 'effMcap', 'effRatio', 'revAnnualized', 'multAnnualized', 'fcfMomentum']) if (x[f] !== null) strings.push(x[f]);
      for (const w of Object.values(x.windows) as { rev: string | null; mult: string | null }[]) for (const v of [w.rev, w.mult]) if (v !== null) strings.push(v);
    }
    for (const s of strings) expect(s).toMatch(DECIMAL);
    expect(strings.some((s) => s.startsWith('-'))).toBe(true);
    expect(strings).toContain('0');
    expect(strings.some((s) => /^\d{24,}\.\d+$/.test(s))).toBe(true);
    expect(r.json.data.map((x: any) => x.slug)).toEqual(sim.data.gatewayScreenerRows().map((x) => x.slug));
    expect(r.json.data.some((x: any) => x.slug === 'rocket-fuel')).toBe(false);
  });

  it('serves the token page shell, 404s uncovered tokens and 400s bad slugs', async () => {
    const r = await gw('/tokens/aurora');
    expect(r.status).toBe(200);
    const d = r.json.data;
    expect(d.meta).toMatchObject({ tokenId: expect.any(Number), symbol: 'AUR', name: 'Aurora', slug: 'aurora', chain: expect.any(String), protocolType: expect.any(String), imageUrl: expect.any(String) });
    expect(Number.isInteger(d.meta.tokenId)).toBe(true);
    expect(Object.keys(d.combinedRevenue)).toEqual(['annualized', 'allTime', 'deltaPct', 'deltaAbs']);
    expect(d.sections.trend).toEqual({ supported: true, state: 'ready', reason: null, asOf: expect.any(String) });
    expect(d.sections.charts.supported).toBe(true);
    for (const f of ['chartDefs', 'kpis', 'revenueFunctions', 'fundamentals', 'methodology', 'verification']) expect(d, f).toHaveProperty(f);
    expect(d).toEqual(sim.data.gatewayPage('aurora'));
    const noTrend = await gw('/tokens/bobby-tables');
    expect(noTrend.json.data.sections.trend).toMatchObject({ supported: false, state: 'unsupported', reason: expect.any(String), asOf: null });
    expectProblem(await gw('/tokens/nope'), 404, 'token-not-found', '/v1/tokens/nope');
    expectProblem(await gw('/tokens/rocket-fuel'), 404, 'token-not-found');
    expectProblem(await gw('/tokens/Bad_Slug!'), 400, 'invalid-parameter');
    expectProblem(await gw('/tokens/a..b'), 400, 'invalid-parameter');
  });

  it('serves trends per period, null when not materialized, 400 for bad periods', async () => {
    const def = await gw('/tokens/aurora/metrics/history');
    expect(def.status).toBe(200);
    expect(def.json.data.times).toHaveLength(30);
    expect(def.json.meta.source.timeframe).toBe('30d');
    for (const [period, n] of [['7d', 7], ['90d', 90], ['1y', 120], ['365d', 120]] as const) {
      const r = await gw(`/tokens/aurora/metrics/history?period=${period}`);
      expect(r.json.data.times).toHaveLength(n);
      expect(r.json.data.times.at(-1)).toBe('2026-06-30');
      expect(r.json.meta.asOf).toBe('2026-06-30');
      expect(r.json.meta.source).toMatchObject({ surface: 'token_trend', timeframe: period });
      for (const s of r.json.data.series) {
        expect(s.values).toHaveLength(n);
        for (const v of s.values) if (v !== null) expect(v).toMatch(DECIMAL);
      }
      expect(r.json.data).toEqual(sim.data.gatewayTrend('aurora', period));
    }
    const none = await gw('/tokens/bobby-tables/metrics/history?period=30d');
    expect(none.status).toBe(200);
    expect(none.json.data).toBeNull();
    expect(none.json.meta.asOf).toBeTruthy();
    expect(none.json.meta.source.timeframe).toBe('30d');
    expect((await gw('/tokens/basalt-finance/metrics/history?period=180d')).json.data).toBeNull();
    expectProblem(await gw('/tokens/aurora/metrics/history?period=2w'), 400, 'invalid-parameter');
  });

  it('serves chart catalogs and chart items per supported timeframe', async () => {
    const cat = await gw('/tokens/aurora/charts');
    expect(cat.status).toBe(200);
    expect(cat.json.data).toHaveLength(3);
    for (const item of cat.json.data) {
      expect(item).toEqual({ key: expect.any(String), title: expect.any(String), timeframes: expect.any(Array), href: `/v1/tokens/aurora/charts/${item.key}` });
      for (const tf of item.timeframes) {
        const r = await get(`${sim.url}${item.href}?timeframe=${tf}`, auth);
        expect(r.status, `${item.key} ${tf}`).toBe(200);
        const c = r.json.data;
        expect(c).toMatchObject({ id: item.key, type: 'combo', currentTimeframe: tf, config: { title: item.title } });
        expect(r.json.meta.source).toMatchObject({ chartKey: item.key, timeframe: tf });
        const keys = c.config.series.map((s: any) => s.key);
        for (const s of c.config.series) expect(['line', 'bar']).toContain(s.render);
        for (const row of c.data) {
          expect(Object.keys(row)).toEqual(['timestamp', ...keys]);
          expect(row.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}$/);
          for (const k of keys) if (row[k] !== null) expect(row[k]).toMatch(DECIMAL);
        }
        expect(c.dataFrom).toBe(c.data[0].timestamp);
        expect(c.dataThrough).toBe(c.data.at(-1).timestamp);
      }
      const unsupported = ['7d', '30d', '90d', '180d', '365d', '1y', 'all'].find((tf) => !item.timeframes.includes(tf));
      if (unsupported) expectProblem(await get(`${sim.url}${item.href}?timeframe=${unsupported}`, auth), 400, 'invalid-parameter');
    }
    const first = cat.json.data[0].key;
    expectProblem(await gw(`/tokens/aurora/charts/${first}?timeframe=2w`), 400, 'invalid-parameter');
    expectProblem(await gw('/tokens/aurora/charts/nope'), 404, 'chart-item-not-found');
    expectProblem(await gw('/tokens/aurora/charts/Bad%20Key'), 400, 'invalid-parameter');
    expect((await gw('/tokens/bobby-tables/charts')).json.data).toEqual([]);
    expect((await gw(`/tokens/aurora/charts/${first}`)).json.data.currentTimeframe).toBe('90d');
  });
});

describe('gateway extras', () => {
  it('serves the product OpenAPI document with or without a key', async () => {
    for (const headers of [{}, auth]) {
      const r = await get(`${sim.url}/openapi-product.json`, headers);
      expect(r.status).toBe(200);
      expect(r.json.openapi).toBe('3.1.0');
      expect(Object.keys(r.json.paths)).toContain('/v1/tokens/{slug}/charts/{chart_key}');
      expect(r.json).toEqual(sim.data.openapi());
    }
  });

  it('has a private /v1/internal that needs X-Api-Key, and records every call to it', async () => {
    sim.resetRequests();
    const r = await gw('/internal/tokens', {});
    expect(r.status).toBe(401);
    expect(r.json.instance).toBe('/v1');
    expect((await gw('/internal/tokens', { 'x-api-key': 'web' })).status).toBe(200);
    expect(sim.requests.filter((q) => q.path.startsWith('/v1/internal/')).map((q) => q.status)).toEqual([401, 200]);
  });

  it('names 405 and unknown routes in kebab-case', async () => {
    expectProblem(await get(`${sim.url}/v1/tokens`, auth, 'DELETE'), 405, 'method-not-allowed');
    expectProblem(await gw('/nope'), 404, 'not-found');
  });
});
