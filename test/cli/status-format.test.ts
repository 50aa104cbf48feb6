// `tesync status` as text within a width, and its arguments: pure functions, no database.
// However long the names, errors and reasons, no line is wider than the width asked for, and
// no word is split across lines (a word wider than a line is shortened, marked with `…`).
import { describe, expect, it } from 'vitest';
import { hoursOption, migrationRefusal, outputWidth } from '../../src/cli/status.ts';
import { joinNegativeValues } from '../../src/cli/flag-values.ts';
import { fitLine, formatStatus, truncate, wrapItems, wrappedTable } from '../../src/cli/status-format.ts';
import { displayWidth } from '../../src/lib/display-width.ts';
import type { GroupChecks, GroupStatus } from '../../src/store/read/status.ts';

const now = new Date('2026-11-24T12:00:00Z');
const checks = (over: Partial<GroupChecks> = {}): GroupChecks => ({
  checked: 480,
  delisted: 0,
  retired: 0,
  oldestData: { resource: 'token/aave/history', token: 'aave', at: new Date('2026-06-30T00:00:00Z'), clock: 'newest history point', confirmedAt: now },
  leastConfirmed: { resource: 'token/aave/history', token: 'aave', at: new Date('2026-11-24T10:00:00Z') },
  stalestConfirmedAt: new Date('2026-11-24T10:00:00Z'),
  neverConfirmed: 0,
  ...over,
});
const group = (over: Partial<GroupStatus>): GroupStatus => ({
  source: 'gateway',
  group: 'history',
  resources: 480,
  ok: 470,
  failing: 10,
  dataAsOf: now,
  newestPointAt: now,
  freshness: 'fresh 470, stale 9, unknown 1',
  lastChangedAt: now,
  lastConfirmedAt: now,
  stalestConfirmedAt: now,
  unconfirmed: 0,
  statuses: { ok: 401, unchanged: 69, failed: 7, invalid: 2, rate_limited: 1 },
  failures: [{ status: 'failed', type: 'UpstreamServerError', code: 'service-unavailable', httpStatus: 503, resources: 7 }],
  lastError: null,
  checks: checks(),
  coverage: null,
  ...over,
});

// Longer than anything upstream sends today: names, verdicts, statuses, an error with CJK,
// a reason, a folder, a run status.
const longError = `ProblemError: GET /v1/tokens/${'very-long-token-slug-'.repeat(3)}x/metrics/history?period=365d failed with 503 service-unavailable: 上游服务暂时不可用，请稍后再试 (request id 0123456789abcdef)`;
const groups = [
  group({ lastError: longError, checks: checks({ neverConfirmed: 12, delisted: 3 }) }),
  group({ source: 'app', group: 'a-group-name-much-longer-than-any-today', statuses: { not_materialized: 123456, ok: 1 }, freshness: null, lastError: 'x'.repeat(300) }),
  group({ source: 'app', group: 'screener', checks: checks({ oldestData: null }), freshness: 'fresh 12345, stale 67890, not_materialized 111' }),
];
const over = [{ source: 'gateway', group: 'history', reason: `gateway.history: data of token ${'long-slug-'.repeat(4)}z (token/${'long-slug-'.repeat(4)}z/history/365d) is 147.5d old by its newest history point, 2026-06-30 00:00 UTC (more than --max-age 24h); upstream says fresh 470, stale 9; tesync last confirmed it 2.0h ago` }];
const runs = [{ id: '6d042b5c-4fc7-4c67-b61f-8f0aa6c83375', trigger: 'schedule', status: 'interrupted', startedAt: now, finishedAt: null }];
const sizes = {
  schemas: [{ schema: 'app', tables: 28, rows: 123_456_789, exact: false, unknown: 2, bytes: 12 * 1024 ** 3 }],
  tables: [{ table: 'app.metric_history_with_a_long_name', schema: 'app', rows: 123_000_000, exact: false, bytes: 10 * 1024 ** 3 }],
};
const location = `/home/someone/${'a-deeply-nested-folder/'.repeat(5)}tesync-data`;
const words = (s: string) => s.split(/\s+/).filter(Boolean);

describe('formatStatus within a width', () => {
  it.each([80, 60, 100, 132])('%i columns: no line wider', (width) => {
    const text = formatStatus(location, groups, runs, now, { sizes, over, width });
    for (const line of text.split('\n')) expect(displayWidth(line), line).toBeLessThanOrEqual(width);
  });

  it('at 80 columns a reason wraps at its spaces: all its words, whole, in order', () => {
    const text = formatStatus('Postgres at db:5432/x', groups, runs, now, { over, width: 80 });
    const at = text.indexOf('  gateway.history: data of token');
    const block = text.slice(at).split('\n');
    const end = block.findIndex((l, i) => i > 0 && !l.startsWith('      '));
    expect(words(block.slice(0, end < 0 ? undefined : end).join(' '))).toEqual(words(over[0]!.reason));
  });

  it('the table: lists wrap inside their columns at commas; the last error on its own line, cut at a space', () => {
    const history = group({ lastError: longError, checks: checks({ delisted: 3 }) });
    const text = formatStatus('Postgres at db:5432/x', [history, group({ group: 'page', freshness: null, statuses: { ok: 480 } })], runs, now, { width: 80 });
    const lines = text.split('\n');
    expect(lines).toContain('group            data time    age     confirmed  upstream      statuses');
    const row = lines.findIndex((l) => l.startsWith('gateway.history '));
    expect(lines.slice(row, row + 6)).toEqual([
      'gateway.history  2026-06-30*  147.5d  2.0h       fresh 470,    failed 7,',
      '                                                 stale 9,      invalid 2,',
      '                                                 unknown 1     ok 401,',
      '                                                               rate_limited 1,',
      '                                                               unchanged 69,',
      '                                                               3 delisted',
    ]);
    const error = lines[row + 6]!;
    expect(error).toMatch(/^ {4}last error: ProblemError: /);
    expect(error.endsWith('…')).toBe(true);
    expect(displayWidth(error)).toBeLessThanOrEqual(80);
    // The error's words in order, the last one cut where the line ends (marked …).
    const shown = words(error.slice('    last error: '.length, -1));
    expect(words(longError).slice(0, shown.length - 1)).toEqual(shown.slice(0, -1));
    expect(words(longError)[shown.length - 1]!.startsWith(shown.at(-1)!)).toBe(true);
    expect(lines[row + 7]).toBe('gateway.page     2026-06-30*  147.5d  2.0h       -             ok 480');
  });

  it('lists too long for columns at this width go on a line of their own under their group', () => {
    const lines = formatStatus('Postgres at db:5432/x', groups, runs, now, { width: 80 }).split('\n');
    expect(lines).toContain('group                                        data time    age     confirmed');
    const row = lines.findIndex((l) => l.startsWith('app.screener '));
    expect(lines.slice(row + 1, row + 3)).toEqual([
      '    upstream: fresh 12345, stale 67890, not_materialized 111; statuses: failed',
      '      7, invalid 2, ok 401, rate_limited 1, unchanged 69',
    ]);
  });

  it('a group short of what its lists promise: how much it holds and what is missing, under it (and in --wide its own column)', () => {
    const coverage = { expected: 200, covered: 47, missing: 153, notOffered: 0, walkedSince: true, listChangedAt: now, missingNamed: [{ resource: 'token/a/snapshot', why: 'never fetched' }, { resource: 'token/b/snapshot', why: 'failed (ProblemError 422 bad), nothing held' }] };
    const short = group({ source: 'app', group: 'snapshot', coverage });
    const lines = formatStatus('Postgres at db:5432/x', [short], runs, now, { width: 80 }).split('\n');
    const row = lines.findIndex((l) => l.startsWith('    held: '));
    expect(words(lines.slice(row, row + 3).join(' '))).toEqual(words('held: 47/200 (23.5%); missing: token/a/snapshot: never fetched; token/b/snapshot: failed (ProblemError 422 bad), nothing held and 151 more'));
    expect(formatStatus('x', [short], runs, now, {})).toMatch(/^app\s+snapshot\s+.*\s+47\/200 \(23\.5%\)\s+failed 7/m);
  });

  it('--wide: one line per group, as wide as it takes', () => {
    const text = formatStatus(location, groups, runs, now, { sizes, over });
    expect(text).toMatch(/^gateway\s+history\s+480\s+2026-06-30 00:00\*\s+147\.5d\s+fresh 470, stale 9, unknown 1\s+2\.0h, 12 never\s+-\s+failed 7, invalid 2, ok 401, rate_limited 1, unchanged 69, 3 delisted\s+ProblemError/m);
    expect(text).toContain(`Warehouse: ${location}\n`);
    expect(text).toContain(`  ${over[0]!.reason}\n`);
  });
});

describe('fitting text', () => {
  it('fitLine breaks at spaces, hangs the later lines, and shortens a word wider than a line in its middle', () => {
    expect(fitLine('short', 80)).toEqual(['short']);
    expect(fitLine('  alpha beta gamma delta', 14)).toEqual(['  alpha beta', '      gamma', '      delta']);
    const [first, second] = fitLine(`Warehouse: /${'x'.repeat(50)}/end-of-path`, 30);
    expect(first).toBe('Warehouse:');
    expect(second).toMatch(/^ {4}\/x+…[\w/-]*end-of-path$/);
    expect(displayWidth(second!)).toBe(30);
  });

  it('wrapItems keeps each item whole and ends a broken line with its comma', () => {
    expect(wrapItems(['failed 3', 'ok 1197', 'unchanged 12'], 16)).toEqual(['failed 3,', 'ok 1197,', 'unchanged 12']);
    expect(wrapItems(['ok 4'], 2)).toEqual(['ok 4']);
  });

  it('wrappedTable gives up width from its list columns only, down to their longest item', () => {
    const t = wrappedTable([{ header: 'name' }, { header: 'list', wrap: true }], [['a-fixed-cell', 'one 1, two 2, three 3']], 26);
    expect(t.header).toEqual(['name          list']);
    expect(t.rows[0]).toEqual(['a-fixed-cell  one 1,', '              two 2,', '              three 3']);
  });

  it('truncate cuts at a space near the end, and counts wide characters as two columns', () => {
    expect(truncate('a b  c\n d', 10)).toBe('a b c d');
    // Near the end there is a space: cut there, not inside the path.
    expect(truncate('ProblemError: GET /v1/tokens/x failed with 503', 30)).toBe('ProblemError: GET…');
    expect(truncate('ProblemError: GET /v1/tokens/x failed with 503', 40)).toBe('ProblemError: GET /v1/tokens/x failed…');
    expect(displayWidth('上游服务')).toBe(8);
    expect(displayWidth(truncate('上游服务暂时不可用', 9))).toBeLessThanOrEqual(9);
  });
});

describe('arguments', () => {
  it.each(['24', '1.5', '0.25', '720'])('hours %s are taken', (v) => {
    expect(hoursOption('--max-age', v)).toBe(Number(v));
  });

  it.each(['abc', '-3', '0', '0.0', '', ' 24', '24h', '1e3', 'Infinity', '0x10', '.5', '1.'])('hours %j are refused, naming the flag', (v) => {
    expect(() => hoursOption('--max-unconfirmed', v)).toThrow(/^--max-unconfirmed must be a number of hours greater than 0 \(e\.g\. --max-unconfirmed 24\), not ".*"$/);
  });

  it('a negative number after a flag is its value, not an option', () => {
    expect(joinNegativeValues(['--max-age', '-3', '--json'], ['--max-age'])).toEqual(['--max-age=-3', '--json']);
    expect(joinNegativeValues(['--max-age', '--json'], ['--max-age'])).toEqual(['--max-age', '--json']);
  });

  it('the width: none with --wide, a terminal its own, anything else 80', () => {
    expect(outputWidth(true, { isTTY: true, columns: 120 })).toBe(Infinity);
    expect(outputWidth(false, { isTTY: true, columns: 120 })).toBe(120);
    expect(outputWidth(false, { isTTY: false })).toBe(80);
    expect(outputWidth(false, {})).toBe(80);
  });
});

describe('which warehouses status reads', () => {
  const postgresAt = { kind: 'postgres' as const, location: 'Postgres at db:5432/theirs' };
  it('none on a Postgres of the user: not a tesync warehouse; on the embedded one: simply empty', () => {
    expect(migrationRefusal({ state: 'none' }, postgresAt)).toMatch(/^not a tesync warehouse: Postgres at db:5432\/theirs has no tesync schema;/);
    expect(migrationRefusal({ state: 'none' }, { kind: 'embedded', location: '/data' })).toBeNull();
  });

  it('another release: behind says to migrate, ahead says so', () => {
    const at = { applied: 12, appliedTag: '0011_one_clock', expected: 18, expectedTag: '0017_run_ledger' };
    expect(migrationRefusal({ state: 'behind', ...at }, postgresAt)).toBe('warehouse is at migration 12 (0011_one_clock), this tesync expects 18 (0017_run_ledger): run `tesync migrate` (Postgres at db:5432/theirs)');
    expect(migrationRefusal({ state: 'ahead', ...at, applied: 19, appliedTag: null }, postgresAt)).toMatch(/^warehouse is at migration 19, newer than this tesync, which expects 18/);
    expect(migrationRefusal({ state: 'current', ...at, applied: 18 }, postgresAt)).toBeNull();
  });
});
