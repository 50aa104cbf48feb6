// Every open response form the contract lists, as the simulator serves it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isLosslessNumber } from 'lossless-json';
import { startSimulator, type Simulator } from '../../src/sim/index.ts';
import { get } from '../unit/sim/support.ts';

let sim: Simulator;
const auth = { authorization: 'Bearer gw' };
const app = (p: string) => get(`${sim.url}/api/v1${p}`);
const gw = (p: string) => get(`${sim.url}/v1${p}`, auth);

beforeAll(async () => {
  sim = await startSimulator({ gatewayKeys: ['gw'] });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.setForms({ appNumber: 'metricValue', historyRows: 'arrays', historyTime: 'date', chartKeyField: 'key', chartLinkField: undefined, hostileLinks: false, gatewayRowToken: 'slug' });
});

type Kind = 'metricValue' | 'number' | 'string' | 'null';
const kindOf = (v: unknown): Kind => (v === null ? 'null' : isLosslessNumber(v) ? 'number' : typeof v === 'string' ? 'string' : 'metricValue');

describe('app number forms', () => {
  it('serves bare number literals', async () => {
    sim.setForms({ appNumber: 'number' });
    const r = await app('/screener');
    const truth = sim.data.appScreenerRows();
    r.exact.data.forEach((row: any, i: number) => {
      expect(['number', 'null']).toContain(kindOf(row.effectiveMarketCap));
      expect(row.effectiveMarketCap === null ? null : row.effectiveMarketCap.toString()).toBe(truth[i]?.effectiveMarketCap.value);
    });
    const snap = await app('/tokens/aurora');
    expect(snap.exact.data.row.effectiveMarketCap.toString()).toBe(sim.data.appSnapshot('aurora')?.row.effectiveMarketCap.value);
    expect(kindOf(snap.exact.data.streams[0].annualizedRevenue)).not.toBe('metricValue');
  });

  it('serves numeric strings', async () => {
    sim.setForms({ appNumber: 'string' });
    const r = await app('/screener');
    const truth = sim.data.appScreenerRows();
    r.json.data.forEach((row: any, i: number) => {
      expect(row.multiples['30d']).toBe(truth[i]?.multiples['30d'].value);
    });
    expect(r.json.data.some((row: any) => typeof row.annualizedRevenue === 'string')).toBe(true);
  });

  it('mixes the forms per cell', async () => {
    sim.setForms({ appNumber: 'mixed' });
    const r = await app('/screener');
    const kinds = new Set<Kind>();
    for (const row of r.exact.data) for (const v of [row.effectiveMarketCap, row.effectiveRatio, row.annualizedRevenue, ...Object.values(row.multiples)]) kinds.add(kindOf(v));
    expect(kinds.has('metricValue') && kinds.has('number') && kinds.has('string')).toBe(true);
    // the same cell keeps its form between calls
    expect((await app('/screener')).text.replace(/"servedAt":"[^"]*"/, '')).toBe(r.text.replace(/"servedAt":"[^"]*"/, ''));
  });
});

describe('app history forms', () => {
  it('serves rows as objects keyed by column', async () => {
    sim.setForms({ historyRows: 'objects' });
    const r = await app('/tokens/aurora/metrics/history?limit=3&metrics=holderFcf,erm30d');
    expect(r.json.data.rows).toHaveLength(3);
    for (const row of r.exact.data.rows) {
      expect(Object.keys(row)).toEqual(['date', 'holderFcf', 'erm30d']);
      expect(row.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    const truth = sim.data.appHistory('aurora')?.[0]?.rows.at(-1);
    const last = r.exact.data.rows.at(-1);
    expect(last.holderFcf === null ? null : last.holderFcf.toString()).toBe(truth?.values.holderFcf);
  });

  it('encodes the time cell four ways', async () => {
    const expected = { date: '2026-06-30', timestamp: '2026-06-30T00:00:00Z', epochSeconds: '1782777600', epochMillis: '1782777600000' } as const;
    for (const [form, value] of Object.entries(expected)) {
      sim.setForms({ historyTime: form as keyof typeof expected });
      const r = await app('/tokens/aurora/metrics/history?limit=1');
      const cell = r.exact.data.rows[0][0];
      expect(String(cell), form).toBe(value);
      expect(isLosslessNumber(cell), form).toBe(form.startsWith('epoch'));
    }
    expect(Date.parse('2026-06-30T00:00:00Z')).toBe(1782777600000);
  });

  it('mixes row and time forms per document', async () => {
    sim.setForms({ historyRows: 'mixed', historyTime: 'mixed' });
    const shapes = new Set<string>();
    const times = new Set<string>();
    for (const t of sim.data.appTokens()) {
      if (!t.coverage.metricHistory) continue;
      const r = await app(`/tokens/${t.slug}/metrics/history?stream=all&limit=1`);
      for (const doc of r.exact.data) {
        const row = doc.rows[0];
        shapes.add(Array.isArray(row) ? 'array' : 'object');
        const time = Array.isArray(row) ? row[0] : row.date;
        times.add(isLosslessNumber(time) ? (String(time).length > 10 ? 'ms' : 's') : String(time).length > 10 ? 'timestamp' : 'date');
      }
    }
    expect(shapes).toEqual(new Set(['array', 'object']));
    expect(times).toEqual(new Set(['ms', 's', 'timestamp', 'date']));
  });
});

describe('chart catalog forms', () => {
  const keyOf = (item: any) => item.key ?? item.chartKey ?? item.id;
  const linkOf = (item: any) => item.href ?? item.dataEndpoint ?? item.endpoint ?? item.links?.data;

  it('names the key and the link each way, on both APIs', async () => {
    for (const keyField of ['key', 'chartKey', 'id'] as const) {
      for (const linkField of ['href', 'dataEndpoint', 'endpoint', 'links.data'] as const) {
        sim.setForms({ chartKeyField: keyField, chartLinkField: linkField });
        for (const [r, base] of [[await app('/tokens/aurora/charts'), '/api/v1'], [await gw('/tokens/aurora/charts'), '/v1']] as const) {
          for (const item of r.json.data) {
            expect(item[keyField]).toEqual(expect.any(String));
            const link = linkField === 'links.data' ? item.links.data : item[linkField];
            expect(link).toBe(`${base}/tokens/aurora/charts/${item[keyField]}`);
          }
        }
      }
    }
  });

  it('goes back to the default link field of each API', async () => {
    sim.setForms({ chartLinkField: 'endpoint' });
    sim.setForms({ chartLinkField: undefined });
    expect((await app('/tokens/aurora/charts')).json.data[0].dataEndpoint).toMatch(/^\/api\/v1\//);
    expect((await gw('/tokens/aurora/charts')).json.data[0].href).toMatch(/^\/v1\//);
  });

  it('mixes key and link fields per item', async () => {
    sim.setForms({ chartKeyField: 'mixed', chartLinkField: 'mixed' });
    const keyFields = new Set<string>();
    const linkFields = new Set<string>();
    for (const t of sim.data.appTokens()) {
      for (const r of [await app(`/tokens/${t.slug}/charts`), await gw(`/tokens/${t.slug}/charts`)]) {
        if (r.status !== 200) continue;
        for (const item of r.json.data) {
          keyFields.add(['key', 'chartKey', 'id'].find((f) => f in item) ?? '?');
          linkFields.add(['href', 'dataEndpoint', 'endpoint', 'links'].find((f) => f in item) ?? '?');
          expect(keyOf(item)).toEqual(expect.any(String));
          expect(linkOf(item)).toMatch(/\/charts\//);
        }
      }
    }
    expect(keyFields).toEqual(new Set(['key', 'chartKey', 'id']));
    expect(linkFields).toEqual(new Set(['href', 'dataEndpoint', 'endpoint', 'links']));
  });

  it('serves hostile links: another host, and the private /v1/internal', async () => {
    sim.setForms({ hostileLinks: true, chartLinkField: 'href' });
    for (const r of [await app('/tokens/aurora/charts'), await gw('/tokens/aurora/charts')]) {
      const [first, second, third] = r.json.data;
      expect(first.href).toMatch(/^http:\/\/evil\.invalid\//);
      expect(second.href).toBe(`/v1/internal/tokens/aurora/charts/${second.key}`);
      expect(third.href).toMatch(/^\/(api\/)?v1\/tokens\/aurora\/charts\//);
    }
  });
});

describe('gateway screener token naming', () => {
  it('names the token by slug, token.slug or only symbol', async () => {
    sim.setForms({ gatewayRowToken: 'token.slug' });
    let r = await gw('/screener');
    expect(r.json.data[0].slug).toBeUndefined();
    expect(r.json.data[0].token).toEqual({ slug: 'aurora', symbol: 'AUR', name: 'Aurora' });
    sim.setForms({ gatewayRowToken: 'symbol' });
    r = await gw('/screener');
    expect(r.json.data[0].slug).toBeUndefined();
    expect(r.json.data[0].token).toBeUndefined();
    expect(r.json.data[0].symbol).toBe('AUR');
    sim.setForms({ gatewayRowToken: 'mixed' });
    r = await gw('/screener');
    const forms = new Set(r.json.data.map((row: any) => (row.slug ? 'slug' : row.token ? 'token.slug' : 'symbol')));
    expect(forms).toEqual(new Set(['slug', 'token.slug', 'symbol']));
  });
});
