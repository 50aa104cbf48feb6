// The epoch switch and determinism, as served over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { get, withoutServedAt } from './support.ts';

const auth = { authorization: 'Bearer gw' };
const options = { gatewayKeys: ['gw'], appKeys: { k: { scopes: ['tokens:read'], credits: 'all' as const } } };
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator(options);
});
afterAll(async () => {
  await sim.close();
});

/** one request per route of both APIs, for a few tokens */
function paths(s: Simulator): [string, Record<string, string>][] {
  const out: [string, Record<string, string>][] = [
    ['/api/v1/metrics', {}],
    ['/api/v1/tokens', {}],
    ['/api/v1/screener', {}],
    ['/v1/tokens', auth],
    ['/v1/screener', auth],
    ['/openapi-product.json', {}],
  ];
  for (const slug of ['aurora', 'basalt-finance', 'nihon-swap']) {
    out.push([`/api/v1/tokens/${slug}`, {}], [`/api/v1/tokens/${slug}/metrics/history?stream=all`, {}], [`/api/v1/tokens/${slug}/charts`, {}], [`/api/v1/tokens/${slug}/full`, { authorization: 'Bearer k' }]);
    out.push([`/v1/tokens/${slug}`, auth], [`/v1/tokens/${slug}/metrics/history?period=90d`, auth], [`/v1/tokens/${slug}/charts`, auth]);
    for (const c of s.data.appCharts(slug) ?? []) out.push([c.dataPath, {}]);
    for (const c of s.data.gatewayCharts(slug) ?? []) out.push([`${c.dataPath}?timeframe=${c.timeframes[0]}`, auth]);
  }
  return out;
}

describe('determinism', () => {
  it('serves byte-identical bodies (but servedAt) from two simulators with the same seed', async () => {
    const twin = await startSimulator(options);
    const other = await startSimulator({ ...options, seed: 7 });
    try {
      expect(JSON.stringify(twin.data.appScreenerRows())).toBe(JSON.stringify(sim.data.appScreenerRows()));
      let differs = 0;
      for (const [p, h] of paths(sim)) {
        const a = await get(`${sim.url}${p}`, h);
        const b = await get(`${twin.url}${p}`, h);
        expect(a.status, p).toBe(200);
        expect(withoutServedAt(b.text), p).toBe(withoutServedAt(a.text));
        const c = await get(`${other.url}${p}`, h);
        if (withoutServedAt(c.text) !== withoutServedAt(a.text)) differs++;
      }
      expect(differs).toBeGreaterThan(20);
    } finally {
      await twin.close();
      await other.close();
    }
  });
});

describe('epoch switch', () => {
  it('delists a token, revises a value, adds a day, changes a bundle and the OpenAPI document', async () => {
    const ch = sim.data.epochChanges;
    const before = {
      tokens: (await get(`${sim.url}/api/v1/tokens`)).json.data.map((t: any) => t.slug),
      history: (await get(`${sim.url}/api/v1/tokens/aurora/metrics/history?stream=all`)).text,
      bundle: (await get(`${sim.url}/api/v1/tokens/aurora/full`, { authorization: 'Bearer k' })).json.data,
    };
    expect(before.tokens).toContain(ch.delistedSlug);

    sim.setEpoch(1);
    try {
      expect(sim.data.epoch).toBe(1);
      const slug = ch.delistedSlug ?? '';
      expect((await get(`${sim.url}/api/v1/tokens`)).json.data.map((t: any) => t.slug)).toEqual(before.tokens.filter((s: string) => s !== slug));
      expect((await get(`${sim.url}/api/v1/screener`)).json.data.some((r: any) => r.token.slug === slug)).toBe(false);
      expect((await get(`${sim.url}/v1/tokens`, auth)).json.data.some((t: any) => t.slug === slug)).toBe(false);
      expect((await get(`${sim.url}/v1/screener`, auth)).json.data.some((r: any) => r.slug === slug)).toBe(false);
      for (const p of [`/api/v1/tokens/${slug}`, `/api/v1/tokens/${slug}/metrics/history`, `/api/v1/tokens/${slug}/charts`]) {
        expect((await get(`${sim.url}${p}`)).json.code, p).toBe('token_not_found');
      }
      expect((await get(`${sim.url}/api/v1/tokens/${slug}/full`, { authorization: 'Bearer k' })).json.code).toBe('token_not_found');
      for (const p of [`/v1/tokens/${slug}`, `/v1/tokens/${slug}/metrics/history`, `/v1/tokens/${slug}/charts`]) {
        expect((await get(`${sim.url}${p}`, auth)).json.code, p).toBe('token-not-found');
      }

      const row = (await get(`${sim.url}/api/v1/screener`)).exact.data.find((r: any) => r.token.slug === ch.revised?.slug);
      expect(row.effectiveMarketCap.value.toString()).toBe(ch.revised?.app.after);
      const snap = (await get(`${sim.url}/api/v1/tokens/${ch.revised?.slug}`)).exact.data;
      expect(snap.row.effectiveMarketCap.value.toString()).toBe(ch.revised?.app.after);
      const gwRow = (await get(`${sim.url}/v1/screener`, auth)).json.data.find((r: any) => r.slug === ch.revised?.slug);
      expect(gwRow.effMcap).toBe(ch.revised?.gateway.after);

      const h1 = (await get(`${sim.url}/api/v1/tokens/aurora/metrics/history?stream=all`)).json.data;
      const h0 = JSON.parse(before.history).data;
      h1.forEach((doc: any, i: number) => {
        expect(doc.rows).toHaveLength(121);
        expect(doc.rows.at(-1)[0]).toBe(ch.newDate);
        expect(doc.rows.slice(0, 120)).toEqual(h0[i].rows);
      });
      const trend = (await get(`${sim.url}/v1/tokens/aurora/metrics/history?period=7d`, auth)).json;
      expect(trend.data.times.at(-1)).toBe(ch.newDate);

      const bundle = (await get(`${sim.url}/api/v1/tokens/aurora/full`, { authorization: 'Bearer k' })).json.data;
      expect(bundle.valueDrivers.map((v: any) => v.id)).toEqual([...before.bundle.valueDrivers.map((v: any) => v.id), ch.bundle?.addedDriverId]);

      const openapi = (await get(`${sim.url}/openapi-product.json`)).json;
      expect(Object.keys(openapi.paths)).toContain(ch.openapiAddedPath);
    } finally {
      sim.setEpoch(0);
    }
    expect((await get(`${sim.url}/api/v1/tokens`)).json.data.map((t: any) => t.slug)).toEqual(before.tokens);
  });
});
