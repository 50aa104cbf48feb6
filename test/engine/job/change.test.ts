// The one skip rule (src/engine/job/change.ts): a marker as at the last success skips the fetch,
// for a bounded time; a body as last written is not written again, for a job whose rows come
// from its body alone.
import { describe, expect, it } from 'vitest';
import { markerUnchanged, sameBodyAsWritten } from '../../../src/engine/job/change.ts';
import type { ResourceStateRow } from '../../../src/store/books/resource-state.ts';

const now = new Date('2026-11-26T12:00:00Z');
const HOUR = 3_600_000;
const state = (s: Partial<ResourceStateRow> = {}): ResourceStateRow =>
  ({ status: 'ok', freshness: 'm1', hash: 'h1', rowCount: 40, details: { series: ['a'] }, lastSuccessAt: new Date(now.getTime() - HOUR), ...s }) as ResourceStateRow;

describe('markerUnchanged', () => {
  it('trusts a marker equal to the last success, not older than the bound', () => {
    expect(markerUnchanged(state(), 'm1', now, 2 * HOUR)).toBe(true);
    expect(markerUnchanged(state(), 'm2', now, 2 * HOUR)).toBe(false);
    expect(markerUnchanged(state(), null, now, 2 * HOUR)).toBe(false);
    expect(markerUnchanged(state(), 'm1', now, HOUR / 2)).toBe(false);
    expect(markerUnchanged(state({ status: 'failed' }), 'm1', now, 2 * HOUR)).toBe(false);
    expect(markerUnchanged(state({ status: 'not_materialized' }), 'm1', now, 2 * HOUR)).toBe(true);
    expect(markerUnchanged(undefined, 'm1', now, 2 * HOUR)).toBe(false);
  });
});

describe('sameBodyAsWritten', () => {
  const fetched = { status: 'ok', hash: 'h1', asOf: now, details: { series: ['b'] }, writes: [] };
  it('a body as last written: reported unchanged, its stored rows and details standing, the new asOf kept', () => {
    expect(sameBodyAsWritten(state(), fetched)).toEqual({ status: 'ok', reported: 'unchanged', asOf: now, hash: 'h1', rowCount: 40, details: { series: ['a'] } });
    expect(sameBodyAsWritten(state({ status: 'unchanged' }), fetched)).not.toBeNull();
  });
  it('anything else is written', () => {
    expect(sameBodyAsWritten(state({ hash: 'h0' }), fetched)).toBeNull();
    expect(sameBodyAsWritten(state({ status: 'partial' }), fetched)).toBeNull();
    expect(sameBodyAsWritten(state(), { ...fetched, status: 'not_materialized' })).toBeNull();
    expect(sameBodyAsWritten(state(), { ...fetched, hash: null })).toBeNull();
    expect(sameBodyAsWritten(undefined, fetched)).toBeNull();
  });
});
