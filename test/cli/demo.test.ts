// A newcomer's first commands, run as a user would: `tesync demo` twice on the embedded
// warehouse (no DATABASE_URL, no Redis), then `tesync status` and `tesync sql`.
//
// The two demos are started at once on one TE_DATA_DIR, as by a user who runs a second before
// the first is done: the second waits for the first (the sync lock), then does what a second
// demo does, so one folder shows the first demo, the second and the wait.
import { spawn } from 'node:child_process';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, childEnv, runCli, type CliResult } from '../helpers/cli.ts';
import { embeddedFolder, isAlive, serverPids, type TempFolder } from '../helpers/embedded.ts';
import { patience } from '../helpers/patience.ts';
import { freshDatabase } from '../helpers/mirror-fixture.ts';
import { displayWidth } from '../../src/lib/display-width.ts';

const requestsOf = (out: string) => Number(/requests: (\d+)/.exec(out)?.[1] ?? NaN);
/** The lines of a demo's output wider than 80 terminal columns. */
const wide = (out: string) => out.split('\n').filter((l) => displayWidth(l) > 80);
/** A summary line the demo broke to fit 80 columns, joined back. */
const joined = (out: string) => out.replace(/\n {4}/g, ' ');
/** Today, UTC: the demo's simulator dates its data up to it. */
const today = () => new Date().toISOString().slice(0, 10);
/**
 * Hours allowed for "under a day old": 24, and on a run that crossed midnight UTC after the
 * demos, 24 more (the demo's data is dated up to its own day, which has ended).
 */
const dayOldHours = (demoDay: string) => (today() === demoDay ? 24 : 48);
const EARLIER_DEMO = 'The warehouse already holds an earlier demo: only what changed is fetched.';

describe('demo, status and sql on the embedded warehouse', () => {
  /** Each table's rows as `status --json` gave them right after the demos (checked against count(*) through `tesync sql`). */
  let statusRows: { table: string; rows: number | null }[] | undefined;
  let folder: TempFolder;
  let cwd: string;
  let both: CliResult[];
  /** The demo that synced into the empty warehouse. */
  let first: CliResult;
  /** The one that found the first's data there. */
  let second: CliResult;
  /** The day the demos ran on, UTC. */
  let demoDay: string;
  beforeAll(async () => {
    demoDay = today();
    folder = await embeddedFolder('tesync-demo');
    cwd = folder.dir;
    both = await Promise.all([0, 1].map(() => runCli(['demo', '--tokens', '6'], {}, { cwd, timeoutMs: 60_000 })));
    first = both.find((r) => !r.stdout.includes(EARLIER_DEMO)) ?? both[0]!;
    second = both.find((r) => r !== first)!;
  }, patience(90_000));
  afterAll(async () => {
    await folder?.cleanup();
  });

  it('syncs both sources and prints the summary and the example query', () => {
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/Sync succeeded in [\d.]+ s/);
    expect(first.stdout).toContain('Rows per table');
    expect(first.stdout).toMatch(/app\.metric_history\s+\d+\s+\(\+\d+\)/);
    expect(first.stdout).toMatch(/gateway\.trend_points\s+\d+\s+\(\+\d+\)/);
    expect(first.stdout).toContain('the five listed tokens cheapest by 30-day P/FCF');
    const table = first.stdout.split('From docs/warehouse.md (example latest-screener):')[1]!;
    expect(table.split('\n').filter((l) => /^\S+\s+.+\d/.test(l)).length).toBeGreaterThanOrEqual(5);
    // Nothing delisted: the summary says only how many tokens there are.
    expect(first.stdout).toMatch(/^ {2}tokens: 6 \(app\), 6 \(gateway\)$/m);
  });

  it("every line fits an 80-column terminal: the summary, the rows per table, the query's table", () => {
    for (const r of both) expect(wide(r.stdout + r.stderr), r.stdout).toEqual([]);
    const table = first.stdout.split('From docs/warehouse.md (example latest-screener):\n\n')[1]!.split('\n\n')[0]!;
    const [header, rule, ...rows] = table.split('\n');
    // The docs' query, its five columns, each row a line of its own.
    expect(header!.split(/\s+/)).toEqual(['token_slug', 'display_name', 'multiple_30d', 'effective_market_cap', 'annualized_revenue']);
    expect(rule).toMatch(/^-+( +-+){4}$/);
    expect(rows.filter((l) => /^[a-z]/.test(l)).length).toBe(5);
    // The money columns do not fit whole: rounded, and said so.
    expect(rows.some((l) => /\d(\.\d+)?[kMBT]\b/.test(l)), table).toBe(true);
    expect(first.stdout).toContain('(numbers rounded to fit the terminal; the warehouse holds them exactly)');
    console.info(`the demo's query table at 80 columns:\n${table}`);
  });

  it('a second demo reuses the warehouse and fetches far less', () => {
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(EARLIER_DEMO);
    const a = requestsOf(first.stdout);
    const b = requestsOf(second.stdout);
    expect(a).toBeGreaterThan(50);
    expect(b).toBeLessThan(a * 0.35);
    console.info(`demo requests: first ${a}, second ${b}`);
  });

  it('the second waits for the first (the sync lock), then fetches only what changed', () => {
    for (const r of both) expect(r.code, r.stderr).toBe(0);
    const waited = both.filter((r) => /^tesync: waiting: another tesync sync is walking /m.test(r.stderr));
    expect(waited, both.map((r) => r.stderr).join('\n---\n')).toHaveLength(1);
    const other = both.find((r) => r !== waited[0])!;
    expect(requestsOf(waited[0]!.stdout)).toBeLessThan(requestsOf(other.stdout) / 5);
  });

  it("the summary says what the rows per table and status say: the archives' rows written, each group's statuses", async () => {
    // Rows written count the daily archives' too (filled at the run's end), as the lines below do.
    const written = Number(/rows written: (\d+)/.exec(first.stdout)?.[1]);
    // (Broken at 80 columns, its later line indented.)
    expect(first.stdout.replace(/\n {4}/g, ' ')).toMatch(/rows written: \d+ \(\d+ of them in the daily archives, filled at the run's end\)/);
    const added = [...first.stdout.matchAll(/^ {2}[a-z_]+\.[a-z_]+ +\d+ {2}\(\+(\d+)\)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
    expect(written).toBe(added);
    // The second demo found everything unchanged: its statuses per group are status's, a
    // period the gateway has not materialized still said so (one source: the resource state).
    const json = await runCli(['status', '--json'], {}, { cwd });
    const groups = (JSON.parse(json.stdout) as { groups: { source: string; group: string; statuses: Record<string, number> }[] }).groups;
    const summary = Object.fromEntries(
      [...second.stdout.matchAll(/^ {2}((?:app|gateway)\.[a-z]+) +((?:[a-z_]+ \d+(?:, )?)+)$/gm)].map((m) => [m[1]!, Object.fromEntries(m[2]!.split(', ').map((p) => [p.split(' ')[0]!, Number(p.split(' ')[1])]))]),
    );
    expect(summary['gateway.history'], second.stdout).toMatchObject({ not_materialized: 1 });
    for (const [group, statuses] of Object.entries(summary)) {
      const g = groups.find((x) => `${x.source}.${x.group}` === group);
      expect(g?.statuses, group).toEqual(statuses);
    }
  });

  it('status shows each source and group, as a table and as JSON, and works as a health check', async () => {
    // Side by side, as health checks and a user's terminal may be: they share the one server.
    const hours = dayOldHours(demoDay);
    const [table, json, dataAge, unconfirmed, neverConfirmed] = await Promise.all([
      runCli(['status'], {}, { cwd }),
      runCli(['status', '--json', '--max-age', String(hours)], {}, { cwd }),
      runCli(['status', '--wide', '--max-age', String(hours)], {}, { cwd }),
      runCli(['status', '--max-unconfirmed', '24'], {}, { cwd }),
      runCli(['status', '--max-unconfirmed', '0.000001'], {}, { cwd }),
    ]);
    expect(table.code).toBe(0);
    // Not a terminal: 80 columns, no line longer.
    expect(table.stdout).toMatch(/^group\s+data time\s+age\s+confirmed\s+upstream\s+statuses$/m);
    expect(table.stdout).toContain('Table sizes');
    expect(table.stdout).toMatch(new RegExp(`^app\\.history\\s+(${demoDay}|${today()})`, 'm'));
    expect(table.stdout).toMatch(/^gateway\.\w+/m);
    for (const line of table.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    type Group = { source: string; group: string; resources: number; checks: { oldestData: { at: string } | null } };
    const parsed = JSON.parse(json.stdout) as { groups: Group[]; runs: unknown[]; overLimit: unknown[]; sizes: { tables: { table: string; rows: number | null }[] } };
    statusRows = parsed.sizes.tables;
    expect(parsed.groups.some((g) => g.source === 'gateway')).toBe(true);
    expect(parsed.runs).toHaveLength(2);
    // The demo's simulator dates its data up to today: every group's data is under a day old
    // right after the demo, and the data-age check passes.
    const ages = parsed.groups.filter((g) => g.checks.oldestData).map((g) => ({ group: `${g.source}.${g.group}`, hours: (Date.now() - Date.parse(g.checks.oldestData!.at)) / 3_600_000 }));
    expect(ages.map((a) => a.group)).toEqual(expect.arrayContaining(['app.history', 'app.tokens', 'gateway.screener', 'gateway.history']));
    for (const a of ages) expect(a.hours, a.group).toBeLessThan(hours);
    expect(json.code, json.stderr).toBe(0);
    expect(parsed.overLimit).toEqual([]);
    expect(dataAge.code, dataAge.stdout).toBe(0);
    expect(dataAge.stdout).not.toContain('Over the limit');
    expect(unconfirmed.code).toBe(0);
    expect(neverConfirmed.code).toBe(1);
  });

  it('sql keeps the embedded server up and prints a URL a Postgres client connects with', async () => {
    const child = spawn(process.execPath, [BIN, 'sql'], { cwd, env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /psql "(postgres:\/\/[^"]+)"/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on('exit', (code) => reject(new Error(`tesync sql exited ${code}`)));
      });
      expect(url).toMatch(/^postgres:\/\/tesync:[0-9a-f]{48}@127\.0\.0\.1:\d+\/tesync$/);
      const client = postgres(url, { max: 1 });
      try {
        const rows = await client`select count(*)::int as n from app.screener_rows`;
        expect(rows[0]!.n).toBeGreaterThan(0);
        // `status --json` right after the demo (issue 47): every table's rows within 10 % of count(*).
        expect(statusRows, 'the status case ran first').toBeDefined();
        expect(statusRows!.length).toBeGreaterThan(20);
        for (const t of statusRows!) {
          const [c] = await client.unsafe<{ n: string }[]>(`select count(*)::text as n from ${t.table}`);
          const n = Number(c!.n);
          expect(t.rows !== null && Math.abs(t.rows - n) <= 0.1 * n, `${t.table}: status ${t.rows}, count(*) ${n}`).toBe(true);
        }
        // The two demos' runs never overlapped.
        const runs = await client<{ started_at: Date; finished_at: Date; status: string }[]>`select started_at, finished_at, status from sync.runs where trigger = 'demo' order by started_at`;
        expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
        expect(runs[1]!.started_at.getTime()).toBeGreaterThanOrEqual(runs[0]!.finished_at.getTime());
      } finally {
        await client.end();
      }
    } finally {
      child.kill('SIGINT');
      const code = await new Promise((resolve) => child.on('exit', resolve));
      expect(code).toBe(0);
    }
    // The last user gone, the server is stopped (a clean shutdown removes its postmaster.pid).
    expect((await serverPids(cwd)).filter(isAlive)).toEqual([]);
  });
});

describe('a fresh folder', () => {
  it('status says nothing was synced and fails the health check', async () => {
    const folder = await embeddedFolder('tesync-empty');
    try {
      const r = await runCli(['status', '--max-age', '1'], {}, { cwd: folder.dir, timeoutMs: 120_000 });
      expect(r.code).toBe(1);
      expect(r.stdout).toContain('Nothing synced yet');
    } finally {
      await folder.cleanup();
    }
  });
});

describe('demo with lists in pages', () => {
  it('--page-size: every list read page by page, the same warehouse; a bad size is refused', async () => {
    const bad = await runCli(['demo', '--page-size', 'x'], {}, { timeoutMs: 30_000 });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--page-size');
    const db = await freshDatabase({ migrated: true });
    const r = await runCli(['demo', '--tokens', '4', '--page-size', '2'], { DATABASE_URL: db.databaseUrl }, { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Sync succeeded in [\d.]+ s/);
    const sql = postgres(db.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      // Four tokens in pages of two: each token list read in two pages, all four listed.
      const pages = await sql<{ path: string }[]>`select distinct path from sync.requests where path like '%/tokens?%page=%' or path like '%/tokens?%cursor=%'`;
      expect(pages.length).toBeGreaterThanOrEqual(2);
      const [listed] = await sql<{ app: string; gw: string }[]>`select (select count(*) from app.tokens)::text as app, (select count(*) from gateway.tokens)::text as gw`;
      expect(listed).toEqual({ app: '4', gw: '4' });

      // A demo of fewer tokens on the same warehouse delists the others, and says so: how
      // many, why, and how to list them again.
      const fewer = await runCli(['demo', '--tokens', '2'], { DATABASE_URL: db.databaseUrl }, { timeoutMs: 60_000 });
      expect(fewer.code, fewer.stderr).toBe(0);
      expect(wide(fewer.stdout + fewer.stderr), fewer.stdout).toEqual([]);
      expect(joined(fewer.stdout)).toMatch(/^ {2}tokens: 2 \(app\), 2 \(gateway\); this demo delisted 2 of each: the simulator now lists 2 \(--tokens 2\); `tesync demo --tokens 4` lists them again$/m);
      const runId = /\(run ([0-9a-f-]{36})\)/.exec(fewer.stdout)?.[1];
      const delisted = await sql<{ source: string; n: number }[]>`
        select 'app' as source, count(*)::int as n from app.tokens where delisted_at is not null and run_id = ${runId!}
        union all select 'gateway', count(*)::int from gateway.tokens where delisted_at is not null and run_id = ${runId!} order by 1`;
      expect(delisted).toEqual([
        { source: 'app', n: 2 },
        { source: 'gateway', n: 2 },
      ]);
    } finally {
      await sql.end();
    }
  }, patience(150_000));
});
