// Every open response form the contract lists, as the simulator serves it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isLosslessNumber } from 'lossless-json';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { get, withoutServedAt } from './support.ts';

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
  sim.setForms({
    appNumber: 'metricValue',
    historyRows: 'arrays',
    historyTime: 'date',
    chartKeyField: 'key',
    chartLinkField: undefined,
    hostileLinks: false,
    gatewayRowToken: 'slug',
    historyAll: 'list',
    chartLabels: false,
    addedFields: {},
  });
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

// ---- history with stream=all: six shapes, each read back to the dataset's points ----

interface Point {
  stream: string;
  metric: string;
  date: string;
  /** the literal text of the number, or null */
  value: string | null;
}

const literal = (v: unknown): string | null => (v === null ? null : String(v));
const pointKey = (p: Point) => `${p.stream}|${p.metric}|${p.date}`;
const sorted = (points: Point[]) => [...points].sort((a, b) => (pointKey(a) < pointKey(b) ? -1 : pointKey(a) > pointKey(b) ? 1 : 0));
const truthPoints = (slug: string): Point[] => sim.data.appHistoryPoints(slug)!.map((p) => ({ ...p }));

/** one stream's MetricHistory (arrays or objects, dates as text) as points */
function docPoints(doc: any, stream: string): Point[] {
  const metrics: string[] = doc.columns.slice(1).map((c: any) => c.key);
  return doc.rows.flatMap((row: any) => {
    const date = String(Array.isArray(row) ? row[0] : row.date);
    return metrics.map((metric, i) => ({ stream, metric, date, value: literal(Array.isArray(row) ? row[i + 1] : row[metric]) }));
  });
}

/** a combined MetricHistory whose second column holds each row's stream key */
function columnPoints(doc: any): Point[] {
  const dim: string = doc.columns[1].key;
  const metrics: string[] = doc.columns.slice(2).map((c: any) => c.key);
  return doc.rows.flatMap((row: any) => {
    const [date, stream] = Array.isArray(row) ? [row[0], row[1]] : [row.date, row[dim]];
    return metrics.map((metric, i) => ({ stream, metric, date: String(date), value: literal(Array.isArray(row) ? row[i + 2] : row[metric]) }));
  });
}

/** which of the six shapes a stream=all answer has */
function formOf(data: any): string {
  if (Array.isArray(data)) return 'list';
  if ('streams' in data) return 'nested';
  if (!('rows' in data)) return 'keyed';
  const dim = data.columns[1]?.key;
  return dim === 'stream' ? 'column' : dim === 'component' ? 'columnUntyped' : 'ambiguous';
}

const head = { token: { slug: 'aurora', displayName: 'Aurora', symbol: 'AUR' }, interval: '1d', stream: 'all' };
const allOf = (slug: string, query = '') => app(`/tokens/${slug}/metrics/history?stream=all${query}`);

describe('app history with stream=all', () => {
  it("'list' (the default): one MetricHistory per stream, each with its stream key", async () => {
    const r = await allOf('aurora');
    expect(r.json.data.map((d: any) => d.stream)).toEqual(['aggregate', 'fees', 'buybacks']);
    expect(r.json.meta.count).toBe(3);
    expect(sorted(r.exact.data.flatMap((d: any) => docPoints(d, d.stream)))).toEqual(sorted(truthPoints('aurora')));
  });

  for (const [form, dimColumn, cellKey] of [
    ['column', { key: 'stream', type: 'dimension', label: 'Stream' }, 'stream'],
    ['columnUntyped', { key: 'component' }, 'component'],
  ] as const) {
    it(`'${form}': one MetricHistory, the stream key a cell of every row, days interleaved`, async () => {
      sim.setForms({ historyAll: form });
      for (const historyRows of ['arrays', 'objects'] as const) {
        sim.setForms({ historyRows });
        const r = await allOf('aurora');
        const data = r.exact.data;
        expect(r.json.data).toMatchObject(head);
        expect(r.json.data.columns.slice(0, 2)).toEqual([{ key: 'date', kind: 'time' }, dimColumn]);
        expect(r.json.data.columns).toHaveLength(2 + 7);
        const first = data.rows.slice(0, 3);
        if (historyRows === 'arrays') expect(first.map((row: any) => row[1])).toEqual(['aggregate', 'fees', 'buybacks']);
        else expect(first.map((row: any) => Object.keys(row).slice(0, 2))).toEqual([['date', cellKey], ['date', cellKey], ['date', cellKey]]);
        const dates = data.rows.map((row: any) => String(Array.isArray(row) ? row[0] : row.date));
        expect(dates).toEqual([...dates].sort());
        expect(sorted(columnPoints(data)), historyRows).toEqual(sorted(truthPoints('aurora')));
      }
    });
  }

  it("'column': metrics, limit and dates apply per stream", async () => {
    sim.setForms({ historyAll: 'column' });
    const r = await allOf('aurora', '&metrics=erm30d&limit=2&to=2026-06-01');
    expect(r.json.data.columns.map((c: any) => c.key)).toEqual(['date', 'stream', 'erm30d']);
    expect(r.json.data.rows.map((row: any) => row.slice(0, 2))).toEqual(['2026-05-31', '2026-06-01'].flatMap((d) => ['aggregate', 'fees', 'buybacks'].map((s) => [d, s])));
    const want = truthPoints('aurora').filter((p) => p.metric === 'erm30d' && (p.date === '2026-05-31' || p.date === '2026-06-01'));
    expect(sorted(columnPoints(r.exact.data))).toEqual(sorted(want));
  });

  it("'nested': { token, interval, stream: 'all', streams: MetricHistory[] }", async () => {
    sim.setForms({ historyAll: 'nested' });
    const data = (await allOf('aurora')).exact.data;
    expect(Object.keys(data)).toEqual(['token', 'interval', 'stream', 'streams']);
    expect(JSON.parse(JSON.stringify({ ...data, streams: undefined }))).toEqual(head);
    expect(data.streams.map((d: any) => d.stream)).toEqual(['aggregate', 'fees', 'buybacks']);
    expect(sorted(data.streams.flatMap((d: any) => docPoints(d, d.stream)))).toEqual(sorted(truthPoints('aurora')));
  });

  it("'keyed': an object keyed by stream, the inner documents without their stream", async () => {
    sim.setForms({ historyAll: 'keyed' });
    const data = (await allOf('aurora')).exact.data;
    expect(Object.keys(data)).toEqual(['aggregate', 'fees', 'buybacks']);
    for (const doc of Object.values<any>(data)) expect(Object.keys(doc)).toEqual(['token', 'interval', 'columns', 'rows', 'freshness']);
    expect(sorted(Object.entries<any>(data).flatMap(([stream, d]) => docPoints(d, stream)))).toEqual(sorted(truthPoints('aurora')));
  });

  it("'ambiguous': every stream's rows in one document, nothing telling them apart", async () => {
    sim.setForms({ historyAll: 'ambiguous' });
    const data = (await allOf('aurora')).exact.data;
    expect(JSON.parse(JSON.stringify(data))).toMatchObject(head);
    expect(data.columns.map((c: any) => c.key)).toEqual(['date', 'holderFcf', 'effectiveMarketCap', 'erm7d', 'erm30d', 'erm90d', 'erm180d', 'erm365d']);
    const days = sim.data.appHistory('aurora')![0]!.rows.length;
    expect(data.rows).toHaveLength(3 * days);
    // every day appears once per stream: the dates alone cannot say which row is whose
    expect(new Set(data.rows.map((row: any) => row[0])).size).toBe(days);
    // only knowing the serving order (stream by stream) reads it back
    const streams = ['aggregate', 'fees', 'buybacks'];
    const points = streams.flatMap((stream, i) => docPoints({ columns: data.columns, rows: data.rows.slice(i * days, (i + 1) * days) }, stream));
    expect(sorted(points)).toEqual(sorted(truthPoints('aurora')));
  });

  it('leaves one stream, and the default stream, a single MetricHistory', async () => {
    for (const historyAll of ['column', 'keyed', 'mixed'] as const) {
      sim.setForms({ historyAll });
      const one = await app('/tokens/aurora/metrics/history?stream=fees&limit=1');
      expect(one.json.data.stream, historyAll).toBe('fees');
      const dflt = await app('/tokens/aurora/metrics/history?limit=1');
      expect(dflt.json.data.stream, historyAll).toBe('aggregate');
      expect(dflt.json.data.columns[1].key).toBe('holderFcf');
    }
  });

  it("'mixed': a form per token, at least three across the tokens, the same on every call", async () => {
    sim.setForms({ historyAll: 'mixed' });
    const forms = new Set<string>();
    for (const t of sim.data.appTokens()) {
      if (!t.coverage.metricHistory) continue;
      const r = await allOf(t.slug, '&limit=2');
      forms.add(formOf(r.json.data));
      expect(withoutServedAt((await allOf(t.slug, '&limit=2')).text), t.slug).toBe(withoutServedAt(r.text));
    }
    expect(forms.size).toBeGreaterThanOrEqual(3);
  });
});

describe('app chart labels', () => {
  it("adds a text 'note' column on the wire only", async () => {
    const key = sim.data.appCharts('aurora')![0]!.key;
    const plain = (await app(`/tokens/aurora/charts/${key}`)).exact.data;
    sim.setForms({ chartLabels: true });
    const labelled = (await app(`/tokens/aurora/charts/${key}`)).exact.data;
    expect(labelled.columns).toEqual([...plain.columns, { key: 'note', type: 'label', label: 'Note' }]);
    expect(labelled.rows).toHaveLength(plain.rows.length);
    const notes = new Set<string>();
    labelled.rows.forEach((row: any[], i: number) => {
      const note = row.at(-1);
      expect(typeof note).toBe('string');
      expect(Number.isNaN(Number(note))).toBe(true);
      notes.add(note);
      expect(row.slice(0, -1).map(literal)).toEqual(plain.rows[i].map(literal));
    });
    expect(notes.size).toBeGreaterThan(1);
    expect({ ...labelled, columns: undefined, rows: undefined }).toEqual({ ...plain, columns: undefined, rows: undefined });
    const truth = sim.data.appChartData('aurora', key)!;
    expect(truth.columns.map((c) => c.key)).not.toContain('note');
    expect(truth.rows.every((row) => row.length === truth.columns.length)).toBe(true);
  });
});

describe('added fields', () => {
  it('adds the field to every top-level object of the named route only', async () => {
    sim.setForms({ addedFields: { 'app.tokens': 'extra', 'gateway.token': 'extraToo', 'app.history': 'extra' } });
    const tokens = (await app('/tokens')).json.data;
    expect(tokens.every((t: any) => t.extra === 'added')).toBe(true);
    expect((await app('/screener')).json.data.some((row: any) => 'extra' in row)).toBe(false);
    expect((await app('/tokens/aurora')).json.data.extra).toBeUndefined();
    expect((await gw('/tokens')).json.data.some((t: any) => 'extra' in t || 'extraToo' in t)).toBe(false);
    expect((await gw('/tokens/aurora')).json.data.extraToo).toBe('added');
    const all = (await allOf('aurora', '&limit=1')).json.data;
    expect(all.map((d: any) => d.extra)).toEqual(['added', 'added', 'added']);
    expect((await app('/tokens/aurora/metrics/history?limit=1')).json.data.extra).toBe('added');

    // the map is replaced, and the served values were copies: nothing stays behind
    sim.setForms({ addedFields: { 'app.screener': 'extra' } });
    expect((await app('/screener')).json.data.every((row: any) => row.extra === 'added')).toBe(true);
    expect((await app('/tokens')).json.data.some((t: any) => 'extra' in t)).toBe(false);
    expect((await gw('/tokens/aurora')).json.data.extraToo).toBeUndefined();
  });
});
