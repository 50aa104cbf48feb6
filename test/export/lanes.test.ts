// Pure parts of the export's lanes: how an archive's days are split between the writers, and
// the longest line of a CSV as it streams in chunks.
import { describe, expect, it } from 'vitest';
import { splitDays } from '../../src/export/lanes.ts';
import { LineLength } from '../../src/export/pg-read.ts';

const days = (rows: number[]) => rows.map((n, i) => ({ day: `2026-01-${String(i + 1).padStart(2, '0')}`, rows: n }));

describe('splitDays', () => {
  it('splits into consecutive runs of about as many rows, every day once, in order', () => {
    const parts = splitDays(days(Array.from({ length: 30 }, () => 500)), 2, 1000);
    expect(parts).toHaveLength(2);
    expect(parts.flat()).toEqual(days(Array.from({ length: 30 }, () => 500)).map((d) => d.day));
    expect(parts.map((p) => p.length)).toEqual([15, 15]);
  });

  it('balances by rows, not by days', () => {
    const parts = splitDays(days([9000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]), 2, 1000);
    expect(parts.map((p) => p.length)).toEqual([1, 9]);
  });

  it('does not split a few rows, nor one day, nor nothing', () => {
    expect(splitDays(days([500, 500]), 2, 20_000)).toEqual([[days([1])[0]!.day, days([1, 1])[1]!.day]]);
    expect(splitDays(days([100_000]), 2, 1000)).toEqual([[days([1])[0]!.day]]);
    expect(splitDays([], 2, 1000)).toEqual([]);
  });

  it('never makes more parts than lanes', () => {
    for (const lanes of [1, 2, 3]) expect(splitDays(days(Array.from({ length: 10 }, () => 10_000)), lanes, 1).length).toBe(lanes);
  });
});

describe('LineLength', () => {
  it('counts a line that goes on across chunks whole, and the last line without a break', () => {
    const l = new LineLength();
    for (const c of ['ab\nabc', 'defg', 'h\nxy', 'z']) l.add(Buffer.from(c));
    expect(l.longest()).toBe('abcdefgh'.length);
    const tail = new LineLength();
    for (const c of ['a\n', 'bbbbbbbbbb']) tail.add(Buffer.from(c));
    expect(tail.longest()).toBe(10);
    const none = new LineLength();
    expect(none.longest()).toBe(0);
  });
});
