// CellTally (src/engine/kit/cell-tally.ts), pure: which tallies refuse a response and in what words
// (a misreading first, then unreadable times, then numeric columns without a number), and the
// counts kept in the resource's state.
import { describe, expect, it } from 'vitest';
import { CellTally } from '../../../src/engine/kit/cell-tally.ts';

describe('CellTally', () => {
  it('an empty tally, or one with single unreadable cells, refuses nothing and counts them per column', () => {
    expect(new CellTally().refusal()).toBeNull();
    expect(new CellTally().summary()).toEqual({ unreadableCells: 0, unreadableByColumn: {} });
    const t = new CellTally();
    for (const ok of [true, false, false]) t.column('fees', ok);
    t.column('burns', true);
    // Cells outside a table never refuse, however many are unreadable.
    for (let i = 0; i < 3; i++) t.cell(false);
    t.cell(true);
    expect(t.refusal()).toBeNull();
    expect(t.unreadable).toBe(5);
    // A column whose every cell was read is not listed.
    expect(t.summary()).toEqual({ unreadableCells: 5, unreadableByColumn: { fees: 2, '(fields)': 3 } });
  });

  it('refuses every numeric column none of whose cells is a number, naming each', () => {
    const t = new CellTally();
    t.column('grade', false);
    t.column('tier', false);
    t.column('fees', true);
    t.column('fees', false);
    expect(t.refusal()).toBe('column(s) "grade", "tier" read as numeric, but no cell is a number');
  });

  it('an unreadable time outweighs such a column, and a misreading outweighs both, every reason joined', () => {
    const t = new CellTally();
    t.column('grade', false);
    t.badTime();
    t.badTime();
    expect(t.refusal()).toBe('2 row(s) with a time that cannot be read');
    t.misread('values for 3 times, 2 times given');
    t.misread('a stream twice');
    expect(t.refusal()).toBe('values for 3 times, 2 times given; a stream twice');
    // What refuses is not an unreadable cell: the counts hold the cells only.
    expect(t.summary()).toEqual({ unreadableCells: 1, unreadableByColumn: { grade: 1 } });
  });
});
