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
import { createTestDatabase } from '../helpers/services.ts';

const requestsOf = (out: string) => Number(/requests: (\d+)/.exec(out)?.[1] ?? NaN);
const EARLIER_DEMO = 'The warehouse already holds an earlier demo: only what changed is fetched.';

describe('demo, status and sql on the embedded warehouse', () => {
  let folder: TempFolder;
  let cwd: string;
  let both: CliResult[];
  /** The demo that synced into the empty warehouse. */
  let first: CliResult;
  /** The one that found the first's data there. */
  let second: CliResult;
  beforeAll(async () => {
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
    const table = first.stdout.split('(from docs/warehouse.md):')[1]!;
    expect(table.split('\n').filter((l) => /^\S+\s+.+\d/.test(l)).length).toBeGreaterThanOrEqual(5);
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

  it('status shows each source and group, as a table and as JSON, and works as a health check', async () => {
    // Side by side, as health checks and a user's terminal may be: they share the one server.
    const [table, json, dataAge, unconfirmed, neverConfirmed] = await Promise.all([
      runCli(['status'], {}, { cwd }),
      runCli(['status', '--json'], {}, { cwd }),
      runCli(['status', '--wide', '--max-age', '24'], {}, { cwd }),
      runCli(['status', '--max-unconfirmed', '24'], {}, { cwd }),
      runCli(['status', '--max-unconfirmed', '0.000001'], {}, { cwd }),
    ]);
    expect(table.code).toBe(0);
    // Not a terminal: 80 columns, no line longer.
    expect(table.stdout).toMatch(/^group\s+data time\s+age\s+confirmed\s+upstream\s+statuses$/m);
    expect(table.stdout).toContain('Table sizes');
    expect(table.stdout).toMatch(/^app\.history\s+2026-06-30\*/m);
    expect(table.stdout).toMatch(/^gateway\.\w+/m);
    for (const line of table.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    const parsed = JSON.parse(json.stdout) as { groups: { source: string; group: string; resources: number }[]; runs: unknown[] };
    expect(parsed.groups.some((g) => g.source === 'gateway')).toBe(true);
    expect(parsed.runs).toHaveLength(2);
    // The demo's data is dated by the simulator's fixed calendar (2026-06-30), months old: the
    // data-age check says so; tesync confirmed it moments ago.
    expect(dataAge.code).toBe(1);
    expect(dataAge.stdout).toMatch(/^ {2}app\.history: data of token [a-z-]+ is \d+\.\dd old by its newest history point, 2026-06-30 00:00 UTC/m);
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
    const db = await createTestDatabase({ migrated: true });
    try {
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
      } finally {
        await sql.end();
      }
    } finally {
      await db.drop();
    }
  }, patience(90_000));
});
