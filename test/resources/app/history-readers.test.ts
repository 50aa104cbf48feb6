// The app history's two readers, pure: what each asks for and what it reads from what came back,
// with no IO (no simulator, no warehouse): the engine's part (sending, validating, asking the
// warehouse) is test/engine/fetch/reader.test.ts's and the sync tests'.
import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import type { Got, Outcome, ReadInput, SyncSettings } from '../../../src/engine/kit/types.ts';
import { ProblemError } from '../../../src/lib/errors.ts';
import { appHistoryJob } from '../../../src/resources/app/history.ts';
import type { ResourceStateRow } from '../../../src/store/books/resource-state.ts';

const cols = `[{"key":"date","kind":"time"},{"key":"holderFcf","unit":"USD","kind":"rate"}]`;
const stream = (key: string) => parse(`{"stream":"${key}","columns":${cols},"rows":[["2026-01-01", 1.5],["2026-01-02", "2.5"]]}`) as unknown;
const settings = { full: false, historyOverlapDays: 3, historyFullRefetchMs: 7 * 86_400_000, historyFromParam: 'from' } as SyncSettings;
const NOW = new Date('2026-02-01T00:00:00Z');

function input(o: { keys?: string[]; details?: Record<string, unknown>; refusal?: string } = {}): ReadInput<{ slug: string }> {
  const state = o.details ? ({ details: o.details } as unknown as ResourceStateRow) : undefined;
  return { payload: { slug: 'aurora' }, state, known: { knownStreamKeys: new Set(o.keys ?? []) }, settings, runId: 'run-1', now: () => NOW, ...(o.refusal ? { refusal: o.refusal } : {}) };
}

/** What came back for an Ask: its data (validated) or a problem. */
function answer(ask: Got['ask'], data: unknown, incremental = false): Got {
  const response = { path: `/api/v1/tokens/aurora/metrics/history?stream=${String(ask.query?.stream ?? '')}`, sha256: `h-${String(ask.query?.stream ?? 'default')}` };
  return { ask, fetched: { response, data, meta: { asOf: null }, body: {} } as never, incremental };
}
const problem = (ask: Got['ask'], code: string): Got => ({ ask, problem: new ProblemError({ status: 400, code, path: '/x', extensions: {} } as never), incremental: false });

const reader = appHistoryJob.reader;
const alternative = appHistoryJob.alternative!;

describe('app history, stream=all', () => {
  it('asks every stream at once, whole the first time and from the overlap before the last day after', () => {
    expect(reader.asks(input())).toEqual([expect.objectContaining({ route: 'app.history', params: { slug: 'aurora' }, query: { stream: 'all' }, since: expect.objectContaining({ from: null }) })]);
    const later = input({ details: { lastTs: '2026-01-30T00:00:00Z', lastFullAt: '2026-01-31T00:00:00Z', form: 'list' } });
    expect(reader.asks(later)[0]!.since!.from).toBe('2026-01-27');
    expect(appHistoryJob.startsWithAlternative!(later)).toBe(false);
  });

  it('reads two streams into rows that state the token\'s history whole; a form it cannot split is refused', () => {
    const [ask] = reader.asks(input());
    const read = reader.read(input(), [answer(ask!, [stream('fees'), stream('burns')])]) as Outcome;
    expect(read.status).toBe('ok');
    expect(read.writes![0]!.rows).toHaveLength(4);
    expect(read.writes![0]!.replace).toEqual({ tokenSlug: 'aurora' });
    expect(read.details).toMatchObject({ form: 'list', streams: ['fees', 'burns'], incremental: false, lastFullAt: NOW.toISOString() });
    // An incremental answer states only what it carries: nothing leaves.
    expect((reader.read(input(), [answer(ask!, [stream('fees')], true)]) as Outcome).writes![0]!.replace).toBeUndefined();
    expect(reader.read(input(), [answer(ask!, 'nothing')])).toEqual({ refused: expect.any(String) });
  });
});

describe('app history, stream by stream', () => {
  it('is taken at once while the form that worked was per-stream and no whole fetch is due', () => {
    expect(appHistoryJob.startsWithAlternative!(input({ details: { form: 'per-stream', lastFullAt: '2026-01-30T00:00:00Z' } }))).toBe(true);
    expect(appHistoryJob.startsWithAlternative!(input({ details: { form: 'per-stream', lastFullAt: '2026-01-01T00:00:00Z' } }))).toBe(false);
  });

  it('asks the default, then each other key the warehouse knows; a key without history is noted, not refused', () => {
    const i = input({ keys: ['fees', 'burns', 'aggregate'], refusal: 'stream=all: nothing tells its rows apart' });
    const [first] = alternative.asks(i);
    expect(first).toMatchObject({ query: {}, since: { from: null } });
    const got: Got[] = [answer(first!, stream('aggregate'))];
    const next = alternative.more!(i, got);
    expect(next.map((a) => a.query?.stream)).toEqual(['burns', 'fees']);
    expect(next.every((a) => a.answers?.codes?.includes('stream_not_found'))).toBe(true);
    got.push(answer(next[0]!, stream('burns')), problem(next[1]!, 'stream_not_found'));
    expect(alternative.more!(i, got)).toEqual([]);
    const read = alternative.read(i, got) as Outcome;
    expect(read.details).toMatchObject({ form: 'per-stream', streams: ['aggregate', 'burns'], streamsWithoutHistory: ['fees'], refusedAll: 'stream=all: nothing tells its rows apart' });
    expect(read.writes!.map((w) => w.replace)).toEqual([
      { tokenSlug: 'aurora', stream: 'aggregate' },
      { tokenSlug: 'aurora', stream: 'burns' },
    ]);
  });

  it('when the warehouse knows no keys: the snapshot\'s, then the screener row\'s, asked as data', () => {
    const i = input();
    const [first] = alternative.asks(i);
    const got: Got[] = [answer(first!, stream('aggregate'))];
    const [snapshot] = alternative.more!(i, got);
    expect(snapshot).toMatchObject({ route: 'app.token', params: { slug: 'aurora' }, answers: { any: true } });
    got.push({ ask: snapshot!, problem: new ProblemError({ status: 404, code: 'token_not_found', path: '/x', extensions: {} } as never), incremental: false });
    const [screener] = alternative.more!(i, got);
    expect(screener).toMatchObject({ route: 'app.screener', list: {} });
    got.push({ ask: screener!, list: { items: [{ token: 'aurora', streams: [{ key: 'aggregate' }, { key: 'fees' }] }] } as never, incremental: false });
    expect(alternative.more!(i, got).map((a) => a.query?.stream)).toEqual(['fees']);
  });
});
