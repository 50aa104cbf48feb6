// A newcomer's first commands, run as a user would: `tesync demo` twice on the embedded
// warehouse (no DATABASE_URL, no Redis), then `tesync status` and `tesync sql`.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, childEnv, runCli, type CliResult } from '../helpers/cli.ts';

const requestsOf = (out: string) => Number(/requests: (\d+)/.exec(out)?.[1] ?? NaN);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('demo, status and sql on the embedded warehouse', () => {
  let cwd: string;
  let first: CliResult;
  let second: CliResult;
  beforeAll(async () => {
    cwd = await mkdtemp(path.join(tmpdir(), 'tesync-demo-'));
    first = await runCli(['demo', '--tokens', '6'], {}, { cwd, timeoutMs: 120_000 });
    second = await runCli(['demo', '--tokens', '6'], {}, { cwd, timeoutMs: 120_000 });
  }, 240_000);
  afterAll(async () => {
    await rm(cwd, { recursive: true, force: true });
  });

  it('syncs both sources and prints the summary and the example query', () => {
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/Sync succeeded in [\d.]+ s/);
    expect(first.stdout).toContain('Rows per table');
    expect(first.stdout).toMatch(/app\.metric_history\s+\d+\s+\(\+\d+\)/);
    expect(first.stdout).toMatch(/gateway\.trend_points\s+\d+\s+\(\+\d+\)/);
    expect(first.stdout).toContain('the five cheapest tokens by 30-day P/FCF');
    const table = first.stdout.split('(from docs/warehouse.md):')[1]!;
    expect(table.split('\n').filter((l) => /^\S+\s+.+\d/.test(l)).length).toBeGreaterThanOrEqual(5);
  });

  it('a second demo reuses the warehouse and fetches far less', () => {
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('only what changed is fetched');
    const a = requestsOf(first.stdout);
    const b = requestsOf(second.stdout);
    expect(a).toBeGreaterThan(50);
    expect(b).toBeLessThan(a * 0.35);
    console.info(`demo requests: first ${a}, second ${b}`);
  });

  it('status shows each source and group, as a table and as JSON, and works as a health check', async () => {
    const table = await runCli(['status'], {}, { cwd });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/source\s+group\s+resources\s+last success/);
    expect(table.stdout).toMatch(/^app\s+history\s+\d+/m);
    expect(table.stdout).toMatch(/^gateway\s+\w+/m);
    const json = await runCli(['status', '--json'], {}, { cwd });
    const parsed = JSON.parse(json.stdout) as { groups: { source: string; group: string; resources: number }[]; runs: unknown[] };
    expect(parsed.groups.some((g) => g.source === 'gateway')).toBe(true);
    expect(parsed.runs).toHaveLength(2);
    expect((await runCli(['status', '--max-age', '24'], {}, { cwd })).code).toBe(0);
    expect((await runCli(['status', '--max-age', '0.000001'], {}, { cwd })).code).toBe(1);
  });

  it('sql serves the embedded warehouse to a Postgres client', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'sql', '--port', String(port)], { cwd, env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => d.toString().includes('Serving') && resolve());
        child.on('exit', (code) => reject(new Error(`tesync sql exited ${code}`)));
      });
      const client = postgres(`postgres://postgres@127.0.0.1:${port}/postgres`, { max: 1 });
      const rows = await client`select count(*)::int as n from app.screener_rows`;
      await client.end();
      expect(rows[0]!.n).toBeGreaterThan(0);
    } finally {
      child.kill('SIGINT');
      const code = await new Promise((resolve) => child.on('exit', resolve));
      expect(code).toBe(0);
    }
  });
});

describe('a fresh folder', () => {
  it('status says nothing was synced and fails the health check', async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), 'tesync-empty-'));
    try {
      const r = await runCli(['status', '--max-age', '1'], {}, { cwd });
      expect(r.code).toBe(1);
      expect(r.stdout).toContain('Nothing synced yet');
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
