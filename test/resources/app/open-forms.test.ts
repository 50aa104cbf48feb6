// The open forms of app history (every form of `stream=all`) and chart data (columns that
// are no series), read by the pure readers; and the responses they must refuse, not guess.
import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { readHistory, type HistoryRead } from '../../../src/resources/app/history-read.ts';
import { readChartPoints } from '../../../src/resources/app/chart.ts';
import { CellTally } from '../../../src/engine/kit/cell-tally.ts';
import type { JobContext } from '../../../src/engine/kit/types.ts';
import { chartData } from '../../../src/schema/upstream/app.ts';

const json = (text: string) => parse(text) as unknown;
const metrics = `{"key":"holderFcf","unit":"USD","kind":"rate"},{"key":"erm30d","unit":"x","kind":"ratio"}`;
const cols = `[{"key":"date","kind":"time"},${metrics}]`;
const doc = (stream: string | null, rows: string) => `{${stream === null ? '' : `"stream":"${stream}",`}"interval":"1d","columns":${cols},"rows":${rows}}`;
const FEES = `[["2026-01-01", 1.5, null],["2026-01-02", "2.5", 3]]`;
const BURNS = `[{"date": "2026-01-01", "holderFcf": 7, "erm30d": 8},{"date": "2026-01-02", "holderFcf": 9, "erm30d": "10"}]`;
const COLUMN_ROWS = `[["2026-01-01","fees",1.5,null],["2026-01-01","burns",7,8],["2026-01-02","fees","2.5",3],["2026-01-02","burns",9,"10"]]`;
const all = (data: string, known: string[] = []) => readHistory('abc', json(data), { stream: 'all', known: new Set(known) });

/** (stream, metric, day, value) of every row, sorted. */
function points(r: HistoryRead): string[] {
  return r.rows.map((x) => `${x.stream}|${x.metric}|${(x.ts as Date).toISOString().slice(0, 10)}|${x.value}`).sort();
}
const EXPECTED = [
  'burns|erm30d|2026-01-01|8',
  'burns|erm30d|2026-01-02|10',
  'burns|holderFcf|2026-01-01|7',
  'burns|holderFcf|2026-01-02|9',
  'fees|erm30d|2026-01-01|null',
  'fees|erm30d|2026-01-02|3',
  'fees|holderFcf|2026-01-01|1.5',
  'fees|holderFcf|2026-01-02|2.5',
];

describe('history forms of stream=all', () => {
  it('a list of MetricHistory, each naming its stream', () => {
    const r = all(`[${doc('fees', FEES)},${doc('burns', BURNS)}]`);
    expect([r.form, r.ambiguous, points(r)]).toEqual(['list', null, EXPECTED]);
  });

  it('nested under `streams`, as a list or keyed by stream', () => {
    const list = all(`{"stream":"all","streams":[${doc('fees', FEES)},${doc('burns', BURNS)}]}`);
    expect([list.form, list.ambiguous, points(list)]).toEqual(['nested', null, EXPECTED]);
    const keyed = all(`{"streams":{"fees":${doc(null, FEES)},"burns":${doc(null, BURNS)}}}`);
    expect([keyed.form, keyed.ambiguous, points(keyed)]).toEqual(['nested', null, EXPECTED]);
  });

  it("each row's unit, kind and interval come from its own stream, in every form", () => {
    // Burns in other units, weekly: a reader that took one stream's columns or interval for all would show.
    const burnCols = `[{"key":"date","kind":"time"},{"key":"holderFcf","unit":"EUR","kind":"flow"},{"key":"erm30d","unit":"y","kind":"level"}]`;
    const burns = (named: boolean, interval: string | null = '1w') => `{${named ? '"stream":"burns",' : ''}${interval ? `"interval":"${interval}",` : ''}"columns":${burnCols},"rows":${BURNS}}`;
    const fees = (named: boolean, interval: string | null = '1d') => `{${named ? '"stream":"fees",' : ''}${interval ? `"interval":"${interval}",` : ''}"columns":${cols},"rows":${FEES}}`;
    const meta = (r: HistoryRead) => [...new Set(r.rows.map((x) => `${x.stream}|${x.metric}|${x.unit}|${x.kind}|${x.interval}`))].sort();
    const OWN = ['burns|erm30d|y|level|1w', 'burns|holderFcf|EUR|flow|1w', 'fees|erm30d|x|ratio|1d', 'fees|holderFcf|USD|rate|1d'];
    expect(meta(all(`[${fees(true)},${burns(true)}]`))).toEqual(OWN);
    expect(meta(all(`{"stream":"all","streams":[${fees(true)},${burns(true)}]}`))).toEqual(OWN);
    expect(meta(all(`{"streams":{"fees":${fees(false)},"burns":${burns(false)}}}`))).toEqual(OWN);
    expect(meta(all(`{"fees":${fees(false)},"burns":${burns(false)}}`))).toEqual(OWN);
    // Nested under a head that states the interval for the streams that do not state their own.
    const hoisted = all(`{"stream":"all","interval":"1d","streams":[${fees(true, null)},${burns(true)}]}`);
    expect(meta(hoisted)).toEqual(OWN);
    // One MetricHistory for all streams: its one columns[] and interval are every row's.
    const declared = `[{"key":"date","kind":"time"},{"key":"stream","type":"dimension"},${metrics}]`;
    const column = all(`{"stream":"all","interval":"1d","columns":${declared},"rows":${COLUMN_ROWS}}`);
    expect(meta(column)).toEqual(['burns|erm30d|x|ratio|1d', 'burns|holderFcf|USD|rate|1d', 'fees|erm30d|x|ratio|1d', 'fees|holderFcf|USD|rate|1d']);
  });

  it('keyed by stream key at the top', () => {
    const r = all(`{"fees":${doc(null, FEES)},"burns":${doc('burns', BURNS)}}`);
    expect([r.form, r.ambiguous, points(r)]).toEqual(['keyed', null, EXPECTED]);
  });

  it('one MetricHistory with a declared stream dimension column (arrays or objects)', () => {
    const declared = `[{"key":"date","kind":"time"},{"key":"stream","type":"dimension"},${metrics}]`;
    const r = all(`{"stream":"all","columns":${declared},"rows":${COLUMN_ROWS}}`);
    expect([r.form, r.ambiguous, points(r)]).toEqual(['column', null, EXPECTED]);
    expect(r.rows.some((x) => x.metric === 'stream')).toBe(false);
    const objects = `[{"date":"2026-01-01","stream":"fees","holderFcf":1.5,"erm30d":null},{"date":"2026-01-01","stream":"burns","holderFcf":7,"erm30d":8},{"date":"2026-01-02","stream":"fees","holderFcf":"2.5","erm30d":3},{"date":"2026-01-02","stream":"burns","holderFcf":9,"erm30d":"10"}]`;
    const o = all(`{"stream":"all","columns":${declared},"rows":${objects}}`);
    expect([o.form, points(o)]).toEqual(['column', EXPECTED]);
  });

  it('an undeclared column told by cells that are the token\'s stream keys', () => {
    const untyped = `[{"key":"date","kind":"time"},{"key":"component"},${metrics}]`;
    const r = all(`{"stream":"all","columns":${untyped},"rows":${COLUMN_ROWS}}`, ['fees', 'burns', 'aggregate']);
    expect([r.form, r.ambiguous, points(r)]).toEqual(['column', null, EXPECTED]);
  });

  it('refuses an undeclared text column whose cells are no known stream: not a metric either', () => {
    const untyped = `[{"key":"date","kind":"time"},{"key":"component"},${metrics}]`;
    const r = all(`{"stream":"all","columns":${untyped},"rows":${COLUMN_ROWS}}`, ['lending']);
    // Not told apart by anything: the whole MetricHistory has no stream.
    expect(r.ambiguous).toMatch(/nothing tells its rows apart/);
  });

  it('refuses the same column in a single stream\'s answer through the numeric guard', () => {
    const untyped = `[{"key":"date","kind":"time"},{"key":"component"},${metrics}]`;
    const r = readHistory('abc', json(`{"stream":"fees","columns":${untyped},"rows":${COLUMN_ROWS}}`), { stream: 'fees', known: new Set() });
    expect(r.ambiguous).toBeNull();
    expect(r.cells.refusal()).toMatch(/"component" read as numeric/);
  });

  it('refuses one MetricHistory for all streams with nothing telling rows apart', () => {
    const r = all(`{"stream":"all","columns":${cols},"rows":${FEES}}`);
    expect(r.ambiguous).toMatch(/nothing tells its rows apart/);
    expect(r.rows).toEqual([]);
  });

  it('refuses what it could only guess', () => {
    expect(all(`[${doc('fees', FEES)},${doc(null, BURNS)}]`).ambiguous).toMatch(/names no stream/);
    expect(all(`[${doc('fees', FEES)},${doc('fees', BURNS)}]`).ambiguous).toMatch(/two MetricHistory objects for stream fees/);
    expect(all(`{"fees":${doc('burns', FEES)}}`).ambiguous).toMatch(/holds the MetricHistory of stream burns/);
    expect(all(`{"all":${doc(null, FEES)}}`).ambiguous).toMatch(/`all`/);
    expect(all(`[${doc('all', FEES)}]`).ambiguous).toMatch(/names no stream/);
    expect(all(`{"stream":"all","columns":[{"key":"date","kind":"time"},{"key":"chain","type":"dimension"},${metrics}],"rows":[]}`).ambiguous).toMatch(/dimension other than the stream/);
    expect(all(`{"stream":"all","columns":[{"key":"date","kind":"time"},{"key":"stream","type":"dimension"},{"key":"streamKey","type":"dimension"}],"rows":[]}`).ambiguous).toMatch(/could each be the stream/);
    expect(all(`"nope"`).ambiguous).toMatch(/neither/);
    expect(readHistory('abc', json(doc('burns', FEES)), { stream: 'fees', known: new Set() }).ambiguous).toMatch(/asked for stream fees/);
  });

  it('stores a single stream\'s answer under the stream asked for, or the one it names', () => {
    const asked = readHistory('abc', json(doc(null, FEES)), { stream: 'fees', known: new Set() });
    expect([asked.form, asked.streams]).toEqual(['single', ['fees']]);
    const named = readHistory('abc', json(doc('aggregate', FEES)), { stream: null, known: new Set() });
    expect(named.streams).toEqual(['aggregate']);
    expect(readHistory('abc', json(doc(null, FEES)), { stream: null, known: new Set() }).ambiguous).not.toBeNull();
  });
});

describe('CellTally', () => {
  it('refuses a column none of whose cells is a number, and counts single bad cells', () => {
    const t = new CellTally();
    t.column('a', true);
    t.column('a', false);
    t.cell(false);
    expect(t.refusal()).toBeNull();
    expect(t.summary()).toEqual({ unreadableCells: 2, unreadableByColumn: { a: 1, '(fields)': 1 } });
    t.column('b', false);
    expect(t.refusal()).toMatch(/"b"/);
    const times = new CellTally();
    times.badTime();
    expect(times.refusal()).toMatch(/time/);
  });
});

describe('app chart columns that are not series', () => {
  const ctx = { now: () => new Date('2026-01-03T00:00:00Z'), runId: 'r' } as unknown as JobContext;
  const chart = (columns: string, rows: string) => chartData.parse(json(`{"x":"date","columns":${columns},"rows":${rows}}`));
  const series = (r: ReturnType<typeof readChartPoints>) => r.points.map((p) => `${p.x}|${p.series}|${p.value}`);

  it('a label column labels rows and is not stored', () => {
    const r = readChartPoints(ctx, 'a', 'c', chart(`[{"key":"date"},{"key":"fees"},{"key":"note","type":"label"}]`, `[["2026-01-01",1,"estimated"],["2026-01-02",2,"reported"]]`), null);
    expect(series(r)).toEqual(['2026-01-01|fees|1', '2026-01-02|fees|2']);
    expect([r.labels, r.dimensions, r.cells.refusal()]).toEqual([['note'], [], null]);
  });

  it('an undeclared text column that tells apart rows of one x names the series', () => {
    const r = readChartPoints(ctx, 'a', 'c', chart(`[{"key":"date"},{"key":"stream"},{"key":"rev"}]`, `[["2026-01-01","fees",1],["2026-01-01","burns",2]]`), null);
    expect(series(r)).toEqual(['2026-01-01|fees/rev|1', '2026-01-01|burns/rev|2']);
    expect(r.dimensions).toEqual(['stream']);
  });

  it('counts unreadable series cells, and refuses rows without an x', () => {
    const partial = readChartPoints(ctx, 'a', 'c', chart(`[{"key":"date"},{"key":"rev"}]`, `[["2026-01-01",1],["2026-01-02",{"odd":true}]]`), null);
    expect([partial.cells.unreadable, partial.cells.refusal()]).toEqual([1, null]);
    const noX = readChartPoints(ctx, 'a', 'c', chart(`[{"key":"date"},{"key":"rev"}]`, `[[null,1]]`), null);
    expect(noX.cells.refusal()).toMatch(/time/);
  });
});
