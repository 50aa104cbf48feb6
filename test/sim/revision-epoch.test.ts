// Epoch 2, the revision epoch: a relisted token, revised past history, changed screener and
// page values and a shrunken bundle, all described by `epochChanges.epoch2`; epochs 0 and 1
// stay exactly what they were before epoch 2 existed.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../../sim/calendar.ts';
import { SimData } from '../../sim/data.ts';
import { isCanonicalDecimal } from '../../sim/decimal.ts';
import { startSimulator, type SimDataset, type Simulator } from '../../sim/index.ts';
import { get, withoutServedAt } from './support.ts';

const params = { seed: 42, tokens: 12, historyDays: 120, chartsPerToken: 3 };
const PERIODS = ['7d', '30d', '90d', '180d', '365d', '1y'] as const;
const SLUGS = ['aurora', 'basalt-finance', 'cobalt-dex', 'obrien-q', 'nihon-swap'];
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** a digest of most of a view: lists, screeners, and every route's data of a few tokens */
function datasetDigest(v: SimDataset): string {
  const parts: unknown[] = [v.asOf, v.firstDate, v.lastDate, v.appTokens(), v.appScreenerRows(), v.gatewayTokens(), v.gatewayScreenerRows(), v.gatewayInsights(), v.openapi()];
  for (const slug of SLUGS) {
    parts.push(v.appToken(slug), v.appSnapshot(slug), v.appHistory(slug), v.appCharts(slug), (v.appCharts(slug) ?? []).map((c) => v.appChartData(slug, c.key)), v.researchBundle(slug));
    parts.push(v.gatewayPage(slug), PERIODS.map((p) => v.gatewayTrend(slug, p)), v.gatewayCharts(slug));
    parts.push((v.gatewayCharts(slug) ?? []).map((c) => c.timeframes.map((tf) => v.gatewayChartData(slug, c.key, tf))));
  }
  return sha(JSON.stringify(parts));
}

// computed with the simulator as it was before epoch 2 was defined
const DIGESTS = {
  dataset0: '7885ff72683d0bf8e4f8bbcb58a148d7a5f5582e2bf1567a0bb304ab82a182a6',
  dataset1: '8a1c336f6efe55b470cc96f66e2d82bb30095810ed05a83130c70c9115f90ee3',
  http0: '68f740ff563528ec1904c692aa673c0a5c2c6f1222e21a8e5e3247abc2bebd6d',
  http1: 'd2ad4a308600b78866f70ae6b76b58cb969a07b001ccacdd5ecce36442655dc4',
};
const EPOCH1_CHANGES = {
  delistedSlug: 'cobalt-dex',
  revised: {
    slug: 'aurora',
    app: { field: 'effectiveMarketCap', before: '56829252.61226464026', after: '58960349.58520850822' },
    gateway: { field: 'effMcap', before: '478266.221787981108524076693', after: '496201.205104071111020117749638' },
  },
  newDate: '2026-07-01',
  bundle: { slug: 'aurora', addedDriverId: 'vd-5' },
  openapiAddedPath: '/v1/tokens/{slug}/backtests',
};

/** every leaf that differs between a and b, as 'path: before -> after' */
function diff(a: unknown, b: unknown, path = '', out: string[] = []): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return out;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) diff(ao[k], bo[k], `${path}.${k}`, out);
  } else out.push(`${path}: ${JSON.stringify(a)} -> ${JSON.stringify(b)}`);
  return out;
}

/** a value with every asOf-like timestamp of the epoch blanked */
function withoutAsOf<T>(v: T): unknown {
  return JSON.parse(JSON.stringify(v).replace(/"(asOf|generatedAt|checkedAt)":"[^"]*"/g, '"$1":""').replace(/"lastDate":"[^"]*"/g, '"lastDate":""'));
}

describe('epochs 0 and 1', () => {
  it('serve the same data as before epoch 2 existed', () => {
    const data = new SimData(params);
    expect(datasetDigest(data.view(0))).toBe(DIGESTS.dataset0);
    expect(datasetDigest(data.view(1))).toBe(DIGESTS.dataset1);
  });

  it('keep the epoch-1 description of epochChanges', () => {
    const { epoch2, ...epoch1 } = new SimData(params).epochChanges();
    expect(epoch1).toEqual(EPOCH1_CHANGES);
    expect(epoch2.epoch).toBe(2);
  });
});

describe('epoch 2, the revision epoch (dataset)', () => {
  const data = new SimData(params);
  const v0: SimDataset = data.view(0);
  const v1: SimDataset = data.view(1);
  const v2: SimDataset = data.view(2);
  const v3: SimDataset = data.view(3);
  const ch = data.epochChanges().epoch2;
  const rev = ch.revised!;

  it('describes itself', () => {
    expect(v2.epochChanges.epoch2).toBe(ch);
    expect(ch.newDate).toBe(v2.lastDate);
    expect(ch.newDate).toBe(addDays(v1.lastDate, 1));
    expect(v2.asOf).not.toBe(v1.asOf);
    expect(ch.relistedSlug).toBe('cobalt-dex');
    expect(rev.slug).toBe('aurora');
    expect(rev.dates).toEqual([
      { date: '2026-06-30', position: 'insideOverlap' },
      { date: '2026-03-06', position: 'outsideOverlap' },
    ]);
    expect(rev.dates[0]?.date).toBe(addDays(v2.lastDate, -2));
    expect(rev.dates[1]?.date).toBe(addDays(v2.firstDate, 3));
    expect(rev.appHistory.metric).toBe('effectiveMarketCap');
    expect(rev.gatewayTrend.series).toBe('multAnnualized');
    expect(rev.app.field).toBe('multiples.30d');
    expect(rev.gateway).toMatchObject({ field: 'multAnnualized', pageKpi: 'pFcf' });
    expect(rev.bundle.removedDriverId).toBe('vd-2');
    const values = [rev.app, rev.gateway, ...rev.appHistory.days, ...rev.appHistory.cells, ...rev.gatewayTrend.days];
    for (const x of values) {
      expect(x.before).not.toBeNull();
      expect(x.after).not.toBe(x.before);
      expect(isCanonicalDecimal(x.after), x.after).toBe(true);
    }
  });

  it('lists the delisted token again everywhere, with its epoch-0 data', () => {
    const slug = ch.relistedSlug ?? '';
    expect(v1.appToken(slug)).toBeNull();
    expect(v2.appTokens().map((t) => t.slug)).toEqual(v0.appTokens().map((t) => t.slug));
    expect(v2.appScreenerRows().map((r) => r.token.slug)).toEqual(v0.appScreenerRows().map((r) => r.token.slug));
    expect(v2.gatewayTokens()).toEqual(v0.gatewayTokens());
    expect(v2.gatewayScreenerRows().map((r) => r.slug)).toEqual(v0.gatewayScreenerRows().map((r) => r.slug));
    expect(withoutAsOf(v2.appScreenerRows().find((r) => r.token.slug === slug))).toEqual(withoutAsOf(v0.appScreenerRows().find((r) => r.token.slug === slug)));
    expect(v2.gatewayScreenerRows().find((r) => r.slug === slug)).toEqual(v0.gatewayScreenerRows().find((r) => r.slug === slug));
    expect(withoutAsOf(v2.appSnapshot(slug))).toEqual(withoutAsOf(v0.appSnapshot(slug)));
    expect(withoutAsOf(v2.gatewayPage(slug))).toEqual(withoutAsOf(v0.gatewayPage(slug)));
    expect(v2.researchBundle(slug)).toEqual(v0.researchBundle(slug));
    expect(v2.appCharts(slug)?.map((c) => c.key)).toEqual(v0.appCharts(slug)?.map((c) => c.key));
    expect(v2.gatewayCharts(slug)).toEqual(v0.gatewayCharts(slug));
    // history runs on to the new last day; the old days keep their values
    const h0 = v0.appHistory(slug) ?? [];
    const h2 = v2.appHistory(slug) ?? [];
    expect(h2.map((d) => d.stream)).toEqual(h0.map((d) => d.stream));
    h2.forEach((doc, i) => {
      expect(doc.rows).toHaveLength(params.historyDays + 2);
      expect(doc.rows.at(-1)?.date).toBe(ch.newDate);
      expect(doc.rows.slice(0, params.historyDays)).toEqual(h0[i]?.rows);
    });
    const t2 = v2.gatewayTrend(slug, '365d');
    expect(t2?.times.at(-1)).toBe(ch.newDate);
    expect(t2?.series.map((s) => s.values.slice(0, params.historyDays))).toEqual(v0.gatewayTrend(slug, '365d')?.series.map((s) => s.values));
    expect(v2.gatewayInsights().find((i) => i.id === 'coverage')?.value).toBe(String(v0.gatewayScreenerRows().length));
  });

  it('revises app history on exactly the described cells', () => {
    const changed: string[] = [];
    for (const t of v1.appTokens()) {
      const h1 = v1.appHistory(t.slug) ?? [];
      const h2 = v2.appHistory(t.slug) ?? [];
      h1.forEach((doc, i) => {
        const rows2 = h2[i]?.rows ?? [];
        expect(rows2.length).toBe(doc.rows.length + 1);
        doc.rows.forEach((row, r) => {
          for (const [metric, value] of Object.entries(row.values)) {
            const after = rows2[r]?.values[metric as keyof typeof row.values];
            if (after !== value) changed.push(`${t.slug} ${doc.stream} ${metric} ${row.date} ${value} -> ${after}`);
          }
        });
      });
    }
    const described = rev.appHistory.cells.map((c) => `${rev.slug} ${c.stream} ${c.metric} ${c.date} ${c.before} -> ${c.after}`);
    expect(changed.sort()).toEqual([...described].sort());
    const streams = v2.appStreams(rev.slug) ?? [];
    // the metric on both days in every stream; its derived erm windows only on the inside day
    const [inside, outside] = rev.dates.map((d) => d.date);
    for (const s of streams) {
      for (const date of [inside, outside]) expect(rev.appHistory.cells.filter((c) => c.stream === s && c.date === date && c.metric === 'effectiveMarketCap')).toHaveLength(1);
      expect(rev.appHistory.cells.filter((c) => c.stream === s && c.date === inside && c.metric.startsWith('erm')).length).toBeGreaterThan(0);
    }
    expect(rev.appHistory.cells.filter((c) => c.date === outside && c.metric !== 'effectiveMarketCap')).toEqual([]);
    expect(rev.appHistory.cells.every((c) => c.metric === 'effectiveMarketCap' || c.metric.startsWith('erm'))).toBe(true);
    expect(rev.appHistory.days).toEqual([
      { date: '2026-06-30', position: 'insideOverlap', before: '53512056.5134702481', after: '55786318.9153615966' },
      { date: '2026-03-06', position: 'outsideOverlap', before: '62691048.2758621411', after: '60026678.7241140948' },
    ]);
    for (const doc of v2.appHistory(rev.slug) ?? []) {
      for (const d of rev.appHistory.days) expect(doc.rows.find((r) => r.date === d.date)?.values.effectiveMarketCap).toBe(d.after);
    }
    // app charts are series of their own: unchanged on old days
    for (const c of v1.appCharts(rev.slug) ?? []) {
      const rows1 = v1.appChartData(rev.slug, c.key)?.rows ?? [];
      expect(v2.appChartData(rev.slug, c.key)?.rows.slice(0, rows1.length)).toEqual(rows1);
    }
  });

  it('revises one gateway trend series on the two days, and no chart row', () => {
    const changed: string[] = [];
    for (const t of v1.gatewayTokens()) {
      const a = v1.gatewayTrend(t.slug, '365d');
      const b = v2.gatewayTrend(t.slug, '365d');
      if (!a || !b) continue;
      a.series.forEach((s, si) =>
        s.values.forEach((value, i) => {
          const after = b.series[si]?.values[i];
          if (after !== value) changed.push(`${t.slug} ${s.key} ${a.times[i]} ${value} -> ${after}`);
        }),
      );
      for (const c of v1.gatewayCharts(t.slug) ?? []) {
        const rows1 = v1.gatewayChartData(t.slug, c.key, '30d')?.data ?? [];
        const rows2 = v2.gatewayChartData(t.slug, c.key, '30d')?.data ?? [];
        expect(rows2.slice(0, -1)).toEqual(rows1.slice(1));
      }
    }
    expect(changed.sort()).toEqual(rev.gatewayTrend.days.map((d) => `${rev.slug} multAnnualized ${d.date} ${d.before} -> ${d.after}`).sort());
    expect(rev.gatewayTrend.days.map((d) => d.date)).toEqual(rev.dates.map((d) => d.date));
    // every period slice that holds a day shows the revision
    const week = v2.gatewayTrend(rev.slug, '7d');
    const inside = rev.gatewayTrend.days[0];
    expect(week?.series.find((s) => s.key === 'multAnnualized')?.values[week.times.indexOf(inside?.date ?? '')]).toBe(inside?.after);
  });

  it('changes the screener rows, the snapshot and the gateway page consistently', () => {
    const row1 = v1.appScreenerRows().find((r) => r.token.slug === rev.slug);
    const row2 = v2.appScreenerRows().find((r) => r.token.slug === rev.slug);
    expect(row1?.multiples['30d'].value).toBe(rev.app.before);
    expect(diff(withoutAsOf(row1), withoutAsOf(row2))).toEqual([`.multiples.30d.value: ${JSON.stringify(rev.app.before)} -> ${JSON.stringify(rev.app.after)}`]);
    expect(diff(withoutAsOf(v1.appSnapshot(rev.slug)), withoutAsOf(v2.appSnapshot(rev.slug)))).toEqual([
      `.row.multiples.30d.value: ${JSON.stringify(rev.app.before)} -> ${JSON.stringify(rev.app.after)}`,
    ]);
    const gw1 = v1.gatewayScreenerRows().find((r) => r.slug === rev.slug);
    const gw2 = v2.gatewayScreenerRows().find((r) => r.slug === rev.slug);
    expect(diff(gw1, gw2)).toEqual([`.multAnnualized: ${JSON.stringify(rev.gateway.before)} -> ${JSON.stringify(rev.gateway.after)}`]);
    const page2 = v2.gatewayPage(rev.slug);
    expect(page2?.kpis.find((k) => k.key === rev.gateway.pageKpi)?.value).toBe(rev.gateway.after);
    expect(diff(withoutAsOf(v1.gatewayPage(rev.slug)), withoutAsOf(page2))).toEqual([
      `.kpis.2.value: ${JSON.stringify(rev.gateway.before)} -> ${JSON.stringify(rev.gateway.after)}`,
    ]);
    // the epoch-1 revision stays
    const e1 = data.epochChanges().revised;
    expect(row2?.effectiveMarketCap.value).toBe(e1?.app.after);
    expect(gw2?.effMcap).toBe(e1?.gateway.after);
    // nothing else changes on the other tokens' rows
    for (const v of [v1, v2]) expect(v.appScreenerRows().filter((r) => r.token.slug !== rev.slug && r.token.slug !== ch.relistedSlug).length).toBe(9);
    expect(withoutAsOf(v2.appScreenerRows().filter((r) => r.token.slug !== rev.slug && r.token.slug !== ch.relistedSlug))).toEqual(
      withoutAsOf(v1.appScreenerRows().filter((r) => r.token.slug !== rev.slug)),
    );
    expect(v2.gatewayScreenerRows().filter((r) => r.slug !== rev.slug && r.slug !== ch.relistedSlug)).toEqual(v1.gatewayScreenerRows().filter((r) => r.slug !== rev.slug));
  });

  it('shrinks the bundle: a driver there since epoch 0 leaves with every edge touching it', () => {
    const b0 = v0.researchBundle(rev.slug);
    const b1 = v1.researchBundle(rev.slug);
    const b2 = v2.researchBundle(rev.slug);
    const gone = rev.bundle.removedDriverId;
    expect(b0?.valueDrivers.map((v) => v.id)).toContain(gone);
    expect(b1?.valueDrivers.map((v) => v.id)).toContain(gone);
    expect(b2?.valueDrivers.map((v) => v.id)).toEqual(rev.bundle.driverIds);
    expect(rev.bundle.driverIds).toEqual(b1?.valueDrivers.map((v) => v.id).filter((id) => id !== gone));
    expect(rev.bundle.driverIds).toContain(data.epochChanges().bundle?.addedDriverId);
    expect(rev.bundle.removedEdges).toEqual(b1?.valueDriverEdges.filter((e) => e.fromValueDriverId === gone || e.toValueDriverId === gone));
    expect(rev.bundle.removedEdges).toEqual([
      { fromValueDriverId: 'vd-1', toValueDriverId: 'vd-2' },
      { fromValueDriverId: 'vd-2', toValueDriverId: 'vd-3' },
    ]);
    expect(b2?.valueDriverEdges).toEqual(b1?.valueDriverEdges.filter((e) => e.fromValueDriverId !== gone && e.toValueDriverId !== gone));
    expect(b2?.valueDrivers).toEqual(b1?.valueDrivers.filter((v) => v.id !== gone));
    expect({ ...b2, valueDrivers: [], valueDriverEdges: [] }).toEqual({ ...b1, valueDrivers: [], valueDriverEdges: [] });
  });

  it('keeps every change at later epochs, which only add a day', () => {
    expect(v3.lastDate).toBe(addDays(v2.lastDate, 1));
    expect(v3.appTokens().map((t) => t.slug)).toEqual(v2.appTokens().map((t) => t.slug));
    for (const slug of SLUGS) {
      const h2 = v2.appHistory(slug);
      h2?.forEach((doc, i) => expect(v3.appHistory(slug)?.[i]?.rows.slice(0, doc.rows.length)).toEqual(doc.rows));
      expect(withoutAsOf(v3.appSnapshot(slug))).toEqual(withoutAsOf(v2.appSnapshot(slug)));
      expect(withoutAsOf(v3.gatewayPage(slug))).toEqual(withoutAsOf(v2.gatewayPage(slug)));
      expect(v3.researchBundle(slug)).toEqual(v2.researchBundle(slug));
      const t2 = v2.gatewayTrend(slug, '365d');
      expect(v3.gatewayTrend(slug, '365d')?.series.map((s) => s.values.slice(0, t2?.times.length))).toEqual(t2?.series.map((s) => s.values));
    }
    expect(withoutAsOf(v3.appScreenerRows())).toEqual(withoutAsOf(v2.appScreenerRows()));
    expect(v3.gatewayScreenerRows()).toEqual(v2.gatewayScreenerRows());
  });

  it('keeps every number a canonical decimal', () => {
    const decimals = (v: unknown, out: string[] = []): string[] => {
      if (typeof v === 'string' && /^-?[\d.]+$/.test(v)) out.push(v);
      else if (v && typeof v === 'object') for (const x of Object.values(v)) decimals(x, out);
      return out;
    };
    const all = decimals([v2.appScreenerRows(), v2.appHistory(rev.slug), v2.gatewayScreenerRows(), v2.gatewayTrend(rev.slug, '365d'), v2.gatewayPage(rev.slug)]);
    for (const d of all) expect(isCanonicalDecimal(d), d).toBe(true);
  });

  it('works with a short history and few tokens', () => {
    for (const historyDays of [1, 4, 8, 9]) {
      const small = new SimData({ seed: 5, tokens: 2, historyDays, chartsPerToken: 1 });
      const c = small.epochChanges().epoch2;
      expect(c.relistedSlug).toBeNull();
      expect(c.revised?.dates.map((d) => d.position)).toEqual(historyDays >= 9 ? ['insideOverlap', 'outsideOverlap'] : ['insideOverlap']);
      const v = small.view(2);
      expect(v.appHistory('aurora')?.[0]?.rows).toHaveLength(historyDays + 2);
      expect(v.gatewayTrend('aurora', '7d')?.times.at(-1)).toBe(c.newDate);
    }
    expect(new SimData({ ...params, tokens: 0 }).epochChanges().epoch2.revised).toBeNull();
  });
});

describe('epoch 2 over HTTP', () => {
  const gw = { authorization: 'Bearer gw' };
  const key = { authorization: 'Bearer k' };
  let sim: Simulator;

  beforeAll(async () => {
    sim = await startSimulator({ gatewayKeys: ['gw'], appKeys: { k: { scopes: ['tokens:read'], credits: 'all' } } });
  });
  afterAll(async () => {
    await sim.close();
  });

  function httpPaths(): [string, Record<string, string>][] {
    const out: [string, Record<string, string>][] = [['/api/v1/tokens', {}], ['/api/v1/screener', {}], ['/v1/tokens', gw], ['/v1/screener', gw], ['/openapi-product.json', {}]];
    for (const slug of ['aurora', 'cobalt-dex']) {
      out.push([`/api/v1/tokens/${slug}`, {}], [`/api/v1/tokens/${slug}/metrics/history?stream=all`, {}], [`/api/v1/tokens/${slug}/charts`, {}], [`/api/v1/tokens/${slug}/full`, key]);
      out.push([`/v1/tokens/${slug}`, gw], [`/v1/tokens/${slug}/metrics/history?period=365d`, gw], [`/v1/tokens/${slug}/charts`, gw]);
    }
    return out;
  }
  async function httpDigest(): Promise<string> {
    const bodies: string[] = [];
    for (const [p, h] of httpPaths()) {
      const r = await fetch(`${sim.url}${p}`, { headers: h });
      bodies.push(`${p} ${r.status} ${withoutServedAt(await r.text())}`);
    }
    return sha(bodies.join('\n'));
  }

  it('serves epochs 0 and 1 as before, and epoch 2 with its changes', async () => {
    expect(await httpDigest()).toBe(DIGESTS.http0);
    sim.setEpoch(1);
    expect(await httpDigest()).toBe(DIGESTS.http1);
    const before = new Map<string, string>();
    for (const [p, h] of httpPaths()) before.set(p, withoutServedAt((await get(`${sim.url}${p}`, h)).text));

    sim.setEpoch(2);
    try {
      const ch = sim.data.epochChanges.epoch2;
      const rev = ch.revised!;
      const slug = ch.relistedSlug ?? '';
      // every data body changes (meta.asOf moves with the new day), so hashes of bodies do too;
      // the OpenAPI document is the one of epoch 1
      expect((await get(`${sim.url}/openapi-product.json`)).text).toBe(before.get('/openapi-product.json'));
      for (const [p, h] of httpPaths().filter(([p]) => p !== '/openapi-product.json')) {
        const r = await get(`${sim.url}${p}`, h);
        expect(r.status, p).toBe(200);
        expect(withoutServedAt(r.text), p).not.toBe(before.get(p));
      }

      // relisted everywhere
      expect((await get(`${sim.url}/api/v1/tokens`)).json.data.map((t: any) => t.slug)).toContain(slug);
      expect((await get(`${sim.url}/api/v1/screener`)).json.data.some((r: any) => r.token.slug === slug)).toBe(true);
      expect((await get(`${sim.url}/v1/tokens`, gw)).json.data.some((t: any) => t.slug === slug)).toBe(true);
      expect((await get(`${sim.url}/v1/screener`, gw)).json.data.some((r: any) => r.slug === slug)).toBe(true);
      const hist = (await get(`${sim.url}/api/v1/tokens/${slug}/metrics/history`)).json.data;
      expect(hist.rows.at(-1)[0]).toBe(ch.newDate);

      // revised history: both days in one ranged request per day
      const cols = (doc: any) => doc.columns.map((c: any) => c.key);
      for (const d of rev.appHistory.days) {
        const docs = (await get(`${sim.url}/api/v1/tokens/${rev.slug}/metrics/history?stream=all&from=${d.date}&to=${d.date}`)).exact.data;
        for (const doc of docs) {
          expect(doc.rows).toHaveLength(1);
          const cells = Object.fromEntries(cols(doc).map((k: string, i: number) => [k, doc.rows[0][i] === null ? null : String(doc.rows[0][i])]));
          expect(cells.date).toBe(d.date);
          expect(cells.effectiveMarketCap).toBe(d.after);
          for (const c of rev.appHistory.cells.filter((x) => x.stream === doc.stream && x.date === d.date)) expect(cells[c.metric], `${c.stream} ${c.metric}`).toBe(c.after);
        }
      }
      const trend = (await get(`${sim.url}/v1/tokens/${rev.slug}/metrics/history?period=365d`, gw)).json.data;
      const mult = trend.series.find((s: any) => s.key === rev.gatewayTrend.series);
      for (const d of rev.gatewayTrend.days) expect(mult.values[trend.times.indexOf(d.date)]).toBe(d.after);

      // screener rows, snapshot and page
      const row = (await get(`${sim.url}/api/v1/screener`)).exact.data.find((r: any) => r.token.slug === rev.slug);
      expect(row.multiples['30d'].value.toString()).toBe(rev.app.after);
      const snap = (await get(`${sim.url}/api/v1/tokens/${rev.slug}`)).exact.data;
      expect(snap.row.multiples['30d'].value.toString()).toBe(rev.app.after);
      const gwRow = (await get(`${sim.url}/v1/screener`, gw)).json.data.find((r: any) => r.slug === rev.slug);
      expect(gwRow.multAnnualized).toBe(rev.gateway.after);
      const page = (await get(`${sim.url}/v1/tokens/${rev.slug}`, gw)).json.data;
      expect(page.kpis.find((k: any) => k.key === rev.gateway.pageKpi).value).toBe(rev.gateway.after);

      // the bundle shrank
      const bundle = (await get(`${sim.url}/api/v1/tokens/${rev.slug}/full`, key)).json.data;
      expect(bundle.valueDrivers.map((v: any) => v.id)).toEqual(rev.bundle.driverIds);
      expect(bundle.valueDriverEdges.some((e: any) => e.fromValueDriverId === rev.bundle.removedDriverId || e.toValueDriverId === rev.bundle.removedDriverId)).toBe(false);
    } finally {
      sim.setEpoch(0);
    }
    expect(await httpDigest()).toBe(DIGESTS.http0);
  });
});
