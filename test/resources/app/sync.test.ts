// The app source end to end: simulator over real HTTP → tesync → real Postgres.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../sim/index.ts';
import { appCounts, contentDigest, expectAppMirror } from '../../helpers/app-mirror.ts';
import { freshWarehouse, useSimAndWarehouse, useTestWarehouse } from '../../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../../helpers/services.ts';
import { syncOnce } from '../../helpers/sync.ts';

const appKey = canaryKey('app');
const testLog = createTestLogger([appKey], 'info');

describe('app sync', () => {
  const fx = useSimAndWarehouse({ tokens: 10, historyDays: 60, chartsPerToken: 2, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } } });

  it('mirrors every table exactly after one sync, with no key on public routes', async () => {
    const run = await fx.sync(testLog.logger, { appKey }, ['app']);
    expect(run.status).toBe('succeeded');
    expect(run.stats.failed).toBe(0);
    await expectAppMirror(fx.warehouse, fx.sim.data, { bundles: 'ok' });
    const withAuth = fx.sim.requests.filter((r) => r.headers.authorization);
    expect(withAuth.length).toBeGreaterThan(0);
    expect(withAuth.every((r) => r.path.endsWith('/full'))).toBe(true);
    expect(fx.sim.requests.some((r) => r.path.includes('/internal/'))).toBe(false);
  });

  it('a second sync adds no rows, changes nothing but fetch times, and makes far fewer requests', async () => {
    const firstRequests = fx.sim.requests.length;
    const before = await appCounts(fx.warehouse);
    const digests = await Promise.all(['metric_history', 'chart_points', 'metric_values', 'screener_rows', 'tokens', 'value_drivers'].map((t) => contentDigest(fx.warehouse, t)));
    fx.sim.resetRequests();
    const run = await fx.sync(testLog.logger, { appKey }, ['app']);
    expect(run.status).toBe('succeeded');
    expect(await appCounts(fx.warehouse)).toEqual(before);
    expect(await Promise.all(['metric_history', 'chart_points', 'metric_values', 'screener_rows', 'tokens', 'value_drivers'].map((t) => contentDigest(fx.warehouse, t)))).toEqual(digests);
    // Unchanged charts are not fetched again; history asks only for the last days.
    const second = fx.sim.requests.length;
    expect(fx.sim.requests.filter((r) => /\/charts\/[^/?]+/.test(r.path))).toHaveLength(0);
    // The token list's freshness markers say nothing moved: only the catalog, the token
    // list and the screener (the sources of those markers) are read again.
    expect(fx.sim.requests.map((r) => r.path.split('?')[0]).sort()).toEqual(['/api/v1/metrics', '/api/v1/screener', '/api/v1/tokens']);
    expect(second).toBe(3);
    console.info(`requests: first sync ${firstRequests}, unchanged second sync ${second}`);
  });

  it('after an epoch switch: delisted token kept with delisted_at, revised value, new day, new bundle content', async () => {
    fx.sim.setEpoch(1);
    fx.sim.resetRequests();
    const changes = fx.sim.data.epochChanges;
    const run = await fx.sync(testLog.logger, { appKey }, ['app']);
    expect(run.status).toBe('succeeded');
    // History is fetched incrementally: from the last day seen, less the overlap.
    const historyRequests = fx.sim.requests.filter((r) => r.path.includes('/metrics/history'));
    expect(historyRequests.length).toBeGreaterThan(0);
    expect(historyRequests.every((r) => r.path.includes('from='))).toBe(true);
    const w = fx.warehouse;
    const [delisted] = await w.query<{ delisted_at: Date | null; rows: string }>(
      sql`select t.delisted_at, (select count(*)::text from app.metric_history h where h.token_slug = t.slug) as rows from app.tokens t where slug = ${changes.delistedSlug}`,
    );
    expect(delisted!.delisted_at).not.toBeNull();
    expect(Number(delisted!.rows)).toBeGreaterThan(0);
    const [revised] = await w.query<{ v: string }>(sql`select effective_market_cap::text as v from app.screener_rows where token_slug = ${changes.revised!.slug}`);
    expect(revised!.v).toBe(changes.revised!.app.after);
    const [day] = await w.query<{ n: string }>(sql`select count(*)::text as n from app.metric_history where ts = ${`${changes.newDate}T00:00:00Z`}::timestamptz`);
    expect(Number(day!.n)).toBeGreaterThan(0);
    const [driver] = await w.query<{ n: string }>(sql`select count(*)::text as n from app.value_drivers where token_slug = ${changes.bundle!.slug} and driver_id = ${changes.bundle!.addedDriverId}`);
    expect(Number(driver!.n)).toBe(1);
    await expectAppMirror(w, fx.sim.data, { bundles: 'ok' });
  });

  it('a sync without the key marks bundles skipped, and the next with it fetches them again', async () => {
    const bundles = () =>
      fx.warehouse.query<{ status: string; summary: string | null }>(sql`select b.status, b.summary from app.research_bundles b join app.tokens t on t.slug = b.token_slug where t.delisted_at is null`);
    expect((await bundles()).every((b) => b.status === 'ok')).toBe(true);
    await fx.sync(testLog.logger, {}, ['app']);
    const skipped = await bundles();
    expect(skipped.every((b) => b.status === 'skipped' && b.summary !== null)).toBe(true);
    fx.sim.resetRequests();
    await fx.sync(testLog.logger, { appKey }, ['app']);
    expect(fx.sim.requests.filter((r) => r.path.endsWith('/full')).length).toBe(skipped.length);
    expect((await bundles()).every((b) => b.status === 'ok')).toBe(true);
  });

  it('keeps every secret out of the logs and the database', async () => {
    expect(testLog.lines().length).toBeGreaterThan(10);
    expect(testLog.lines().join('\n')).not.toContain(appKey);
    const [hits] = await fx.warehouse.query<{ n: string }>(
      sql`select ((select count(*) from sync.requests where path like ${`%${appKey}%`}) + (select count(*) from sync.raw_responses where body::text like ${`%${appKey}%`} or body_text like ${`%${appKey}%`}))::text as n`,
    );
    expect(hits!.n).toBe('0');
  });
});

describe('app sync, every open form at once', () => {
  const fx = useSimAndWarehouse({
    tokens: 8,
    historyDays: 30,
    chartsPerToken: 2,
    seed: 7,
    forms: { appNumber: 'mixed', historyRows: 'mixed', historyTime: 'mixed', historyAll: 'mixed', chartLabels: true, chartKeyField: 'mixed', chartLinkField: 'mixed', hostileLinks: true },
  });

  it('mirrors exactly whatever the form (chart label columns no series), never follows a hostile link, and records bundles as skipped without a key', async () => {
    const run = await fx.sync(testLog.logger, {}, ['app']);
    expect(run.stats.failed).toBe(0);
    await expectAppMirror(fx.warehouse, fx.sim.data, { bundles: 'skipped', bareNumbers: true });
    expect(fx.sim.requests.some((r) => r.path.endsWith('/full'))).toBe(false);
    expect(fx.sim.requests.some((r) => r.path.includes('internal'))).toBe(false);
    expect(fx.sim.requests.every((r) => r.path.startsWith('/api/v1/'))).toBe(true);
  });
});

describe('bundle refusals and injected faults', () => {
  // Not a fixture's simulator: the first case starts it again, with a key its tokens decide.
  let sim: Simulator;
  const w = useTestWarehouse();
  const scoped = canaryKey('scoped');
  beforeAll(async () => {
    sim = await startSimulator({ tokens: 6, historyDays: 20, chartsPerToken: 2, seed: 11, appKeys: {} });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('records missing_scope with its scope, and no_credits, as bundle statuses', async () => {
    const [first, second] = sim.data.appTokens().map((t) => t.slug);
    await sim.close();
    // One key that may read two tokens but has credits for only one of them.
    sim = await startSimulator({ tokens: 6, historyDays: 20, chartsPerToken: 2, seed: 11, appKeys: { [scoped]: { scopes: [`tokens:read:${first}`, `tokens:read:${second}`], credits: [first!] } } });
    const run = await syncOnce(sim, w, testLog.logger, { appKey: scoped }, ['app']);
    expect(run.status).toBe('succeeded');
    const rows = await w.query<{ token_slug: string; status: string; missing_scope: string | null }>(sql`select token_slug, status, missing_scope from app.research_bundles order by token_slug`);
    const by = new Map(rows.map((r) => [r.token_slug, r]));
    expect(by.get(first!)?.status).toBe('ok');
    expect(by.get(second!)?.status).toBe('no_credits');
    const others = rows.filter((r) => r.token_slug !== first && r.token_slug !== second);
    expect(others.length).toBeGreaterThan(0);
    for (const r of others) expect(r).toMatchObject({ status: 'missing_scope', missing_scope: `tokens:read:${r.token_slug}` });
  });

  it('with 10% 503s and some truncated bodies, the run still ends with the complete mirror', async () => {
    const fresh = await freshWarehouse();
    sim.setFaults({ unavailableRate: 0.1, truncateRate: 0.05 });
    const run = await syncOnce(sim, fresh.warehouse, testLog.logger, {}, ['app']);
    sim.clearFaults();
    const injected = sim.requests.filter((r) => r.status === 503).length;
    expect(injected).toBeGreaterThan(0);
    expect(run.status).toBe('succeeded');
    await expectAppMirror(fresh.warehouse, sim.data, { bundles: 'skipped' });
    const [attempts] = await fresh.warehouse.query<{ n: string }>(sql`select count(*)::text as n from sync.requests where run_id = ${run.runId} and (http_status >= 500 or http_status is null or error is not null)`);
    expect(Number(attempts!.n)).toBeGreaterThan(0);
  });
});
