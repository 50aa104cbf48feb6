// The export's lanes: writers opened when a task first needs one, never more than the lanes;
// how an archive's days are split between them; the longest line of a CSV as it streams in
// chunks (the reader's line limit when a row is read through a file).
import { describe, expect, it } from 'vitest';
import { Lanes, splitDays } from '../../src/export/lanes.ts';
import type { ParquetWriter } from '../../src/export/parquet.ts';
import { LineLength } from '../../src/export/pg-read.ts';

const days = (rows: number[]) => rows.map((n, i) => ({ day: `2026-01-${String(i + 1).padStart(2, '0')}`, rows: n }));

describe('Lanes', () => {
  it('opens a writer when a task first needs one, never more than the lanes, and hands a free one to the next task', async () => {
    const lanes = await Lanes.open(2);
    try {
      const writerOf = new Map<string, ParquetWriter>();
      const release = new Map<string, () => void>();
      const started = () => [...release.keys()].sort();
      const task = (name: string) =>
        lanes.run(async (w) => {
          writerOf.set(name, w);
          await new Promise<void>((r) => release.set(name, r));
        });
      const tasks = ['a', 'b', 'c'].map(task);
      const until = async (n: number) => {
        while (release.size < n) await new Promise((r) => setTimeout(r, 5));
      };
      await until(2);
      await new Promise((r) => setTimeout(r, 20));
      expect(started()).toEqual(['a', 'b']);
      release.get('a')!();
      await until(3);
      expect(writerOf.get('c')).toBe(writerOf.get('a'));
      expect(writerOf.get('b')).not.toBe(writerOf.get('a'));
      for (const r of release.values()) r();
      await Promise.all(tasks);
    } finally {
      lanes.close();
    }
  });
});

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
