// Metric-cell collection (src/engine/kit/metric-cells.ts), pure: which fields are cells and the
// path each sits at, a MetricValue's status, the readers of one value, catalog enrichment
// that fills only what a cell lacks, and the tally of a surface's cells.
import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { cellValue, collectMetricCells, enrichFromCatalog, fieldValue, isMetricValue, tallyCells, type MetricCell } from '../../../src/engine/kit/metric-cells.ts';

const json = (text: string) => parse(text) as Record<string, unknown>;
const byPath = (cells: MetricCell[]) => Object.fromEntries(cells.map((c) => [c.path, c]));

describe('isMetricValue', () => {
  it('an object with a value and at least one of metric, unit, kind', () => {
    expect(isMetricValue({ value: '1', unit: 'USD' })).toBe(true);
    expect(isMetricValue({ value: null, metric: 'm' })).toBe(true);
    expect(isMetricValue({ value: '1' })).toBe(false);
    expect(isMetricValue({ metric: 'm', unit: 'USD' })).toBe(false);
    expect(isMetricValue([{ value: '1', unit: 'USD' }])).toBe(false);
  });
});

describe('collectMetricCells', () => {
  it('walks numbers and numeric texts at any depth, streams by their key, names and labels never', () => {
    const cells = collectMetricCells(
      json(`{
        "token": {"slug": "a", "id": 7}, "id": "123", "status": "ok", "asOf": "2026-06-30", "symbol": "2024",
        "price": 1.25, "supply": " 1000 ", "note": "about ten", "live": true,
        "windows": {"7d": "3", "label": "7"},
        "streams": [{"key": "fees", "annualizedRevenue": 5}, {"annualizedRevenue": 6}]
      }`),
    );
    expect(cells.map((c) => c.path).sort()).toEqual(['price', 'streams.1.annualizedRevenue', 'streams.fees.annualizedRevenue', 'supply', 'windows.7d']);
    expect(byPath(cells).supply).toMatchObject({ value: '1000', status: 'ok', metric: null, unit: null });
  });

  it('walks the roots it is given, even one named like a label', () => {
    const cells = collectMetricCells(json('{"row": {"fdv": 9}, "status": {"ratio": 2}, "other": 1}'), ['row', 'status', 'absent']);
    expect(cells.map((c) => c.path)).toEqual(['row.fdv', 'status.ratio']);
  });

  it('a bare null is a missing cell; a MetricValue keeps upstream\'s status, unless its value is unreadable', () => {
    const cells = byPath(
      collectMetricCells(
        json(`{
          "a": null,
          "b": {"metric": "b", "value": "2.5", "unit": "x", "status": "stale", "freshness": "stale", "asOf": "2026-06-30T00:00:00Z"},
          "c": {"metric": "c", "value": null, "unit": "x"},
          "d": {"metric": "d", "value": "n/a", "unit": "x", "status": "ok"}
        }`),
      ),
    );
    expect(cells.a).toMatchObject({ value: null, status: 'missing', payload: null });
    expect(cells.b).toMatchObject({ metric: 'b', value: '2.5', unit: 'x', status: 'stale', freshness: 'stale', asOf: new Date('2026-06-30T00:00:00Z') });
    expect(cells.c).toMatchObject({ value: null, status: 'missing' });
    expect(cells.d).toMatchObject({ value: null, status: 'invalid', payload: { value: 'n/a' } });
  });
});

describe('one value', () => {
  const cells = collectMetricCells(json('{"fdv": "12", "mc": null}'));
  it('cellValue: the value at a path, null where there is none', () => {
    expect(cellValue(cells, 'fdv')).toBe('12');
    expect(cellValue(cells, 'mc')).toBeNull();
    expect(cellValue(cells, 'nowhere')).toBeNull();
  });

  it('fieldValue: bare, text or MetricValue; anything else invalid', () => {
    expect(fieldValue(parse('3.50'))).toEqual({ value: '3.50', valid: true });
    expect(fieldValue(' 7 ')).toEqual({ value: '7', valid: true });
    expect(fieldValue({ metric: 'm', value: '8', unit: 'USD' })).toEqual({ value: '8', valid: true });
    expect(fieldValue(null)).toEqual({ value: null, valid: true });
    expect(fieldValue('seven')).toEqual({ value: null, valid: false });
    expect(fieldValue({ metric: 'm', value: 'seven', unit: 'USD' })).toEqual({ value: null, valid: false });
  });
});

describe('enrichFromCatalog', () => {
  const catalog = new Map([
    ['multiple.30d', { unit: 'x', kind: 'ratio' }],
    ['fdv', { unit: 'USD', kind: 'gauge' }],
  ]);
  it('fills only what a cell lacks, by its own metric first, and leaves unknown slugs as they are', () => {
    const cells = collectMetricCells(json('{"multiples": {"30d": "2"}, "x": {"metric": "fdv", "value": "1", "unit": "EUR"}, "unknown": "3", "fdv": {"metric": "fdv", "value": "4", "unit": "USD", "kind": "gauge"}}'));
    const out = byPath(enrichFromCatalog(cells, catalog));
    expect(out['multiples.30d']).toMatchObject({ metric: 'multiple.30d', unit: 'x', kind: 'ratio' });
    expect(out.x).toMatchObject({ metric: 'fdv', unit: 'EUR', kind: 'gauge' });
    expect(out.unknown).toMatchObject({ metric: null, unit: null, kind: null });
    // A complete cell is the same cell.
    expect(out.fdv).toBe(byPath(cells).fdv);
  });
});

describe('tallyCells', () => {
  it('counts unreadable cells as fields, a missing one not, and never refuses the surface', () => {
    const t = tallyCells(collectMetricCells(json('{"a": "x1", "b": {"metric": "b", "value": "?", "unit": "x"}, "c": null, "d": "4"}')));
    // "x1" is text, not a cell at all.
    expect(t.summary()).toEqual({ unreadableCells: 1, unreadableByColumn: { '(fields)': 1 } });
    expect(t.refusal()).toBeNull();
  });
});
