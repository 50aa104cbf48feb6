// The status page (issue 47 item 1), as an operator sees it: headless Chromium (Debian's
// `chromium`, driven by playwright-core) renders the page of a real `tesync worker` that has
// walked the simulator, with one resource refused by a 4xx problem (its title and detail
// hostile HTML), one answered with a body not understood, and one 429 with Retry-After. The
// DOM shows every resource group against its threshold, the run in the timeline, the rate
// budget of each bucket with the 429, the failing resources by cause each linking to its
// archived body (served as plain text, never run), the queues and schedules; the page loads
// nothing from beyond loopback and runs no upstream string. Then `tesync status --serve`
// serves the same page for the warehouse without the worker, on 127.0.0.1. The screenshot goes
// to test/results/, and with TESYNC_UPDATE_SCREENSHOTS=1 to docs/images/status-page.png, which
// docs/operations.md shows. Asked for by another name than its own, the worker's page says 421.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { getNaming } from '../helpers/get-naming.ts';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGroups } from '../../src/store/read/status.ts';
import { BUCKETS } from '../../src/upstream/routes.ts';
import { startCli, type CliProcess } from '../helpers/cli.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { runEnded, queueWalk, type RunEnd } from '../helpers/queue-walk.ts';
import { backendEnv, removeQueueState, type QueuePlace } from '../helpers/queue-backends.ts';
import { canaryKey, redisServerUrl, uniqueName } from '../helpers/services.ts';
import { killAll, startWorker, type WorkerProcess } from '../helpers/workers.ts';

const CHROMIUM = '/usr/bin/chromium';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// The docs' copy is written only when asked (TESYNC_UPDATE_SCREENSHOTS=1), so that a test run
// leaves the checkout as it found it.
const SHOTS = [path.join(ROOT, 'test/results/status-page.png'), ...(process.env.TESYNC_UPDATE_SCREENSHOTS === '1' ? [path.join(ROOT, 'docs/images/status-page.png')] : [])];
/** Chromium's own traffic off (updates, sync, QUIC probes): what is left is the page's. */
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Upstream strings are untrusted: these must show as text and never run. */
const HOSTILE_TITLE = '<script>window.__pwned = 1</script>';
const HOSTILE_DETAIL = '<img src=x onerror="window.__pwned = 2">';

const appKey = canaryKey('pageapp');
const gatewayKey = canaryKey('pagegw');
const today = new Date().toISOString().slice(0, 10);

/** Default-like schedules (hourly, every 6 h, daily) at a minute half an hour away: none comes due while the test runs. */
function schedulesAway(): Record<string, string> {
  const m = (new Date().getUTCMinutes() + 30) % 60;
  return { TE_SCHEDULE_CATALOG: `${m} */6 * * *`, TE_SCHEDULE_SCREENER: `${m} * * * *`, TE_SCHEDULE_TOKEN_DATA: `${m} 2 * * *`, TE_SCHEDULE_BUNDLES: `${m} 4 * * *`, TE_SCHEDULE_EXPORT: 'off' };
}

const hostOf = (url: string) => new URL(url).hostname;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** A password the test servers ignore (they trust local connections): it must appear nowhere. */
const PASSWORD = 'never-on-the-page-0xc0ffee';
const withPassword = (url: string) => {
  const u = new URL(url);
  u.password = PASSWORD;
  return u.toString();
};

// Postgres first: the queues of `tesync worker --demo` (and the screenshot); then Redis.
describe.each(['postgres', 'redis'] as const)('the status page of a worker that walked the simulator, queues on %s', (backend) => {
  const fx = useSimAndWarehouse({
    tokens: 5,
    historyDays: 30,
    chartsPerToken: 1,
    seed: 47,
    lastDate: today,
    freshness: 'fresh',
    appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
    gatewayKeys: [gatewayKey],
    // A budget like a real upstream's (the demo's), so the page has one to show.
    rateLimits: { appPublic: { limit: 120, windowMs: 10_000 }, appKey: { limit: 60, windowMs: 10_000 }, gateway: { limit: 120, windowMs: 10_000 } },
  });
  let place: QueuePlace;
  let env: Record<string, string>;
  let worker: WorkerProcess | undefined;
  let port: number;
  let run: RunEnd;
  let refusedSlug: string;
  let invalidSlug: string;
  let context: BrowserContext | undefined;
  let profile: string | undefined;
  let serve: CliProcess | undefined;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`Chromium is missing (${CHROMIUM}): this test renders the page in it. Install Debian's package: apt-get install -y chromium (.ci/run does when it is missing)`);
    }
    const slugs = fx.sim.data.appTokens().map((t) => t.slug);
    [refusedSlug, invalidSlug] = [slugs[0]!, slugs[1]!];
    // A 4xx problem whose words are HTML; a body the reader cannot take; a 429 that says when to come back.
    fx.sim.script(`/api/v1/tokens/${refusedSlug}/metrics/history`, [
      { status: 422, body: JSON.stringify({ type: 'about:blank', title: HOSTILE_TITLE, status: 422, detail: HOSTILE_DETAIL, code: 'unprocessable_history' }) },
    ]);
    fx.sim.script(`/v1/tokens/${invalidSlug}/metrics/history`, [{ status: 200, body: JSON.stringify({ data: 'not a history', meta: { asOf: `${today}T00:00:00Z` } }) }]);
    fx.sim.script('/v1/screener', [{ status: 429, code: 'rate-limited', retryAfter: '1' }]);

    const redisUrl = await redisServerUrl();
    place = { backend, redisUrl, databaseUrl: fx.databaseUrl, prefix: uniqueName('tesync_page') };
    env = {
      DATABASE_URL: withPassword(fx.databaseUrl),
      ...backendEnv(place),
      TE_QUEUE_PREFIX: place.prefix,
      TE_APP_URL: fx.sim.url,
      TE_APP_API_KEY: appKey,
      TE_GATEWAY_URL: fx.sim.url,
      TE_GATEWAY_API_KEY: gatewayKey,
      TE_METRICS_PORT: '0',
      // `worker ready` (and its port) is an info line.
      LOG_LEVEL: 'info',
      ...schedulesAway(),
    };
    worker = startWorker(env);
    port = (await worker.ready).metricsPort;
    const { runId } = await queueWalk(env);
    run = await runEnded(fx.databaseUrl, runId, { nominalMs: 90_000 });
    expect(run.status).toBe('partial');

    profile = mkdtempSync(path.join(tmpdir(), 'tesync-chromium-'));
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 900 } });
  }, patience(180_000));

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    serve?.child.kill('SIGKILL');
    await serve?.exited;
    if (worker) await killAll([worker]);
    if (place) await removeQueueState(place);
  }, patience(60_000));

  /**
   * Opens `url` in a fresh tab that records every request it makes. `clock`: the tab's timers
   * run on Playwright's clock, which the test moves on (the page's own 15 s, without waiting them).
   */
  async function open(url: string, options: { clock?: boolean } = {}): Promise<{ page: Page; requests: string[] }> {
    const page = await context!.newPage();
    if (options.clock) await page.clock.install();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    const res = await page.goto(url, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    return { page, requests };
  }

  it('shows the groups against their thresholds, the run, the budget per bucket, the failures with their bodies and the queues', async () => {
    const { page, requests } = await open(`http://127.0.0.1:${port}/`);

    // Every resource group `tesync status` reports, each with its state and thresholds.
    const groups = (await readGroups(fx.warehouse)).map((g) => `${g.source}.${g.group}`);
    expect(groups.length).toBeGreaterThan(10);
    const shown = await page.$$eval('tr.group', (rows) => rows.map((r) => r.getAttribute('data-group')));
    expect(shown.sort()).toEqual([...groups].sort());
    const history = page.locator('tr.group[data-group="app.history"]');
    await expect(history.textContent()).resolves.toMatch(/limit 72h[\s\S]*limit 48h/);
    expect(await page.locator('tr.why[data-group="app.history"]').textContent()).toContain('thresholds: 2 rounds of TE_SCHEDULE_TOKEN_DATA');

    // The run: its status, requests and rows, and what failed.
    const item = page.locator(`li[data-run="${run.runId}"]`);
    const runText = (await item.textContent())!;
    expect(runText).toContain('run partial: manual');
    expect(runText).toMatch(new RegExp(`requests\\s*${run.requests.total}`));
    expect(runText).toMatch(/rows written \(versions\)\s*[\d,]+/);
    expect(runText).toContain(`token/${refusedSlug}/history: failed ProblemError 422 unprocessable_history`);
    // The binding of each source to the simulator, as events of the timeline.
    expect(await page.locator('li[data-kind="binding"]').count()).toBe(2);

    // The budget of each bucket, now and over the last hour: the 429 and its Retry-After.
    for (const bucket of BUCKETS) {
      const row = page.locator(`tr[data-bucket="${bucket}"]`);
      await expect(row.count()).resolves.toBe(1);
      const [n] = await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from sync.requests where bucket = ${bucket}`);
      expect(await row.locator('td').nth(4).textContent()).toBe(String(n!.n));
    }
    const gateway = page.locator('tr[data-bucket="gateway"]');
    expect(await gateway.locator('td').nth(5).textContent()).toMatch(/^[1-9]\d*$/);
    expect(await gateway.locator('td').nth(6).textContent()).toMatch(/^[1-9]\d* \(\d+s in all, longest \d+s\)$/);
    expect(await gateway.locator('td').nth(1).textContent()).toMatch(/\d+ of 120/);

    // The failing resources by cause, each with its archived body.
    const refused = page.locator(`tr.failing[data-resource="app: token/${refusedSlug}/history"]`);
    expect(await page.locator('div.cause[data-cause="ProblemError 422 unprocessable_history"]').count()).toBe(1);
    expect(await refused.textContent()).toContain(HOSTILE_TITLE);
    const refusedHref = await refused.locator('a.body-link').getAttribute('href');
    expect(refusedHref).toMatch(/^\/body\/\d+$/);
    const invalid = page.locator(`tr.failing[data-resource="gateway: token/${invalidSlug}/history/365d"]`);
    expect(await invalid.locator('a.body-link').getAttribute('href')).toMatch(/^\/body\/\d+$/);

    // The queues, the schedules with their next run, the worker connected.
    for (const q of ['walk', 'fetch-app-public', 'fetch-app-key', 'fetch-gateway']) expect(await page.locator(`tr[data-queue="${q}"]`).count()).toBe(1);
    for (const s of ['catalog', 'screener', 'token-data', 'bundles']) expect(await page.locator(`tr[data-schedule="${s}"]`).textContent()).toMatch(/UTC \(in /);
    expect(await page.locator('#workers').textContent()).toBe('1');

    // Upstream's words are text: shown, never run; no key on the page.
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    expect(await page.locator('main img').count()).toBe(0);
    const html = await page.content();
    for (const secret of [appKey, gatewayKey, PASSWORD]) expect(html).not.toContain(secret);

    if (backend === 'postgres') {
      for (const file of SHOTS) {
        mkdirSync(path.dirname(file), { recursive: true });
        await page.screenshot({ path: file, fullPage: true });
      }
    }

    // The archived body, as plain text: the problem as upstream sent it, its HTML inert.
    const body = await page.goto(`http://127.0.0.1:${port}${refusedHref}`);
    expect(body?.headers()['content-type']).toBe('text/plain; charset=utf-8');
    expect(body?.headers()['x-content-type-options']).toBe('nosniff');
    const text = await body!.text();
    expect(JSON.parse(text)).toMatchObject({ title: HOSTILE_TITLE, detail: HOSTILE_DETAIL, code: 'unprocessable_history', status: 422 });
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');

    // Nothing left loopback.
    expect(requests.length).toBeGreaterThan(0);
    for (const url of requests) expect(LOOPBACK.has(hostOf(url)), url).toBe(true);
    await page.close();
  });

  it('refreshes itself and serves only the bodies of failures', async () => {
    const { page, requests } = await open(`http://127.0.0.1:${port}/`, { clock: true });
    const before = await page.locator('p.refresh').textContent();
    expect(before).toMatch(/refreshes itself every 15 s/);
    // The page's own script fetches it again and swaps it in (every 15 s): the read time moves.
    // The server's read time is to the second: one real second on, then the page's 15 s.
    await delay(1_100);
    await page.clock.fastForward(15_000);
    await expect.poll(() => page.locator('p.refresh').textContent(), { timeout: patience(30_000), interval: 200 }).not.toBe(before);
    for (const url of requests) expect(LOOPBACK.has(hostOf(url)), url).toBe(true);
    expect(requests.filter((u) => new URL(u).pathname === '/').length).toBeGreaterThanOrEqual(2);
    await page.close();
    // A body of data (a 2xx understood) is not the page's to serve; nor is an id that is no body.
    const [ok] = await fx.warehouse.query<{ id: number }>(sql`select id from sync.raw_responses where status = 'ok' and http_status = 200 limit 1`);
    for (const id of [ok!.id, 999_999_999]) expect((await fetch(`http://127.0.0.1:${port}/body/${id}`)).status).toBe(404);
    const text = await (await fetch(`http://127.0.0.1:${port}/status.json`)).text();
    for (const secret of [appKey, gatewayKey, PASSWORD]) expect(text).not.toContain(secret);
    // Asked for by another name (a DNS-rebinding page's), the worker's page says 421 and nothing of itself.
    for (const path of ['/', '/status.json']) {
      const misdirected = await getNaming(port, path, 'rebind.attacker.example');
      expect(misdirected.status, path).toBe(421);
      expect(misdirected.body).not.toContain(run.runId);
    }
    expect((await getNaming(port, '/healthz', 'rebind.attacker.example')).status).toBe(200);
    const json = JSON.parse(text) as { groups: unknown[]; buckets: { bucket: string }[] };
    expect(json.buckets.map((b) => b.bucket).sort()).toEqual([...BUCKETS].sort());
  });

  it('`tesync status --serve` serves the same page without the worker, on 127.0.0.1', async () => {
    const { DATABASE_URL, REDIS_URL, TE_QUEUE_PREFIX } = env;
    // The budget read from where the workers keep it: Redis with REDIS_URL, else the warehouse.
    serve = startCli(['status', '--serve', '--port', '0'], { DATABASE_URL, REDIS_URL, TE_QUEUE_PREFIX, LOG_LEVEL: 'warn' });
    await serve.waitFor(/Status page of .*: http:\/\/127\.0\.0\.1:\d+\//, 60_000);
    const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(serve.stdout())![0];
    const { page, requests } = await open(url);
    expect(await page.locator('tr.group').count()).toBe((await readGroups(fx.warehouse)).length);
    expect(await page.locator(`li[data-run="${run.runId}"]`).count()).toBe(1);
    expect(await page.locator('tr[data-bucket="gateway"] td').nth(1).textContent()).toMatch(/\d+ of 120/);
    expect(await page.locator(`tr.failing[data-resource="app: token/${refusedSlug}/history"] a.body-link`).count()).toBe(1);
    expect(await page.locator('#queues').textContent()).toContain('a worker\'s own page shows the queues');
    for (const secret of [appKey, gatewayKey, PASSWORD]) expect(await page.content()).not.toContain(secret);
    for (const u of requests) expect(LOOPBACK.has(hostOf(u)), u).toBe(true);
    await page.close();
    serve.child.kill('SIGTERM');
    const ended = await serve.exited;
    expect(ended.code, ended.stderr).toBe(0);
  });
});
