// The readers of `columns[]` + `rows` tables (src/engine/kit/table.ts), pure: which column is the
// time, a cell found in array and object rows alike, which columns declare themselves not
// numeric, and a column of labels.
import { describe, expect, it } from 'vitest';
import { cellOf, declaredNotNumeric, textCells, timeColumnIndex } from '../../../src/engine/kit/table.ts';
import type { Column } from '../../../src/schema/upstream/app.ts';

const col = (key: string, more: Record<string, unknown> = {}) => ({ key, ...more }) as Column;

describe('timeColumnIndex', () => {
  it('the column `x` names, else one of kind time, else a usual name, else the first', () => {
    const columns = [col('fees'), col('Day'), col('at', { kind: 'timestamp' }), col('when')];
    expect(timeColumnIndex(columns, 'when')).toBe(3);
    expect(timeColumnIndex(columns)).toBe(2);
    expect(timeColumnIndex(columns, 'nowhere')).toBe(2);
    expect(timeColumnIndex([col('fees'), col('Day')], null)).toBe(1);
    expect(timeColumnIndex([col('fees'), col('date', { kind: 'date' })])).toBe(1);
    expect(timeColumnIndex([col('fees'), col('burns')])).toBe(0);
  });
});

describe('cellOf', () => {
  it('reads an array row by position and an object row by key', () => {
    const c = col('fees');
    expect(cellOf(['2026-01-01', '1.5'], c, 1)).toBe('1.5');
    expect(cellOf({ date: '2026-01-01', fees: '2.5' }, c, 1)).toBe('2.5');
    expect(cellOf({ date: '2026-01-01' }, c, 1)).toBeUndefined();
    expect(cellOf('1.5', c, 1)).toBeUndefined();
    expect(cellOf(null, c, 1)).toBeUndefined();
  });
});

describe('declaredNotNumeric', () => {
  it('a dimension or a label, by type or by kind, in any case', () => {
    expect(declaredNotNumeric(col('tier', { type: 'Dimension' }))).toBe(true);
    expect(declaredNotNumeric(col('name', { kind: 'label' }))).toBe(true);
    expect(declaredNotNumeric(col('cat', { kind: 'CATEGORICAL' }))).toBe(true);
    expect(declaredNotNumeric(col('fees', { kind: 'rate', unit: 'USD' }))).toBe(false);
    expect(declaredNotNumeric(col('fees'))).toBe(false);
    // A type that is not text says nothing: the kind decides.
    expect(declaredNotNumeric(col('tier', { type: 7, kind: 'text' }))).toBe(true);
  });
});

describe('textCells', () => {
  const c = col('tier');
  it('the distinct texts of a column of labels, nulls left out', () => {
    expect(textCells([['a', 'high'], ['b', null], ['c', 'low'], ['d', 'high']], c, 1)).toEqual(new Set(['high', 'low']));
    expect(textCells([{ tier: 'gold' }, { other: 1 }], c, 0)).toEqual(new Set(['gold']));
  });

  it('null when any cell is a number or a numeric text, or no cell has a value', () => {
    expect(textCells([['a', 'high'], ['b', ' 1.5 ']], c, 1)).toBeNull();
    expect(textCells([['a', 'high'], ['b', true]], c, 1)).toBeNull();
    expect(textCells([['a', null], ['b', undefined]], c, 1)).toBeNull();
    expect(textCells([], c, 1)).toBeNull();
  });
});
