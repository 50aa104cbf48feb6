// `tesync status` as a health check that tells the truth, run as the real CLI against
// warehouses synced from the simulator:
//   - one token whose history stopped advancing months ago while everything else is of today:
//     `--max-age 24` exits 1 and names that token (a group's newest data would hide it);
//   - a token its list delisted, last confirmed days ago: neither `--max-unconfirmed` nor
//     `--max-age` fires for it (its resources are never confirmed again);
//   - the report fits 80 columns when not on a terminal, and a terminal's width in tmux,
//     without a wrapped line; `--wide` lays it out at full width.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OverLimit } from '../../src/cli/status.ts';
import { BIN, runCli } from '../helpers/cli.ts';
import { useSimAndWarehouse, type SimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey, createTestLogger, uniqueName } from '../helpers/services.ts';
import { requireTmux } from '../helpers/tmux.ts';
import { commandEnv } from '../helpers/sync.ts';

const DAY_MS = 86_400_000;
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);
const appKey = canaryKey('app_health');
const gatewayKey = canaryKey('gw_health');
const keys = { appKey, gatewayKey };
const simOptions = (seed: number, lastDate: string) => ({
  tokens: 4,
  historyDays: 10,
  chartsPerToken: 1,
  seed,
  lastDate,
  freshness: 'fresh' as const,
  appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' as const } },
  gatewayKeys: [gatewayKey],
});
const envOf = (w: SimAndWarehouse) => commandEnv(w.sim, { appKey, gatewayKey }, w.databaseUrl, { LOG_LEVEL: 'warn' });
/** A reason as one line again: the report wraps it under its first line, 6 spaces in. */
const unwrapped = (text: string) => text.replace(/\n {6}(?=\S)/g, ' ');
const lines = (text: string) => text.split('\n');

describe('one token whose data stopped advancing months ago, the rest of today', () => {
  const MONTHS = 120;
  const log = createTestLogger();
  // Epoch 0 serves data 120 days old; epoch 120 serves data of today.
  const fx = useSimAndWarehouse(simOptions(41, day(-MONTHS)));
  let stale: string;

  beforeAll(async () => {
    const first = await fx.sync(log.logger, keys, ['app', 'gateway']);
    expect(first.status).toBe('succeeded');
    stale = fx.sim.data.appTokens().find((t) => t.coverage.metricHistory)!.slug;
    fx.sim.setEpoch(MONTHS);
    // Upstream refuses this one token's history from now on: its data stays 120 days old.
    fx.sim.script(
      `/api/v1/tokens/${stale}/metrics/history`,
      Array.from({ length: 5 }, () => ({ status: 400, code: 'bad_request' })),
    );
    const second = await fx.sync(log.logger, keys, ['app', 'gateway']);
    expect(second.status).not.toBe('failed');
    const [row] = await fx.warehouse.query<{ status: string; last_ts: string }>(
      sql`select status, details->>'lastTs' as last_ts from sync.resource_state where source = 'app' and resource = ${`token/${stale}/history`}`,
    );
    expect(row).toMatchObject({ status: 'failed', last_ts: expect.stringMatching(new RegExp(`^${day(-MONTHS)}`)) });
  }, patience(120_000));

  it('--max-age 24 exits 1 and names that token, by its newest history point; nothing else is over', async () => {
    const r = await runCli(['status', '--max-age', '24'], envOf(fx));
    expect(r.code, r.stderr).toBe(1);
    const text = unwrapped(r.stdout);
    expect(text).toMatch(/^Over the limit: 1 of \d+ groups$/m);
    expect(text).toMatch(
      new RegExp(`^ {2}app\\.history: data of token ${stale} is 1[12]\\d\\.\\dd old by its newest history point, ${day(-MONTHS)} 00:00 UTC \\(more than --max-age 24h\\); upstream says fresh \\d+; tesync last confirmed it .+ ago$`, 'm'),
    );
    // The table shows the group as old as that token's data, and the failure under it.
    expect(r.stdout).toMatch(new RegExp(`^app\\.history\\s+${day(-MONTHS)}\\*\\s+1[12]\\d\\.\\dd\\s`, 'm'));
    expect(r.stdout).toMatch(/^ {4}last error: ProblemError: /m);
    console.info(r.stdout);
  });

  it('--json says which resource and token, by which clock', async () => {
    const r = await runCli(['status', '--json', '--max-age', '24'], envOf(fx));
    expect(r.code).toBe(1);
    const j = JSON.parse(r.stdout) as { overLimit: OverLimit[]; groups: { source: string; group: string; newestPointAt: string; checks: { oldestData: { resource: string } } }[] };
    expect(j.overLimit).toEqual([expect.objectContaining({ source: 'app', group: 'history', clock: 'newest history point', resource: `token/${stale}/history`, token: stale })]);
    // The group's newest point is of today: judged by it, the stale token was invisible.
    const history = j.groups.find((g) => g.source === 'app' && g.group === 'history')!;
    expect(history.newestPointAt.slice(0, 10)).toBe(day(0));
    expect(history.checks.oldestData.resource).toBe(`token/${stale}/history`);
  });

  it('not a terminal: 80 columns whatever COLUMNS says, no line longer; --wide: one line per group', async () => {
    const r = await runCli(['status', '--max-age', '24', '--max-unconfirmed', '24'], { ...envOf(fx), COLUMNS: '200' });
    for (const line of lines(r.stdout)) expect(line.length, line).toBeLessThanOrEqual(80);
    const wide = await runCli(['status', '--wide', '--max-age', '24'], envOf(fx));
    expect(Math.max(...lines(wide.stdout).map((l) => l.length))).toBeGreaterThan(80);
    expect(wide.stdout).toMatch(new RegExp(`^app\\s+history\\s+\\d+\\s+${day(-MONTHS)} 00:00\\*\\s+1[12]\\d\\.\\dd\\s+fresh \\d+\\s+\\S+\\s+\\d+\\/\\d+\\s+failed 1, ok \\d+\\s+ProblemError`, 'm'));
    expect(wide.stdout).toMatch(new RegExp(`^ {2}app\\.history: data of token ${stale} is .+ tesync last confirmed it .+ ago$`, 'm'));
  });

  describe('on a terminal (tmux)', () => {
    let dir: string;
    const socket = uniqueName('tesync_status');
    const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
    beforeAll(() => {
      requireTmux();
      dir = mkdtempSync(path.join(tmpdir(), 'tesync-status-tmux-'));
    });
    afterAll(() => {
      try {
        tmux('kill-server');
      } catch {
        // Not started, or gone already.
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** The pane after `tesync status --max-age 24` ran in a terminal `columns` wide: as shown, and with wrapped lines joined. */
    async function statusOnTerminal(columns: number): Promise<{ shown: string[]; joined: string[] }> {
      const session = `w${columns}`;
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? dir, LANG: 'C.UTF-8', ...envOf(fx) };
      const script = path.join(dir, `${session}.sh`);
      const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
      writeFileSync(
        script,
        ['#!/bin/sh', ...Object.entries(env).map(([k, v]) => `export ${k}=${quote(v)}`), `${quote(process.execPath)} ${quote(BIN)} status --max-age 24`, 'echo "tesync exited $?"', `sleep ${patience(60)}`].join('\n'),
        { mode: 0o755 },
      );
      const deadline = Date.now() + patience(30_000);
      execFileSync('tmux', ['-u', '-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', session, '-x', String(columns), '-y', '200', script]);
      for (;;) {
        await delay(300);
        if (tmux('capture-pane', '-p', '-t', session).includes('tesync exited') || Date.now() > deadline) break;
      }
      const capture = (...flags: string[]) => tmux('capture-pane', '-p', ...flags, '-t', session).trimEnd().split('\n');
      return { shown: capture(), joined: capture('-J') };
    }

    it.each([80, 100])('%i columns: nothing wrapped, the table as wide as the terminal allows', async (columns) => {
      const { shown, joined } = await statusOnTerminal(columns);
      expect(shown.join('\n')).toMatch(/tesync exited 1/);
      // -J joins the lines the terminal wrapped: the same lines, so none was.
      expect(joined).toEqual(shown);
      for (const line of shown) expect([...line].length, line).toBeLessThanOrEqual(columns);
      expect(shown.join('\n')).toMatch(/^group\s+data time\s+age\s+confirmed\s+upstream\s+statuses$/m);
      if (columns === 80) console.info(`tesync status --max-age 24 on an 80-column terminal:\n${shown.join('\n')}`);
    }, patience(40_000));
  });
});

describe('a token its list delisted, last confirmed days ago', () => {
  const log = createTestLogger();
  // Epoch 0 ends yesterday; epoch 1 (today) delists one token from both APIs.
  const fx = useSimAndWarehouse(simOptions(42, day(-1)));
  let gone: string;

  beforeAll(async () => {
    const threeDaysAgo = () => new Date(Date.now() - 3 * DAY_MS);
    expect((await fx.sync(log.logger, keys, ['app', 'gateway'], { clock: threeDaysAgo })).status).toBe('succeeded');
    fx.sim.setEpoch(1);
    gone = fx.sim.data.epochChanges.delistedSlug!;
    expect((await fx.sync(log.logger, keys, ['app', 'gateway'])).status).toBe('succeeded');
    // What made the checks fire forever: its resources stay active, confirmed three days ago.
    const [listed] = await fx.warehouse.query<{ app: boolean; gateway: boolean }>(
      sql`select (select delisted_at is not null from app.tokens where slug = ${gone}) as app, (select delisted_at is not null from gateway.tokens where slug = ${gone}) as gateway`,
    );
    expect(listed).toEqual({ app: true, gateway: true });
    // Confirmed three days ago, never again: the checks would wait for them forever. The
    // complete token list retired them (active false), its charts' catalog with its charts.
    const states = await fx.warehouse.query<{ active: boolean; verified_at: Date }>(sql`select active, verified_at from sync.resource_state where resource like ${`token/${gone}/%`}`);
    expect(states.length).toBeGreaterThan(3);
    for (const s of states) {
      expect(s.active).toBe(false);
      expect(Date.now() - new Date(s.verified_at).getTime()).toBeGreaterThan(2 * DAY_MS);
    }
  }, patience(120_000));

  it('--max-unconfirmed 24 stays quiet', async () => {
    const r = await runCli(['status', '--max-unconfirmed', '24'], envOf(fx));
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).not.toContain('Over the limit');
    // The group still counts them, as delisted.
    expect(r.stdout).toMatch(/^app\.history\s.*\b1 delisted$/m);
  });

  it('--max-age 24 does not name it (its data is of yesterday, the rest of today)', async () => {
    const r = await runCli(['status', '--max-age', '24', '--json'], envOf(fx));
    expect(r.code, r.stdout).toBe(0);
    const j = JSON.parse(r.stdout) as { overLimit: OverLimit[]; groups: { source: string; group: string; checks: { delisted: number; oldestData: { token: string | null } | null } }[] };
    expect(j.overLimit).toEqual([]);
    expect(r.stdout).not.toMatch(new RegExp(`"token": "${gone}"`));
    const history = j.groups.find((g) => g.source === 'app' && g.group === 'history')!;
    expect(history.checks.delisted).toBe(1);
    expect(history.checks.oldestData?.token).not.toBe(gone);
  });
});

describe('what a complete list no longer plans: a chart gone from its catalog, a history period no longer configured', () => {
  const log = createTestLogger();
  const fx = useSimAndWarehouse({ ...simOptions(43, day(-1)), chartsPerToken: 2 });
  const periods = (p: string) => ({ ...keys, env: { TE_GATEWAY_HISTORY_PERIODS: p } });
  const inactive = async () =>
    (await fx.warehouse.query<{ resource: string }>(sql`select source || ':' || resource as resource from sync.resource_state where not active order by 1`)).map((r) => r.resource);

  beforeAll(async () => {
    const threeDaysAgo = () => new Date(Date.now() - 3 * DAY_MS);
    expect((await fx.sync(log.logger, periods('365d,90d'), ['app', 'gateway'], { clock: threeDaysAgo })).status).toBe('succeeded');
    expect(await inactive()).toEqual([]);
    // Every catalog of two charts or more loses its last; the 90d period is configured no more.
    fx.sim.setLosses({ removed: true });
    expect((await fx.sync(log.logger, periods('365d'), ['app', 'gateway'], { full: true })).status).not.toBe('failed');
  }, patience(120_000));

  it('retires them (active false) and leaves the rest; --max-unconfirmed 24 stays quiet, the table says so', async () => {
    const retired = await inactive();
    expect(retired.filter((r) => /^gateway:token\/[^/]+\/history\/90d$/.test(r)).length, retired.join('\n')).toBe(4);
    expect(retired.filter((r) => /^app:token\/[^/]+\/chart\/[^/]+$/.test(r)).length, retired.join('\n')).toBeGreaterThan(0);
    expect(retired.filter((r) => !/\/history\/90d$|\/chart\//.test(r)), 'nothing else').toEqual([]);
    const r = await runCli(['status', '--wide', '--max-unconfirmed', '24'], envOf(fx));
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/^gateway\s+history\s.*\bok 4, 4 no longer listed\s*$/m);
  });

  it('asked again, they are tracked again', async () => {
    fx.sim.setLosses({ removed: false });
    expect((await fx.sync(log.logger, periods('365d,90d'), ['app', 'gateway'], { full: true })).status).toBe('succeeded');
    expect(await inactive()).toEqual([]);
  }, patience(60_000));
});
