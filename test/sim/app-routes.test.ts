// The simulator's app host (/api/v1) over real HTTP: every route of the seed, its errors and
// its auth rules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLosslessNumber } from 'lossless-json';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { get } from './support.ts';

let sim: Simulator;
const app = (path: string, headers: Record<string, string> = {}) => get(`${sim.url}/api/v1${path}`, headers);
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

beforeAll(async () => {
  sim = await startSimulator({
    appKeys: {
      'key-all': { scopes: ['tokens:read'], credits: 'all' },
      'key-aurora': { scopes: ['tokens:read:aurora'], credits: 'all' },
      'key-noscope': { scopes: ['charts:read'], credits: 'all' },
      'key-poor': { scopes: ['tokens:read'], credits: ['aurora'] },
    },
    gatewayKeys: ['gw'],
  });
});
afterAll(async () => {
  await sim.close();
});

function expectProblem(r: Awaited<ReturnType<typeof get>>, status: number, code: string): void {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toBe('application/problem+json');
  expect(r.json).toMatchObject({ status, code });
  expect(typeof r.json.type).toBe('string');
  expect(typeof r.json.title).toBe('string');
  expect(typeof r.json.detail).toBe('string');
}

describe('app host public routes', () => {
  it('serves the metric catalog with meta.count, without any auth header', async () => {
    const r = await app('/metrics');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    expect(r.json.meta).toMatchObject({ count: r.json.data.length, asOf: sim.data.asOf });
    expect(Date.parse(r.json.meta.servedAt)).not.toBeNaN();
    expect(r.json.data).toEqual(sim.data.appMetrics());
    const slugs = r.json.data.map((m: { slug: string }) => m.slug);
    for (const s of ['effectiveMarketCap', 'annualizedRevenue', 'multiple.30d', 'multiple.365d', 'stream.annualizedRevenue', 'fundamentals.fdvToRevenue', 'combinedRevenue.annualized', 'holderFcf', 'erm30d']) {
      expect(slugs).toContain(s);
    }
    expect(sim.requests.at(-1)?.headers.authorization).toBeUndefined();
  });

  it('lists tokens with coverage flags and hostile display names verbatim', async () => {
    const r = await app('/tokens');
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual(sim.data.appTokens());
    expect(r.json.meta.count).toBe(12);
    const names = r.json.data.map((t: { displayName: string }) => t.displayName);
    expect(names).toContain(`O'Brien "Q" Token`);
    expect(names).toContain(`Robert'); DROP TABLE tokens;--`);
    expect(names).toContain('Rocket Fuel 🚀');
    for (const t of r.json.data) {
      expect(t.slug).toMatch(/^[a-z0-9-]+$/);
      expect(Object.keys(t.coverage).sort()).toEqual(['backtests', 'charts', 'metricHistory', 'screener', 'snapshot', 'trend']);
    }
    for (const flag of ['screener', 'snapshot', 'metricHistory', 'trend', 'charts', 'backtests']) {
      expect(r.json.data.some((t: { coverage: Record<string, boolean> }) => !t.coverage[flag]), flag).toBe(true);
    }
  });

  it('serves screener rows as MetricValues with exact number literals', async () => {
    const r = await app('/screener');
    expect(r.status).toBe(200);
    const truth = sim.data.appScreenerRows();
    expect(r.json.data).toHaveLength(truth.length);
    expect(r.json.meta.count).toBe(truth.length);
    const row = r.exact.data[0];
    expect(Object.keys(row)).toEqual(['token', 'effectiveMarketCap', 'effectiveRatio', 'annualizedRevenue', 'multiples', 'revenues', 'streams', 'freshness']);
    expect(Object.keys(row.multiples)).toEqual(['7d', '30d', '90d', '180d', '365d']);
    expect(row.effectiveMarketCap).toMatchObject({ metric: 'effectiveMarketCap', unit: 'USD', kind: 'gauge', status: 'ok', source: { type: 'computed', surface: 'screener' } });
    expect(isLosslessNumber(row.effectiveMarketCap.value)).toBe(true);
    expect(row.effectiveMarketCap.value.toString()).toBe(truth[0]?.effectiveMarketCap.value);
    // every value on the wire is the dataset's literal, byte for byte
    truth.forEach((t, i) => {
      for (const w of ['7d', '30d', '90d', '180d', '365d'] as const) {
        const wire = r.exact.data[i].multiples[w];
        expect(wire.value === null ? null : wire.value.toString()).toBe(t.multiples[w].value);
      }
    });
    const all = r.json.data.flatMap((x: any) => [x.effectiveMarketCap, x.effectiveRatio, x.annualizedRevenue, ...Object.values(x.multiples), ...Object.values(x.revenues)]);
    const nulls = all.filter((m: any) => m.value === null);
    expect(nulls.length).toBeGreaterThan(0);
    for (const m of nulls) expect(m.reason).toBeTruthy();
    expect(all.some((m: any) => m.methodologyVersion !== undefined)).toBe(true);
    expect(r.text).toMatch(/"value":\d{5,}\.\d{6,}/);
  });

  it('sorts the screener, nulls last, and rejects unknown sort keys', async () => {
    const r = await app('/screener?sort=-effectiveMarketCap');
    const values = r.json.data.map((x: any) => x.effectiveMarketCap.value);
    const nonNull = values.filter((v: number | null) => v !== null);
    expect([...nonNull].sort((a: number, b: number) => b - a)).toEqual(nonNull);
    expect(values.slice(nonNull.length).every((v: unknown) => v === null)).toBe(true);
    const asc = await app('/screener?sort=multiple.30d');
    const m = asc.json.data.map((x: any) => x.multiples['30d'].value).filter((v: number | null) => v !== null);
    expect([...m].sort((a: number, b: number) => a - b)).toEqual(m);
    expectProblem(await app('/screener?sort=-bogus'), 400, 'invalid_sort');
  });

  it('serves token snapshots and 404s unknown or uncovered tokens', async () => {
    const r = await app('/tokens/aurora');
    expect(r.status).toBe(200);
    const d = r.json.data;
    expect(d.token).toEqual({ slug: 'aurora', displayName: 'Aurora', symbol: 'AUR' });
    expect(Object.keys(d.row)).toEqual(['effectiveMarketCap', 'annualizedRevenue', 'multiples']);
    expect(Object.keys(d.row.multiples)).toEqual(['30d', '365d']);
    expect(d.sections).toMatchObject({ charts: 'ok', fundamentals: 'ok', streams: 'ok' });
    expect(d.combinedRevenue.annualized.metric).toBe('combinedRevenue.annualized');
    expect(d.fundamentals.fdvToRevenue.metric).toBe('fundamentals.fdvToRevenue');
    expect(d.streams[0]).toMatchObject({ key: 'fees', label: expect.any(String), mixPercentLabel: expect.stringMatching(/%$/) });
    expect(d.streams[0].annualizedRevenue.metric).toBe('stream.annualizedRevenue');
    expect(d.freshness).toEqual({ generatedAt: expect.any(String), status: 'fresh', warnings: [] });
    expect(r.exact.data.row.effectiveMarketCap.value.toString()).toBe(sim.data.appSnapshot('aurora')?.row.effectiveMarketCap.value);
    expectProblem(await app('/tokens/nope'), 404, 'token_not_found');
    expectProblem(await app('/tokens/obrien-q'), 404, 'token_not_found');
  });

  it('serves metric history with columns, default stream, limit and date filters', async () => {
    const r = await app('/tokens/aurora/metrics/history');
    expect(r.status).toBe(200);
    const h = r.exact.data;
    expect(h).toMatchObject({ interval: '1d', stream: 'aggregate', token: { slug: 'aurora' } });
    expect(h.columns[0]).toEqual({ key: 'date', kind: 'time' });
    expect(h.columns.map((c: any) => c.key)).toEqual(['date', 'holderFcf', 'effectiveMarketCap', 'erm7d', 'erm30d', 'erm90d', 'erm180d', 'erm365d']);
    expect(h.columns[1]).toEqual({ key: 'holderFcf', unit: 'USD', kind: 'rate' });
    expect(h.rows).toHaveLength(120);
    const truth = sim.data.appHistory('aurora')?.[0];
    h.rows.forEach((row: any[], i: number) => {
      expect(row[0]).toBe(truth?.rows[i]?.date);
      expect(row[1] === null ? null : row[1].toString()).toBe(truth?.rows[i]?.values.holderFcf);
    });
    expect(h.rows.some((row: any[]) => row.includes(null))).toBe(true);

    const single = await app('/tokens/basalt-finance/metrics/history?limit=1');
    expect(single.json.data.stream).toBe('lending');

    const lim = await app('/tokens/aurora/metrics/history?limit=5&metrics=erm30d,effectiveMarketCap&stream=fees');
    expect(lim.json.data.stream).toBe('fees');
    expect(lim.json.data.columns.map((c: any) => c.key)).toEqual(['date', 'erm30d', 'effectiveMarketCap']);
    expect(lim.json.data.rows.map((row: any[]) => row[0])).toEqual(['2026-06-26', '2026-06-27', '2026-06-28', '2026-06-29', '2026-06-30']);
    for (const row of lim.json.data.rows) expect(row).toHaveLength(3);

    const range = await app('/tokens/aurora/metrics/history?from=2026-06-01&to=2026-06-10&limit=1000');
    expect(range.json.data.rows.map((row: any[]) => row[0])).toEqual(Array.from({ length: 10 }, (_, i) => `2026-06-${String(i + 1).padStart(2, '0')}`));
    const capped = await app('/tokens/aurora/metrics/history?from=2026-06-01&to=2026-06-10&limit=3');
    expect(capped.json.data.rows.map((row: any[]) => row[0])).toEqual(['2026-06-08', '2026-06-09', '2026-06-10']);
  });

  it('serves every stream as an array with stream=all', async () => {
    const r = await app('/tokens/aurora/metrics/history?stream=all&limit=2');
    expect(Array.isArray(r.json.data)).toBe(true);
    expect(r.json.data.map((h: any) => h.stream)).toEqual(['aggregate', 'fees', 'buybacks']);
    for (const h of r.json.data) expect(h.rows).toHaveLength(2);
  });

  it('rejects bad history queries with the documented codes', async () => {
    const h = (q: string) => app(`/tokens/aurora/metrics/history?${q}`);
    expectProblem(await h('metrics=erm30d,bogus'), 400, 'invalid_metric');
    for (const limit of ['0', '1001', 'abc', '2.5', '-1']) expectProblem(await h(`limit=${limit}`), 400, 'invalid_limit');
    for (const date of ['2026-13-01', '20260101', '2026-02-30', 'yesterday']) expectProblem(await h(`from=${date}`), 400, 'invalid_date');
    expectProblem(await h('to=2026-1-1'), 400, 'invalid_date');
    expectProblem(await h('from=2026-06-10&to=2026-06-01'), 400, 'invalid_date_range');
    const s = await h('stream=nope');
    expectProblem(s, 400, 'stream_not_found');
    expect(s.json.streams).toEqual(['aggregate', 'fees', 'buybacks']);
    expectProblem(await app('/tokens/zuerich-yield/metrics/history'), 404, 'token_not_found');
    expectProblem(await app('/tokens/nope/metrics/history'), 404, 'token_not_found');
  });

  it('serves chart catalogs and chart data aligned with columns', async () => {
    const cat = await app('/tokens/aurora/charts');
    expect(cat.status).toBe(200);
    expect(cat.json.data).toHaveLength(3);
    expect(cat.json.meta.count).toBe(3);
    for (const item of cat.json.data) {
      expect(item).toEqual({ key: expect.any(String), title: expect.any(String), section: expect.any(String), freshness: 'fresh', rowCount: 120, dataEndpoint: `/api/v1/tokens/aurora/charts/${item.key}` });
      const d = await get(`${sim.url}${item.dataEndpoint}`);
      expect(d.status).toBe(200);
      const c = d.json.data;
      expect(c).toMatchObject({ title: item.title, section: item.section, x: 'date', source: { type: 'computed', surface: 'charts' }, freshness: 'fresh' });
      expect(c.columns[0]).toMatchObject({ key: 'date', kind: 'time' });
      expect(c.y).toEqual(c.columns.slice(1).map((col: any) => col.key));
      expect(c.rows).toHaveLength(item.rowCount);
      for (const row of c.rows) expect(row).toHaveLength(c.columns.length);
      expect(c.renderer.type).toBe('combo');
      expect(Array.isArray(c.gaps)).toBe(true);
    }
    const keysOf = async (slug: string) => (await app(`/tokens/${slug}/charts`)).json.data.map((i: any) => i.key);
    expect(await keysOf('aurora')).not.toEqual(await keysOf('nihon-swap'));
    expect((await app('/tokens/bobby-tables/charts')).json.data).toEqual([]);
    expectProblem(await app('/tokens/aurora/charts/nope'), 404, 'chart_not_found');
    expectProblem(await app('/tokens/nope/charts'), 404, 'token_not_found');
    const withGaps = sim.data.appTokens().flatMap((t) => (sim.data.appCharts(t.slug) ?? []).map((c) => sim.data.appChartData(t.slug, c.key)));
    expect(withGaps.some((c) => (c?.gaps.length ?? 0) > 0)).toBe(true);
  });
});

describe('app host research bundle (API key)', () => {
  it('needs a valid Bearer key', async () => {
    const none = await app('/tokens/aurora/full');
    expectProblem(none, 401, 'unauthorized');
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expectProblem(await app('/tokens/aurora/full', bearer('wrong')), 401, 'unauthorized');
  });

  it('serves the bundle with response-local ids that repeat across tokens', async () => {
    const a = await app('/tokens/aurora/full', bearer('key-all'));
    const b = await app('/tokens/nihon-swap/full', bearer('key-all'));
    expect(a.status).toBe(200);
    expect(a.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    for (const r of [a, b]) {
      const d = r.json.data;
      expect(Object.keys(d)).toEqual(['summary', 'valueDrivers', 'valueDriverEdges', 'tokenFunctions']);
      expect(d.valueDrivers[0]).toEqual({ id: 'vd-1', type: expect.any(String), description: expect.any(String), formula: expect.any(String) });
      expect(d.tokenFunctions[0]).toEqual({ id: 'tf-1', type: expect.any(String), description: expect.any(String), parentId: null });
      const ids = new Set(d.valueDrivers.map((v: any) => v.id));
      for (const e of d.valueDriverEdges) expect(ids.has(e.fromValueDriverId) && ids.has(e.toValueDriverId)).toBe(true);
    }
    expect(a.json.data).toEqual(sim.data.researchBundle('aurora'));
    expect(sim.requests.at(-1)?.bucket).toBe('app-key');
  });

  it('answers 403 missing_scope with the scope, 402 without credits, 404 for unknown tokens', async () => {
    const noScope = await app('/tokens/aurora/full', bearer('key-noscope'));
    expectProblem(noScope, 403, 'missing_scope');
    expect(noScope.json.scope).toBe('tokens:read:aurora');
    expect((await app('/tokens/aurora/full', bearer('key-aurora'))).status).toBe(200);
    const other = await app('/tokens/basalt-finance/full', bearer('key-aurora'));
    expectProblem(other, 403, 'missing_scope');
    expect(other.json.scope).toBe('tokens:read:basalt-finance');
    expect((await app('/tokens/aurora/full', bearer('key-poor'))).status).toBe(200);
    expectProblem(await app('/tokens/basalt-finance/full', bearer('key-poor')), 402, 'no_credits_for_token');
    expectProblem(await app('/tokens/nope/full', bearer('key-all')), 404, 'token_not_found');
  });
});

describe('app host edges', () => {
  it('answers 405 for anything but GET and 404 for unknown routes', async () => {
    const r = await get(`${sim.url}/api/v1/tokens`, {}, 'POST');
    expectProblem(r, 405, 'method_not_allowed');
    expect(r.headers.get('allow')).toBe('GET');
    expectProblem(await app('/nope'), 404, 'not_found');
    expectProblem(await get(`${sim.url}/elsewhere`), 404, 'not_found');
    expect(sim.requests.at(-1)?.bucket).toBe('none');
  });
});
