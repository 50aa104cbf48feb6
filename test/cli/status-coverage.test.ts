// Coverage (issue 59 item 1): a walk of 20 tokens stopped half-way, after the token lists and
// a few tokens, leaves listed tokens with no resource at all. Freshness judges only the
// resources that exist, so it cannot see them; coverage, computed by the warehouse
// (analytics.coverage), counts what the lists promise against what is held. `tesync status
// --min-coverage 100` then exits 1 naming what is missing (and so does any check: the walk
// ended, interrupted, since its lists changed), the status page shows each group's coverage
// and calls none of the short ones on time (headless Chromium; the screenshot goes to
// test/results/status-coverage.png); after a walk that completes, every check passes.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunInterrupted } from '../../src/engine/run/close-run.ts';
import { performSync } from '../../src/cli/sync-session.ts';
import { readCoverage } from '../../src/store/read/coverage.ts';
import { FAST_RETRY_POLICY } from '../../src/upstream/retry-policy.ts';
import { runCli, startCli, type CliProcess } from '../helpers/cli.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';
import { simConfig } from '../helpers/sync.ts';

const CHROMIUM = '/usr/bin/chromium';
const SHOT = fileURLToPath(new URL('../results/status-coverage.png', import.meta.url));
const appKey = canaryKey('p59app');
const gatewayKey = canaryKey('p59gw');
const today = new Date().toISOString().slice(0, 10);
const unwrapped = (text: string) => text.replace(/\n {4,6}(?=\S)/g, ' ');

describe('a walk of 20 tokens stopped half-way', () => {
  const log = createTestLogger();
  const fx = useSimAndWarehouse({
    tokens: 20,
    historyDays: 5,
    chartsPerToken: 1,
    seed: 59,
    lastDate: today,
    freshness: 'fresh',
    appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
    gatewayKeys: [gatewayKey],
  });
  const env = () => ({ DATABASE_URL: fx.databaseUrl, TE_APP_URL: fx.sim.url, TE_APP_API_KEY: appKey, TE_GATEWAY_URL: fx.sim.url, TE_GATEWAY_API_KEY: gatewayKey, LOG_LEVEL: 'warn' });
  const config = () => simConfig(fx.sim, { appKey, gatewayKey, env: { TE_CONCURRENCY: '1' } }, ['app', 'gateway']);
  let held: string[];

  beforeAll(async () => {
    // One request per bucket held: one job at a time per bucket, each stops there. Once both
    // held requests have arrived, the walk is interrupted as Ctrl-C would.
    const app = fx.sim.data.appTokens().filter((t) => t.coverage.metricHistory)[4]!.slug;
    held = [`/api/v1/tokens/${app}/metrics/history`, `/v1/tokens/${fx.sim.data.gatewayTokens()[4]!.slug}/metrics/history`];
    for (const p of held) fx.sim.script(p, [{ status: 200, delayMs: patience(120_000) }]);
    const stop = new AbortController();
    const arrived = () => held.every((p) => fx.sim.requests.some((r) => r.path.startsWith(p)));
    const outcome = await performSync(config(), log.logger, fx.warehouse, {
      sources: ['app', 'gateway'],
      trigger: 'test',
      retry: FAST_RETRY_POLICY,
      signal: stop.signal,
      onProgress: () => {
        if (arrived() && !stop.signal.aborted) stop.abort(new RunInterrupted('SIGINT'));
      },
    });
    expect(outcome.status).toBe('interrupted');
  }, patience(180_000));

  it('the warehouse counts what the lists promise and what it holds, naming what is missing', async () => {
    const coverage = await readCoverage(fx.warehouse);
    const history = coverage.find((c) => c.source === 'app' && c.group === 'history')!;
    const listed = fx.sim.data.appTokens().filter((t) => t.coverage.metricHistory).length;
    expect(history.expected).toBe(listed);
    expect(history.covered).toBeLessThan(listed);
    expect(history.walkedSince).toBe(true);
    expect(history.missingNamed[0]).toEqual({ resource: expect.stringMatching(/^token\/[^/]+\/history$/), why: expect.stringMatching(/^never fetched$|, nothing held$/) });
    // The listed tokens the walk never reached: promised, and no state at all.
    const [n] = await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from analytics.coverage_resources r where source = 'app' and "group" = 'history' and not held
      and not exists (select 1 from sync.resource_state s where s.source = r.source and s.resource = r.resource)`);
    expect(n!.n).toBeGreaterThan(0);
    expect(n!.n).toBeLessThanOrEqual(history.missing);
    expect(coverage.find((c) => c.source === 'gateway' && c.group === 'history')!.missing).toBeGreaterThan(0);
  });

  it('status --min-coverage 100 exits 1 naming the missing, and so does --max-age 24 (the walk ended since its lists changed)', async () => {
    const r = await runCli(['status', '--min-coverage', '100'], env());
    expect(r.code, r.stderr).toBe(1);
    const text = unwrapped(r.stdout);
    expect(text).toMatch(/^ {2}app\.history: holds \d+\/\d+ \(\d+(\.\d)?%\) of what its lists promise \(less than --min-coverage 100\); missing: token\/[^/]+\/history: /m);
    expect(text).toMatch(/never fetched/);
    expect(text).toMatch(/^ {2}gateway\.history: holds /m);
    const json = JSON.parse((await runCli(['status', '--json', '--max-age', '24'], env())).stdout) as { overLimit: { group: string; clock: string }[]; groups: { group: string; coverage: { missing: number } | null }[] };
    expect(json.overLimit.filter((o) => o.clock === 'coverage').map((o) => o.group)).toContain('history');
    expect((await runCli(['status', '--min-coverage', '0'], env())).code).toBe(0);
  });

  describe('the status page', () => {
    let serve: CliProcess | undefined;
    let context: BrowserContext | undefined;
    let profile: string | undefined;
    afterAll(async () => {
      await context?.close();
      if (profile) rmSync(profile, { recursive: true, force: true });
      serve?.child.kill('SIGKILL');
      await serve?.exited;
    });

    it('shows each group\'s coverage, and calls none that is short on time', async () => {
      if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing (${CHROMIUM}): apt-get install -y chromium`);
      serve = startCli(['status', '--serve', '--port', '0'], env());
      await serve.waitFor(/Status page of .*: http:\/\/127\.0\.0\.1:\d+\//, 60_000);
      const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(serve.stdout())![0];
      profile = mkdtempSync(path.join(tmpdir(), 'tesync-chromium-'));
      context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu'], viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await page.goto(url, { waitUntil: 'load' });
      const row = page.locator('tr.group[data-group="app.history"]');
      expect(await row.getAttribute('data-tone')).toBe('bad');
      expect(await row.locator('td.coverage').textContent()).toMatch(/^\d+\/\d+ \(\d+(\.\d)?%\)$/);
      expect(await row.locator('td.state').textContent()).toBe('incomplete');
      expect(await page.locator('tr.why[data-group="app.history"]').textContent()).toMatch(/missing: token\/[^/]+\/history: /);
      const states = await page.$$eval('tr.group', (rows) => rows.map((r) => [r.getAttribute('data-group'), r.querySelector('td.state')?.textContent, r.querySelector('td.coverage')?.textContent]));
      for (const [group, state, held] of states) {
        const m = /^(\d+)\/(\d+)/.exec(held ?? '');
        if (m && m[1] !== m[2]) expect(state, `${group}`).not.toBe('on time');
      }
      await page.screenshot({ path: SHOT, fullPage: true });
    });
  });

  it('after a walk that completes, every check passes', async () => {
    const done = await performSync(config(), log.logger, fx.warehouse, { sources: ['app', 'gateway'], trigger: 'test', retry: FAST_RETRY_POLICY });
    expect(done.status).toBe('succeeded');
    for (const c of await readCoverage(fx.warehouse)) expect([c.source, c.group, c.covered], c.missingNamed.map((m) => m.resource).join()).toEqual([c.source, c.group, c.expected]);
    const r = await runCli(['status', '--min-coverage', '100', '--max-age', '24'], env());
    expect(r.code, r.stdout).toBe(0);
  }, patience(120_000));
});
