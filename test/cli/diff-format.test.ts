// `tesync diff`'s pure parts: its bounds and flags read (an instant as export reads one, a run
// id, last / last-N; exit 2 naming the flag otherwise), its text within 80 columns, the folder
// its Parquet goes to.
import { describe, expect, it } from 'vitest';
import { readBound, readDiffArgs } from '../../src/cli/diff-args.ts';
import { changeLines, closingLine, diffHeader, summaryLines, tableSection } from '../../src/cli/diff-format.ts';
import { UsageError } from '../../src/cli/context.ts';
import { changesFolder } from '../../src/export/changes.ts';
import { displayWidth } from '../../src/lib/display-width.ts';
import { CHANGED_TABLES, changesFrom, type ChangedTable, type ListedChange } from '../../src/store/read/changes.ts';

const history = CHANGED_TABLES.find((t) => t.name === 'app.metric_history')!;
const usage = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err instanceof UsageError ? err.message : `not a UsageError: ${String(err)}`;
  }
  return 'no error';
};

describe('bounds', () => {
  it('an instant as tesync export reads one: UTC unless an offset, to the microsecond', () => {
    expect(readBound('--from', '2026-11-28T12:00:00Z')).toEqual({ instant: '2026-11-28T12:00:00.000000Z' });
    expect(readBound('--from', '2026-11-28 21:00:00.123456+09:00')).toEqual({ instant: '2026-11-28T12:00:00.123456Z' });
    expect(readBound('--to', '2026-11-28')).toEqual({ instant: '2026-11-28T00:00:00.000000Z' });
  });

  it('a run id, last and last-N', () => {
    expect(readBound('--from', '0F1A85D0-B4BD-4D1D-AEF8-DD5804F89471')).toEqual({ run: '0f1a85d0-b4bd-4d1d-aef8-dd5804f89471' });
    expect(readBound('--from', 'last')).toEqual({ last: 0 });
    expect(readBound('--from', 'last-1')).toEqual({ last: 1 });
    expect(readBound('--to', 'last-12')).toEqual({ last: 12 });
  });

  it('anything else: exit 2 naming the flag and the value', () => {
    expect(usage(() => readBound('--from', 'now'))).toMatch(/^--from "now": an instant .*"now" is a word, not an instant/);
    expect(usage(() => readBound('--to', 'last+1'))).toMatch(/^--to "last\+1"/);
    expect(usage(() => readBound('--to', '2026-11-28T12:00:00.1234567Z'))).toMatch(/finer than a microsecond/);
  });
});

describe('flags', () => {
  it('every versioned table by default, in name order; --table by name, or alone when one schema has it', () => {
    const all = readDiffArgs({ from: 'last-1', to: 'last' }, CHANGED_TABLES);
    expect(all.tables.map((t) => t.name)).toEqual(CHANGED_TABLES.map((t) => t.name));
    expect(all).toMatchObject({ format: 'text', net: false, revisions: false, from: { last: 1 }, to: { last: 0 } });
    const some = readDiffArgs({ from: 'last-1', to: 'last', table: ['gateway.tokens,metric_history', 'app.metric_history'], net: true }, CHANGED_TABLES);
    expect(some.tables.map((t) => t.name)).toEqual(['app.metric_history', 'gateway.tokens']);
    expect(some.net).toBe(true);
  });

  it('parquet goes to --to-dir, else TE_EXPORT_DIR; --to-dir is for parquet only', () => {
    expect(readDiffArgs({ from: 'last-1', to: 'last', format: 'parquet' }, CHANGED_TABLES, '/exports').toDir).toBe('/exports');
    expect(readDiffArgs({ from: 'last-1', to: 'last', format: 'parquet', 'to-dir': '/mine' }, CHANGED_TABLES, '/exports').toDir).toBe('/mine');
    expect(usage(() => readDiffArgs({ from: 'last-1', to: 'last', 'to-dir': '/mine' }, CHANGED_TABLES))).toMatch(/^--to-dir .* with --format parquet/);
    expect(usage(() => readDiffArgs({ from: 'last-1', to: 'last', format: 'parquet' }, CHANGED_TABLES))).toMatch(/^--format parquet: say where/);
  });

  it('names the flag of what it cannot read', () => {
    expect(usage(() => readDiffArgs({ to: 'last' }, CHANGED_TABLES))).toMatch(/--from/);
    expect(usage(() => readDiffArgs({ from: 'last' }, CHANGED_TABLES))).toMatch(/--to/);
    expect(usage(() => readDiffArgs({ from: 'last-1', to: 'last', format: 'csv' }, CHANGED_TABLES))).toBe('--format must be text, jsonl, parquet, not "csv"');
    expect(usage(() => readDiffArgs({ from: 'last-1', to: 'last', table: ['app.metric_histroy'] }, CHANGED_TABLES))).toMatch(/^--table "app\.metric_histroy" is not a versioned table; did you mean app\.metric_history\?/);
    expect(usage(() => readDiffArgs({ from: 'last-1', to: 'last', table: ['app.screener_daily'] }, CHANGED_TABLES))).toMatch(/not a versioned table/);
    expect(usage(() => readDiffArgs({ from: 'last-1', to: 'last', table: ['charts'] }, CHANGED_TABLES))).toBe('--table "charts": say which, app.charts or gateway.charts');
  });
});

describe('text within 80 columns', () => {
  const change = (c: Partial<ListedChange>): ListedChange => ({ type: 'update', key: '{}', knownAt: '2026-12-07T11:49:21.526110Z', before: null, after: null, changed: [], revision: false, ...c });
  const key = '{"ts": "2026-06-24T00:00:00+00:00", "metric": "effectiveMarketCap", "stream": "aggregate", "token_slug": "aurora"}';

  it('a summary per table, zeros included, and a total', () => {
    const counts = CHANGED_TABLES.map((t, i) => ({ table: t.name, inserts: i === 0 ? 1234567 : 0, updates: 0, deletes: 0, revisions: 0 }));
    const lines = summaryLines(counts);
    expect(lines[0]).toMatch(/^table +inserts +updates +deletes +revisions$/);
    expect(lines.at(-1)).toMatch(/^all 26 tables +1,234,567 +0 +0 +0$/);
    expect(lines).toContain(lines.find((l) => l.startsWith('gateway.screener_unmatched')));
    for (const l of lines) expect(displayWidth(l), l).toBeLessThanOrEqual(80);
    expect(closingLine(counts.map((c) => ({ ...c, inserts: 0 })), false)).toBe('Nothing changed.');
  });

  it("a change: its type and its key in the key order; under an update, each column's values, exactly", () => {
    const revised = changeLines(history, change({ key, revision: true, changed: ['value', 'as_of'], before: '{"value": "62691048.2758621411", "as_of": "2026-07-01T00:00:00+00:00"}', after: '{"value": "65279003.1", "as_of": "2026-07-02T00:00:00+00:00"}' }));
    expect(revised).toEqual([
      'R update aurora aggregate effectiveMarketCap 2026-06-24',
      '    value 62691048.2758621411 → 65279003.1',
      '    as_of 2026-07-01 → 2026-07-02',
    ]);
    // A value too long for one line goes on two; JSON values and columns past three, by name.
    const digits = `1.${'1'.repeat(68)}`;
    const long = changeLines(history, change({ key, changed: ['value', 'unit', 'kind', 'interval', 'payload'], before: `{"value": ${digits}, "unit": "usd", "kind": "a", "interval": "1d", "payload": {"a": 1}}`, after: '{"value": 2, "unit": null, "kind": "b", "interval": "1w", "payload": {"a": 2}}' }));
    expect(long).toEqual(['  update aurora aggregate effectiveMarketCap 2026-06-24', `    value ${digits}`, '          → 2', '    unit usd → null', '    kind a → b', '    also interval, payload']);
    expect(changeLines(history, change({ type: 'insert', key }))).toEqual(['  insert aurora aggregate effectiveMarketCap 2026-06-24']);
    const wide: ChangedTable = { name: 'app.x', key: ['slug'], decimals: [] };
    const cut = changeLines(wide, change({ key: `{"slug": "${'漢'.repeat(60)}"}`, changed: ['v'], before: `{"v": "${'x'.repeat(200)}"}`, after: '{"v": "y"}' }));
    for (const l of cut) expect(displayWidth(l), l).toBeLessThanOrEqual(80);
  });

  it('a section says how many it leaves out; the header names the bounds and their runs', () => {
    const counts = { table: history.name, inserts: 30, updates: 2, deletes: 0, revisions: 2 };
    const section = tableSection(history, counts, [change({ key, type: 'insert' })]);
    expect(section[0]).toBe('app.metric_history: 32 changes');
    expect(section.at(-1)).toBe('  … 31 more (--format jsonl lists every one)');
    const header = diffHeader({ net: true, revisions: true }, { at: '2026-12-07T11:49:20.165529Z', run: '89058f2a-bafc-4c1e-9104-1c8b8f52763f' }, { at: '2026-12-07T12:00:00.000000Z' });
    expect(header).toEqual(['Net revisions known after 2026-12-07T11:49:20.165529Z (end of run 89058f2a)', '              and by 2026-12-07T12:00:00.000000Z']);
  });
});

describe('the reads', () => {
  it("name the function and leave the decimals' text as it is", () => {
    const q = { table: history, from: '2026-12-01T00:00:00.000000Z', to: '2026-12-02T00:00:00.000000Z' };
    expect(changesFrom(q)).toContain("from sync.changes('app.metric_history'::regclass, '2026-12-01T00:00:00.000000Z'::timestamptz, '2026-12-02T00:00:00.000000Z'::timestamptz) c)");
    expect(changesFrom({ ...q, net: true, revisionsOnly: true })).toMatch(/sync\.changes_net\(.*\) c where c\.revision\)/s);
    expect(changesFrom(q)).toContain("c.after || jsonb_build_object('value', c.after ->> 'value')");
    expect(history.decimals).toEqual(['value']);
  });

  it('Parquet goes in a folder per kind and interval', () => {
    expect(changesFolder('/x', { from: 'A', to: 'B' })).toBe('/x/changes/from=A/to=B');
    expect(changesFolder('/x', { from: 'A', to: 'B', net: true, revisionsOnly: true })).toBe('/x/revisions_net/from=A/to=B');
  });
});
