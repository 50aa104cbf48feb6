// fieldPaths: the field names schema drift compares, and the objects whose keys are data.
import { describe, expect, it } from 'vitest';
import { fieldPaths, keyedByData, MAX_KEYS } from '../../../src/engine/fetch/fields.ts';
import { parseJson } from '../../../src/lib/json.ts';

const mv = (metric: string) => ({ metric, value: 1.5, unit: 'x', kind: 'ratio' });

describe('fieldPaths', () => {
  it('lists members two levels deep, from each item of a list, merged', () => {
    const data = [
      { slug: 'a', coverage: { screener: true, charts: { deep: { deeper: 1 } } } },
      { slug: 'b', symbol: 'B', coverage: null },
    ];
    expect(fieldPaths(data)).toEqual(['coverage', 'coverage.charts', 'coverage.screener', 'slug', 'symbol']);
  });

  it('merges array elements under []', () => {
    const data = { streams: [{ key: 'fees', label: 'Fees' }, { key: 'buybacks', mixPercentLabel: '40%' }], tags: ['x', 'y'] };
    expect(fieldPaths(data)).toEqual(['streams', 'streams[].key', 'streams[].label', 'streams[].mixPercentLabel', 'tags']);
  });

  it('lists a map keyed by data (windows, dates, slugs) but not its keys', () => {
    const data = {
      row: { effectiveMarketCap: mv('effectiveMarketCap'), multiples: { '30d': mv('multiple.30d'), '365d': mv('multiple.365d') } },
      windows: { '7d': { rev: '1', mult: '2' } },
      byDay: { '2026-06-30': 1 },
      bySlug: { 'revenue-by-stream': 1 },
      long: { ['k'.repeat(65)]: 1 },
    };
    expect(fieldPaths(data)).toEqual(['byDay', 'bySlug', 'long', 'row', 'row.effectiveMarketCap', 'row.multiples', 'windows']);
  });

  it('does not descend into rows, data or sections', () => {
    const chart = { columns: [{ key: 'date' }, { key: 'feesUsd' }], rows: [{ date: '2026-06-30', feesUsd: 1 }], data: [{ timestamp: 't', buybacksUsd: '1' }] };
    expect(fieldPaths(chart)).toEqual(['columns', 'columns[].key', 'data', 'rows']);
    expect(fieldPaths({ sections: { charts: 'ok', streams: 'ok' } })).toEqual(['sections']);
    expect(fieldPaths({ sections: { trend: { supported: true, state: 'ready' } } })).toEqual(['sections']);
  });

  it('a record of tables keyed by stream is data, at the root or below', () => {
    const table = { interval: '1d', columns: [{ key: 'date' }], rows: [['2026-06-30']] };
    expect(fieldPaths({ aggregate: table, fees: table })).toEqual([]);
    expect(fieldPaths({ token: { slug: 'a' }, byStream: { fees: table } })).toEqual(['byStream', 'token', 'token.slug']);
    // A list of MetricHistory (one per stream) is a list of items like any other.
    expect(fieldPaths([{ stream: 'fees', ...table }, { stream: 'buybacks', ...table }])).toEqual(['columns', 'columns[].key', 'interval', 'rows', 'stream']);
  });

  it('caps the number of keys of an object', () => {
    const wide = Object.fromEntries(Array.from({ length: MAX_KEYS + 1 }, (_, i) => [`k${i}`, i]));
    expect(keyedByData(wide)).toBe(true);
    expect(fieldPaths({ wide })).toEqual(['wide']);
    expect(fieldPaths(wide)).toEqual([]);
  });

  it('does not judge by values: a number and a MetricValue give the same names above them', () => {
    const asNumbers = { fundamentals: { fdvToRevenue: 1, treasuryUsd: 2 } };
    const asValues = { fundamentals: { fdvToRevenue: mv('fdvToRevenue'), treasuryUsd: mv('treasuryUsd') } };
    expect(fieldPaths(asNumbers)).toEqual(fieldPaths(asValues));
  });

  it('treats exact numbers as values, and scalars or null data as having no fields', () => {
    const body = parseJson('{"data":[{"price":123456789012345678901234567890.5,"nested":{"n":1e400}}]}') as { data: unknown };
    expect(fieldPaths(body.data)).toEqual(['nested', 'nested.n', 'price']);
    expect(fieldPaths(null)).toEqual([]);
    expect(fieldPaths('text')).toEqual([]);
    expect(fieldPaths([1, 'a', null])).toEqual([]);
  });

  it('an added top-level field is one new name', () => {
    const before = [{ slug: 'a', coverage: { charts: true } }];
    const after = [{ slug: 'a', coverage: { charts: true }, newField: 'added' }];
    expect(fieldPaths(after).filter((f) => !fieldPaths(before).includes(f))).toEqual(['newField']);
  });
});
