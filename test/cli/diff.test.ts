// `tesync diff` as a user runs it, on a warehouse synced three times across the simulator's
// delisting and revision: in an 80-column tmux pane (a summary per table, then the changes,
// no line wrapped), as JSON lines read back (every change, decimals as strings, digit for
// digit), as Parquet read by DuckDB; nothing changed is a summary of zeros; a bad command
// line exits 2 naming its flag.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/lib/display-width.ts';
import { isLosslessNumber, parseJson } from '../../src/lib/json.ts';
import { runCli } from '../helpers/cli.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey, createTestLogger, uniqueName } from '../helpers/services.ts';
import { requireTmux, tmuxPane, type TmuxPane } from '../helpers/tmux.ts';

const COLUMNS = 80;
const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const { logger } = createTestLogger([appKey, gatewayKey], 'warn');

describe('tesync diff', () => {
  const fx = useSimAndWarehouse({ tokens: 5, historyDays: 10, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  const runs: string[] = [];
  let dir: string;
  let pane: TmuxPane | undefined;
  const env = () => ({ DATABASE_URL: fx.databaseUrl });
  const q = <T>(statement: string) => fx.warehouse.query<T & Record<string, unknown>>(sql.raw(statement));

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tesync-diff-'));
    for (const epoch of [0, 1, 2]) {
      fx.sim.setEpoch(epoch);
      const r = await fx.sync(logger, { appKey, gatewayKey }, ['app', 'gateway'], epoch === 2 ? { full: true } : {});
      expect(r.status).toBe('succeeded');
      runs.push(r.runId);
    }
  }, patience(180_000));
  afterAll(() => {
    pane?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('on an 80-column terminal: what the last sync changed, a summary per table then the changes, no line wrapped', async () => {
    requireTmux();
    pane = tmuxPane(uniqueName('tesync_diff'), dir, COLUMNS, { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? dir, LANG: 'C.UTF-8', ...env() }, ['diff', '--from', 'last-1', '--to', 'last']);
    const seen = await pane.until((t) => t.includes('tesync exited'), 60_000);
    const screen = seen.at(-1)!;
    expect(screen).toMatch(/^tesync exited 0$/m);
    // The pane keeps its last 50 rows; the whole output is read from a child the same way.
    const whole = await runCli(['diff', '--from', 'last-1', '--to', 'last'], env());
    expect(whole.code, whole.stderr).toBe(0);
    const lines = whole.stdout.split('\n');
    for (const line of [...lines, ...screen.split('\n')]) expect(displayWidth(line), line).toBeLessThanOrEqual(COLUMNS);
    expect(lines[0]).toMatch(/^Changes known after \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z \(end of run [0-9a-f]{8}\)$/);
    expect(lines[0]).toContain(runs[1]!.slice(0, 8));
    expect(lines[1]).toContain(runs[2]!.slice(0, 8));
    expect(lines[3]).toMatch(/^table +inserts +updates +deletes +revisions$/);
    const revised = fx.sim.data.epochChanges.epoch2.revised!;
    const history = lines.find((l) => l.startsWith('app.metric_history '))!;
    const [inserts, updates, deletes, revisions] = history.split(/ +/).slice(1).map((n) => Number(n.replace(/,/g, '')));
    expect(revisions).toBe(revised.appHistory.cells.length);
    expect(updates).toBeGreaterThanOrEqual(revised.appHistory.cells.length);
    expect(lines).toContain(`app.metric_history: ${(inserts! + updates! + deletes!).toLocaleString('en-US')} changes`);
    expect(whole.stdout).toContain('R: a revision');

    // Each revision says what the value was and what it became, exactly as stored.
    const only = await runCli(['diff', '--from', 'last-1', '--to', 'last', '--revisions', '--table', 'app.metric_history'], env());
    expect(only.code, only.stderr).toBe(0);
    const out = only.stdout.split('\n');
    const listed = out.map((l, i) => [l, out[i + 1]!] as const).filter(([l]) => l.startsWith('R '));
    expect(listed.length).toBe(Math.min(20, revised.appHistory.cells.length));
    const said = new Set(revised.appHistory.cells.map((c) => `R update ${revised.slug} ${c.stream} ${c.metric} ${c.date}\n    value ${c.before} → ${c.after}`));
    for (const [line, next] of listed) expect(said.has(`${line}\n${next}`), `${line}\n${next}`).toBe(true);
  });

  it('nothing changed: a summary of zeros, exit 0', async () => {
    const r = await runCli(['diff', '--from', 'last', '--to', 'last'], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^all 26 tables +0 +0 +0 +0$/m);
    expect(r.stdout).toMatch(/^app\.tokens +0 +0 +0 +0$/m);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('Nothing changed.');
  });

  it('--format jsonl: a summary line per table, then every change, decimals as strings, read back exactly', async () => {
    const r = await runCli(['diff', '--from', runs[0]!, '--to', 'last', '--format', 'jsonl'], env());
    expect(r.code, r.stderr).toBe(0);
    const records = r.stdout.trimEnd().split('\n').map((l) => parseJson(l) as Record<string, unknown>);
    const summaries = records.filter((x) => x.kind === 'summary');
    const changes = records.filter((x) => x.kind === 'change');
    expect(summaries.length).toBe(26);
    expect(records.indexOf(changes[0]!)).toBe(26);
    const total = (k: string) => summaries.reduce((n, s) => n + Number(String(s[k])), 0);
    expect(changes.length).toBe(total('inserts') + total('updates') + total('deletes'));
    const [db] = await q<{ n: number }>(
      `select sum(inserts + updates + deletes)::int as n from sync.change_summary('${runs[0]}'::uuid, '${runs[2]}'::uuid)`,
    );
    expect(changes.length).toBe(db!.n);
    // Every decimal column's value a string: no number left for a reader to round.
    for (const c of changes.filter((x) => x.table === 'app.metric_history')) {
      for (const side of ['before', 'after'] as const) {
        const row = c[side] as Record<string, unknown> | null;
        if (row) expect(typeof row.value === 'string' || row.value === null, JSON.stringify(row)).toBe(true);
        if (row) expect(isLosslessNumber(row.value)).toBe(false);
      }
    }
    const revised = fx.sim.data.epochChanges.epoch2.revised!;
    const revisions = changes.filter((c) => c.revision === true && c.table === 'app.metric_history');
    expect(revisions.length).toBe(revised.appHistory.cells.length);
    for (const cell of revised.appHistory.cells) {
      const found = revisions.find((c) => {
        const k = c.key as Record<string, string>;
        return k.token_slug === revised.slug && k.stream === cell.stream && k.metric === cell.metric && String(k.ts).startsWith(cell.date);
      });
      expect(found, `${cell.stream} ${cell.metric} ${cell.date}`).toBeDefined();
      expect([(found!.before as Record<string, unknown>).value, (found!.after as Record<string, unknown>).value]).toEqual([cell.before?.toString() ?? null, cell.after.toString()]);
    }
  });

  it('--format parquet: a file per table that changed, read by DuckDB with its bounds', async () => {
    const out = path.join(dir, 'export');
    const r = await runCli(['diff', '--from', runs[1]!, '--to', runs[2]!, '--format', 'parquet', '--to-dir', out, '--revisions'], env());
    expect(r.code, r.stderr).toBe(0);
    for (const line of r.stdout.split('\n')) if (!line.startsWith('  /')) expect(displayWidth(line), line).toBeLessThanOrEqual(COLUMNS);
    expect(r.stdout).toContain('app.metric_history.parquet');
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    try {
      await duck.run("SET TimeZone = 'UTC'");
      const read = await duck.runAndReadAll(
        `select "table", change_type, revision, json_extract_string(after, '$.value') as value, "from", "to", typeof(known_at) as t
           from read_parquet('${out}/revisions/*/*/*.parquet', hive_partitioning = true, hive_types_autocast = false) order by "table", known_at`,
      );
      const rows = read.getRowObjects();
      const revised = fx.sim.data.epochChanges.epoch2.revised!;
      expect(rows.filter((x) => x.table === 'app.metric_history').length).toBe(revised.appHistory.cells.length);
      expect(rows.every((x) => x.revision === true && x.change_type === 'update')).toBe(true);
      expect(rows[0]!.t).toBe('TIMESTAMP WITH TIME ZONE');
      const [ends] = await q<{ a: string; b: string }>(
        `select to_char(a.finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as a, to_char(b.finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as b
           from sync.runs a, sync.runs b where a.id = '${runs[1]}' and b.id = '${runs[2]}'`,
      );
      expect(new Set(rows.map((x) => `${String(x.from)} ${String(x.to)}`))).toEqual(new Set([`${ends!.a} ${ends!.b}`]));
      const values = new Set(rows.filter((x) => x.table === 'app.metric_history').map((x) => String(x.value)));
      for (const cell of revised.appHistory.cells) expect(values.has(cell.after.toString()), cell.after.toString()).toBe(true);
    } finally {
      duck.closeSync();
    }
  });

  it.each([
    [['--from', 'yesterday', '--to', 'last'], /--from "yesterday"/],
    [['--from', 'last', '--to', '2026-02-30T00:00:00Z'], /--to "2026-02-30T00:00:00Z".*not a day of the calendar/],
    [['--from', 'last-9', '--to', 'last'], /--from: the warehouse holds 3 finished sync runs/],
    [['--from', '00000000-0000-0000-0000-000000000000', '--to', 'last'], /--from: no run 00000000-0000-0000-0000-000000000000/],
    [['--from', 'last', '--to', 'last-1'], /--from .* is after --to/],
    [['--from', 'last-1', '--to', 'last', '--table', 'app.no_such'], /--table "app\.no_such" is not a versioned table/],
    [['--from', 'last-1', '--to', 'last', '--table', 'tokens'], /--table "tokens": say which, app\.tokens or gateway\.tokens/],
    [['--from', 'last-1', '--to', 'last', '--format', 'csv'], /--format must be text, jsonl, parquet, not "csv"/],
    [['--from', 'last-1', '--to', 'last', '--format', 'parquet'], /--format parquet: say where with --to-dir DIR, or set TE_EXPORT_DIR/],
    [['--from', 'last-1'], /--to/],
  ])('tesync diff %j: exit 2 naming the flag', async (args, message) => {
    const r = await runCli(['diff', ...args], env());
    expect(r.code, r.stdout).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
