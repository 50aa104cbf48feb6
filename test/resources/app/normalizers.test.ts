import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { readHistory } from '../../../src/resources/app/history.ts';
import { readScreenerRow, screenerValues } from '../../../src/resources/app/screener.ts';
import { readCatalogItem, readTokenList } from '../../../src/engine/kit/lists.ts';
import { collectMetricCells } from '../../../src/engine/kit/metric-cells.ts';
import { history } from '../../../src/schema/upstream/app.ts';

const json = (text: string) => parse(text) as any;

describe('metric cells', () => {
  it('reads every numeric form: MetricValue, bare number, numeric string, null with reason', () => {
    const row = json(`{
      "token": {"slug": "abc", "displayName": "2024", "symbol": "ABC"},
      "effectiveMarketCap": {"metric": "effectiveMarketCap", "value": 12345678901234567890.123456789, "unit": "USD", "kind": "gauge", "status": "ok", "freshness": "fresh", "extra": 1},
      "effectiveRatio": 0.75,
      "annualizedRevenue": "98765.4321",
      "multiples": {"30d": {"metric": "multiple.30d", "value": null, "unit": "x", "kind": "ratio", "status": "missing", "reason": "no revenue"}},
      "streams": [{"key": "fees", "label": "Fees", "annualizedRevenue": {"metric": "stream.annualizedRevenue", "value": 5, "unit": "USD", "kind": "rate"}}]
    }`);
    const r = readScreenerRow(row)!;
    expect(r.slug).toBe('abc');
    const byPath = Object.fromEntries(r.cells.map((c) => [c.path, c]));
    expect(Object.keys(byPath).sort()).toEqual(['annualizedRevenue', 'effectiveMarketCap', 'effectiveRatio', 'multiples.30d', 'streams.fees.annualizedRevenue']);
    expect(byPath.effectiveMarketCap).toMatchObject({ value: '12345678901234567890.123456789', unit: 'USD', kind: 'gauge', metric: 'effectiveMarketCap', status: 'ok' });
    expect(byPath.effectiveRatio).toMatchObject({ value: '0.75', metric: null, status: 'ok' });
    expect(byPath.annualizedRevenue).toMatchObject({ value: '98765.4321' });
    expect(byPath['multiples.30d']).toMatchObject({ value: null, status: 'missing', reason: 'no revenue' });
    const v = screenerValues(r);
    expect(v.effectiveMarketCap).toBe('12345678901234567890.123456789');
    expect(v.multiple30d).toBeNull();
  });

  it('marks an unreadable value invalid and keeps it in the payload', () => {
    const cells = collectMetricCells(json(`{"row": {"effectiveMarketCap": {"metric": "m", "value": "12.3.4", "unit": "USD"}}}`), ['row']);
    expect(cells[0]).toMatchObject({ path: 'row.effectiveMarketCap', value: null, status: 'invalid' });
    expect((cells[0]!.payload as { value: string }).value).toBe('12.3.4');
  });

  it('rejects a row that names no token', () => {
    expect(readScreenerRow(json('{"effectiveRatio": 1}'))).toBeNull();
  });
});

describe('token list', () => {
  const item = (slug: string, coverage = {}) => ({ slug, displayName: slug, coverage });
  it('is complete only when every item is readable and meta.count agrees', () => {
    expect(readTokenList([item('a'), item('b')], 2).complete).toBe(true);
    expect(readTokenList([item('a'), item('b')], 3).complete).toBe(false);
    expect(readTokenList([item('a'), { nope: 1 }], undefined).complete).toBe(false);
    expect(readTokenList([item('a'), item('../etc')], undefined)).toMatchObject({ complete: false, invalidItems: 1 });
    expect(readTokenList([], 0).complete).toBe(false);
  });
});

describe('history', () => {
  const cols = `[{"key":"date","kind":"time"},{"key":"holderFcf","unit":"USD","kind":"rate"},{"key":"erm30d","unit":"x","kind":"ratio"}]`;
  it('reads array rows and object rows, any time form, per stream', () => {
    const data = history.array().parse(
      json(`[
        {"stream":"fees","interval":"1d","columns":${cols},"rows":[["2026-01-01", 1.5, null],["2026-01-02", "2.5", 3]]},
        {"stream":"burns","columns":${cols},"rows":[{"date": 1767225600, "holderFcf": 7, "erm30d": 8}, {"date": 1767312000000, "holderFcf": 9}]}
      ]`),
    );
    const r = readHistory('abc', data, { stream: 'all', known: new Set() });
    expect(r.form).toBe('list');
    expect(r.ambiguous).toBeNull();
    expect(r.streams).toEqual(['fees', 'burns']);
    expect(r.rows).toHaveLength(8);
    expect(r.lastTs?.toISOString()).toBe('2026-01-02T00:00:00.000Z');
    const burns = r.rows.filter((x) => x.stream === 'burns');
    expect(burns.map((x) => [x.ts instanceof Date ? x.ts.toISOString().slice(0, 10) : '', x.metric, x.value])).toEqual([
      ['2026-01-01', 'holderFcf', '7'],
      ['2026-01-01', 'erm30d', '8'],
      ['2026-01-02', 'holderFcf', '9'],
      ['2026-01-02', 'erm30d', null],
    ]);
    expect(r.rows.find((x) => x.stream === 'fees' && x.metric === 'holderFcf')).toMatchObject({ value: '1.5', unit: 'USD', kind: 'rate', interval: '1d' });
  });

  it('refuses rows whose time cannot be read instead of inventing one', () => {
    const r = readHistory('abc', history.parse(json(`{"columns":${cols},"rows":[["soon", 1, 2]]}`)), { stream: 'aggregate', known: new Set() });
    expect(r.rows).toEqual([]);
    expect(r.cells.refusal()).toMatch(/time that cannot be read/);
  });
});

describe('chart catalog items', () => {
  it.each([
    [{ key: 'fees', href: '/api/v1/tokens/a/charts/fees' }, 'fees', '/api/v1/tokens/a/charts/fees'],
    [{ chartKey: 'fees', dataEndpoint: 'x' }, 'fees', 'x'],
    [{ id: 'fees', endpoint: 'y' }, 'fees', 'y'],
    [{ id: 'fees', links: { data: 'z' } }, 'fees', 'z'],
  ])('accepts %j', (raw, key, link) => {
    expect(readCatalogItem(raw)).toMatchObject({ key, link });
  });

  it('refuses a key that could not go into a URL', () => {
    for (const key of ['..', 'a/b', '?x=1', '#', '', 'x'.repeat(10_000)]) expect(readCatalogItem({ key })).toBeNull();
  });

  it('changes its marker when freshness or row count changes', () => {
    const a = readCatalogItem({ key: 'k', freshness: 'fresh', rowCount: 10 })!.marker;
    expect(readCatalogItem({ key: 'k', freshness: 'fresh', rowCount: 10 })!.marker).toBe(a);
    expect(readCatalogItem({ key: 'k', freshness: 'fresh', rowCount: 11 })!.marker).not.toBe(a);
    expect(readCatalogItem({ key: 'k', freshness: 'stale', rowCount: 10 })!.marker).not.toBe(a);
  });
});

describe('catalog enrichment', () => {
  it('maps cell paths to catalog slugs and fills units of bare cells', async () => {
    const { metricSlugOf, enrichFromCatalog } = await import('../../../src/engine/kit/metric-cells.ts');
    expect(metricSlugOf('row.multiples.30d')).toBe('multiple.30d');
    expect(metricSlugOf('revenues.7d')).toBe('revenue.7d');
    expect(metricSlugOf('streams.fees.annualizedRevenue')).toBe('stream.annualizedRevenue');
    expect(metricSlugOf('fundamentals.fdvToRevenue')).toBe('fundamentals.fdvToRevenue');
    const cells = collectMetricCells(json('{"multiples": {"30d": "12.5", "7d": null}}'));
    const enriched = enrichFromCatalog(cells, new Map([['multiple.30d', { unit: 'x', kind: 'ratio' }], ['multiple.7d', { unit: 'x', kind: 'ratio' }]]));
    expect(enriched).toMatchObject([
      { path: 'multiples.30d', metric: 'multiple.30d', unit: 'x', kind: 'ratio', value: '12.5', status: 'ok' },
      { path: 'multiples.7d', metric: 'multiple.7d', unit: 'x', value: null, status: 'missing' },
    ]);
  });
});
