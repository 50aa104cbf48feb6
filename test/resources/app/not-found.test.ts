// The app planners' rule for resources a 404 said do not exist: asked again only once their
// list entry changed since the 404, or a whole list left them out and lists them again.
import { describe, expect, it } from 'vitest';
import { currentMark, judgeNotFound, withoutLeftOut, type NotFoundState } from '../../../src/resources/app/not-found.ts';

const at = new Date('2026-06-30T10:00:00.000Z');
const state = (details: unknown = null, lastAttemptAt: Date | null = at): NotFoundState => ({ resource: 'token/a/history', lastAttemptAt, details });
const mark = (m: { marker?: string | null; absent?: boolean; at?: string } = {}) => ({ notFound: { at: at.toISOString(), marker: 'm1', absent: false, ...m } });

describe('currentMark', () => {
  it('reads the mark of the current 404 only', () => {
    expect(currentMark(state(mark()))).toEqual({ at: at.toISOString(), marker: 'm1', absent: false });
    // A later 404 (another last_attempt_at) starts afresh.
    expect(currentMark(state(mark({ at: '2026-06-29T10:00:00.000Z' })))).toBeNull();
    expect(currentMark(state({ rowsWithoutX: 1 }))).toBeNull();
    expect(currentMark(state(null))).toBeNull();
    expect(currentMark(state({ notFound: { at: at.toISOString(), marker: 'm1' } }))).toBeNull();
  });
});

describe('judgeNotFound', () => {
  it('first seen: marks the entry as the 404 saw it (the stored marker) and decides on it', () => {
    expect(judgeNotFound(state(), { marker: 'm1', previous: 'm1' }, true)).toEqual({ ask: false, mark: { at: at.toISOString(), marker: 'm1', absent: false } });
    // The list moved between the 404 and now: ask again.
    expect(judgeNotFound(state(), { marker: 'm2', previous: 'm1' }, true)).toEqual({ ask: true, mark: { at: at.toISOString(), marker: 'm1', absent: false } });
  });

  it('leaves it alone while the entry is as at the 404, without writing again', () => {
    expect(judgeNotFound(state(mark()), { marker: 'm1', previous: 'm1' }, true)).toEqual({ ask: false, mark: null });
    expect(judgeNotFound(state(mark({ marker: null })), { marker: null, previous: null }, true)).toEqual({ ask: false, mark: null });
  });

  it('asks again once the entry marker differs from the one at the 404, and keeps asking until a fetch settles it', () => {
    expect(judgeNotFound(state(mark()), { marker: 'm2', previous: 'm2' }, true)).toEqual({ ask: true, mark: null });
    expect(judgeNotFound(state(mark()), { marker: 'm2', previous: 'm2' }, true).ask).toBe(true);
  });

  it('marks it absent when a whole list leaves it out, and asks once it is listed again, marker unchanged', () => {
    const left = judgeNotFound(state(mark()), undefined, true);
    expect(left).toEqual({ ask: false, mark: { at: at.toISOString(), marker: 'm1', absent: true } });
    expect(judgeNotFound(state({ notFound: left.mark }), { marker: 'm1', previous: 'm1' }, true)).toEqual({ ask: true, mark: null });
  });

  it('a partial list proves no absence', () => {
    expect(judgeNotFound(state(mark()), undefined, false)).toEqual({ ask: false, mark: null });
    expect(judgeNotFound(state(), undefined, false)).toEqual({ ask: false, mark: { at: at.toISOString(), marker: null, absent: false } });
  });
});

describe('withoutLeftOut', () => {
  it('drops the follow-ups of left-out resources only', () => {
    const f = [{ name: 'a', payload: 1 }, { name: 'b', payload: 2 }, { name: 'c', payload: 3 }];
    const resourceOf = (r: { name: string }) => (r.name === 'c' ? null : `r/${r.name}`);
    expect(withoutLeftOut(f, new Set(['r/a', 'r/c']), resourceOf).map((r) => r.name)).toEqual(['b', 'c']);
    expect(withoutLeftOut(f, new Set(), resourceOf)).toEqual(f);
  });
});
