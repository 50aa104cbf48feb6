// The gateway source end to end: simulator over real HTTP → tesync → real Postgres.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/lib/config.ts';
import { performSync, type SyncOutcome } from '../../../src/cli/sync-session.ts';
import type { Simulator } from '../../../sim/index.ts';
import type { Period, Timeframe } from '../../../sim/dataset-types.ts';
import { FAST_RETRY_POLICY } from '../../../src/upstream/retry-policy.ts';
import type { Warehouse } from '../../../src/store/connection.ts';
import { contentDigest, expectAppMirror } from '../../helpers/app-mirror.ts';
import { byKey, count, expectGatewayMirror, GATEWAY_TABLES, gatewayCounts, q } from '../../helpers/gateway-mirror.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../../helpers/services.ts';

const key = canaryKey('gw');
const testLog = createTestLogger([key], 'info');
const PERIODS: Period[] = ['30d', '180d', '7d'];
const TIMEFRAMES: Timeframe[] = ['30d', 'all', '7d'];

function sync(sim: Simulator, w: Warehouse, env: Record<string, string> = {}, sources: ('app' | 'gateway')[] = ['gateway'], full = false): Promise<SyncOutcome> {
  const config = loadConfig({
    TE_GATEWAY_URL: sim.url,
    TE_GATEWAY_API_KEY: key,
    TE_CONCURRENCY: '8',
    TE_GATEWAY_HISTORY_PERIODS: PERIODS.join(','),
    TE_GATEWAY_CHART_TIMEFRAMES: TIMEFRAMES.join(','),
    ...(sources.includes('app') ? { TE_APP_URL: sim.url } : {}),
    ...env,
  });
  return performSync(config, testLog.logger, w, { sources, trigger: 'test', retry: FAST_RETRY_POLICY, full });
}

const chartDataRequests = (sim: Simulator) => sim.requests.filter((r) => /^\/v1\/tokens\/[^/]+\/charts\/[^/?]+/.test(r.path));

describe('gateway sync', () => {
  const fx = useSimAndWarehouse({
    tokens: 12,
    historyDays: 40,
    chartsPerToken: 2,
    gatewayKeys: [key],
    forms: { gatewayRowToken: 'mixed', chartKeyField: 'mixed', chartLinkField: 'mixed', hostileLinks: true },
  });
  let firstRequests = 0;

  it('mirrors every gateway table exactly after one sync, the key on every request, never off the routes', async () => {
    const run = await sync(fx.sim, fx.warehouse);
    expect(run.stats.failures).toEqual([]);
    expect(run.status).toBe('succeeded');
    const counts = await expectGatewayMirror(fx.warehouse, fx.sim.data, { periods: PERIODS, timeframes: TIMEFRAMES });
    firstRequests = fx.sim.requests.length;
    console.info(`gateway first sync: ${firstRequests} requests, rows ${JSON.stringify(counts)}`);
    // Mixed row naming: some rows came with only a symbol and still landed on their slug.
    const bySymbol = await q(fx.warehouse, `select token_slug, symbol from gateway.screener_rows where matched_by = 'symbol'`);
    expect(bySymbol.length).toBeGreaterThan(0);
    expect(fx.sim.requests.every((r) => r.headers.authorization === `Bearer ${key}`)).toBe(true);
    expect(fx.sim.requests.every((r) => r.path.startsWith('/v1/tokens') || r.path === '/v1/screener' || r.path === '/openapi-product.json')).toBe(true);
    expect(fx.sim.requests.some((r) => r.path.includes('internal') || r.path.includes('evil'))).toBe(false);
    // Each chart was asked only for timeframes its catalog lists (a configured one it does not
    // list is replaced by the longest it lists: timeframes-sync.test.ts).
    for (const r of chartDataRequests(fx.sim)) {
      const [, slug, chartKey, tf] = /^\/v1\/tokens\/([^/]+)\/charts\/([^/?]+)\?timeframe=(.+)$/.exec(r.path)!;
      expect(fx.sim.data.gatewayCharts(slug!)!.find((c) => c.key === chartKey)!.timeframes).toContain(tf);
    }
    expect(await count(fx.warehouse, 'sync.contract_changes')).toBe(0);
  });

  it('a second sync adds no rows, changes nothing but fetch times, and skips every unchanged chart', async () => {
    const w = fx.warehouse;
    const before = await gatewayCounts(w);
    const digests = await Promise.all(GATEWAY_TABLES.map((t) => contentDigest(w, `gateway.${t}`)));
    fx.sim.resetRequests();
    const run = await sync(fx.sim, w);
    expect(run.status).toBe('succeeded');
    expect(await gatewayCounts(w)).toEqual(before);
    expect(await Promise.all(GATEWAY_TABLES.map((t) => contentDigest(w, `gateway.${t}`)))).toEqual(digests);
    expect(chartDataRequests(fx.sim)).toHaveLength(0);
    const [unchanged] = await q(w, `select count(*)::text as n from sync.resource_state where source = 'gateway' and kind = 'chart' and status = 'unchanged'`);
    expect(Number(unchanged!.n)).toBeGreaterThan(0);
    expect(fx.sim.requests.length).toBeLessThan(firstRequests);
    console.info(`gateway requests: first sync ${firstRequests}, unchanged second sync ${fx.sim.requests.length}`);
    expect(await count(w, 'sync.contract_changes')).toBe(0);
  });

  it('matches rows that carry only a symbol to the right slug', async () => {
    fx.sim.setForms({ gatewayRowToken: 'symbol' });
    const run = await sync(fx.sim, fx.warehouse);
    fx.sim.setForms({ gatewayRowToken: 'mixed' });
    expect(run.status).toBe('succeeded');
    const rows = await q(fx.warehouse, `select token_slug, matched_by, eff_mcap::text from gateway.screener_rows order by token_slug`);
    expect(rows.every((r) => r.matched_by === 'symbol')).toBe(true);
    await expectGatewayMirror(fx.warehouse, fx.sim.data, { periods: PERIODS, timeframes: TIMEFRAMES });
  });

  it('a history that comes back null keeps the earlier points and says so in resource_state', async () => {
    const w = fx.warehouse;
    const slug = fx.sim.data.gatewayTokens().find((t) => fx.sim.data.gatewayTrend(t.slug, '30d') !== null)!.slug;
    const pointsOf = `gateway.trend_points where token_slug = '${slug}' and period = '30d'`;
    const before = await count(w, pointsOf);
    expect(before).toBeGreaterThan(0);
    fx.sim.script(`/v1/tokens/${slug}/metrics/history?period=30d`, [{ status: 200, body: JSON.stringify({ data: null, meta: { asOf: fx.sim.data.lastDate, count: null, source: { surface: 'token_trend', timeframe: '30d' } } }) }]);
    // The catalog's marker has not moved: only a full sync asks the history again.
    const run = await sync(fx.sim, w, {}, ['gateway'], true);
    expect(run.status).toBe('succeeded');
    expect(await count(w, pointsOf)).toBe(before);
    const [state] = await q(w, `select status, details->>'materialized' as m from sync.resource_state where source = 'gateway' and resource = 'token/${slug}/history/30d'`);
    expect(state).toEqual({ status: 'not_materialized', m: 'false' });
  });

  it('after an epoch switch: delisted token kept with delisted_at, revised value, new day, contract drift recorded', async () => {
    fx.sim.setEpoch(1);
    const changes = fx.sim.data.epochChanges;
    const w = fx.warehouse;
    fx.sim.resetRequests();
    const run = await sync(fx.sim, w);
    expect(run.status).toBe('succeeded');
    const [delisted] = await q(w, `select delisted_at::text, (select count(*)::text from gateway.trend_points p where p.token_slug = t.slug) as points, (select count(*)::text from gateway.screener_rows s where s.token_slug = t.slug) as rows from gateway.tokens t where slug = '${changes.delistedSlug}'`);
    expect(delisted!.delisted_at).not.toBeNull();
    expect(Number(delisted!.points)).toBeGreaterThan(0);
    // A whole screener without the token closes its row (the version stays in the history).
    expect(delisted!.rows).toBe('0');
    expect(await count(w, `gateway.screener_rows_history where token_slug = '${changes.delistedSlug}'`)).toBeGreaterThan(0);
    const [revised] = await q(w, `select eff_mcap::text as v from gateway.screener_rows where token_slug = '${changes.revised!.slug}'`);
    expect(revised!.v).toBe(changes.revised!.gateway.after);
    expect(await count(w, `gateway.trend_points where ts = '${changes.newDate}T00:00:00Z'`)).toBeGreaterThan(0);
    expect(await count(w, `gateway.chart_points where ts = '${changes.newDate}T00:00:00Z'`)).toBeGreaterThan(0);
    // The catalog's asOf moved: charts were fetched again.
    expect(chartDataRequests(fx.sim).length).toBeGreaterThan(0);
    const drift = await q(w, `select array_to_json(added_paths)::text as added, array_to_json(removed_paths)::text as removed, previous_sha256 is not null as prev, details->>'version' as version from sync.contract_changes`);
    expect(drift).toEqual([{ added: JSON.stringify([changes.openapiAddedPath]), removed: '[]', prev: true, version: '1.1.0' }]);
    expect(testLog.lines().some((l) => l.includes('gateway contract changed'))).toBe(true);
    await expectGatewayMirror(w, fx.sim.data, { accumulated: true, periods: PERIODS, timeframes: TIMEFRAMES });
    console.info(`gateway requests after the epoch switch: ${fx.sim.requests.length} (${chartDataRequests(fx.sim).length} chart data)`);
  });

  it('keeps the key out of the logs and the database', async () => {
    expect(testLog.lines().join('\n')).not.toContain(key);
    const [hits] = await q(
      fx.warehouse,
      `select ((select count(*) from sync.requests where path like '%${key}%') + (select count(*) from sync.raw_responses where body::text like '%${key}%' or body_text like '%${key}%'))::text as n`,
    );
    expect(hits!.n).toBe('0');
  });
});

describe('gateway problems and unreadable values', () => {
  const fx = useSimAndWarehouse({ tokens: 5, historyDays: 10, chartsPerToken: 1, gatewayKeys: [key], seed: 5 });

  it('records not-covered tokens, refused parameters, server errors with instance and request id, invalid decimals and unmatched rows', async () => {
    const get = async (path: string) => (await fetch(`${fx.sim.url}${path}`, { headers: { authorization: `Bearer ${key}` } })).json() as Promise<{ data: Record<string, unknown>[]; meta: { count: number } }>;
    // The catalog lists a token that none of the token routes cover (a race with delisting).
    const catalog = await get('/v1/tokens');
    catalog.data.push({ slug: 'ghost-token', symbol: 'GHO', name: 'Ghost', href: '/v1/tokens/ghost-token' });
    catalog.meta.count += 1;
    fx.sim.script('/v1/tokens', [{ status: 200, body: JSON.stringify(catalog) }]);
    // One value that is not a decimal, one with 70 digits, and a row naming an unknown symbol.
    const screener = await get('/v1/screener');
    const first = screener.data[0]!.slug as string;
    const huge = `-${'9'.repeat(40)}.${'1'.repeat(30)}`;
    screener.data[0] = { ...screener.data[0], effMcap: '12.3.4', mcap: huge };
    screener.data.push({ symbol: 'NOPE', name: 'Unknown', effMcap: '1' });
    screener.meta.count += 1;
    fx.sim.script('/v1/screener', [{ status: 200, body: JSON.stringify(screener) }]);
    const second = fx.sim.data.gatewayTokens()[1]!.slug;
    fx.sim.script(`/v1/tokens/${second}/metrics/history`, [{ status: 503 }]);
    const chart = fx.sim.data.gatewayTokens().map((t) => ({ slug: t.slug, c: fx.sim.data.gatewayCharts(t.slug)?.[0] })).find((x) => x.c?.timeframes.includes('30d'))!;
    fx.sim.script(`/v1/tokens/${chart.slug}/charts/${chart.c!.key}?timeframe=30d`, [{ status: 400, code: 'invalid-parameter' }]);
    // Two attempts per request, three runs of the job: six internal errors exhaust it.
    fx.sim.script('/openapi-product.json', Array.from({ length: 6 }, () => ({ status: 500 })));

    const run = await sync(fx.sim, fx.warehouse, { TE_MAX_ATTEMPTS: '2', TE_GATEWAY_HISTORY_PERIODS: '30d', TE_GATEWAY_CHART_TIMEFRAMES: '30d' });
    expect(run.status).toBe('partial');
    const w = fx.warehouse;
    const [row] = await q(w, `select status, eff_mcap::text, mcap::text, payload->>'effMcap' as raw from gateway.screener_rows where token_slug = '${first}'`);
    expect(row).toEqual({ status: 'invalid', eff_mcap: null, mcap: huge, raw: '12.3.4' });
    expect(await q(w, `select row_key, symbol, reason from gateway.screener_unmatched`)).toEqual([{ row_key: 'symbol:NOPE', symbol: 'NOPE', reason: 'unknown-symbol' }]);
    const states = byKey(
      await q(w, `select resource, status, details->'problem'->>'code' as code, details->'problem'->>'instance' as instance, details->'problem'->>'requestId' as rid from sync.resource_state where source = 'gateway'`),
      (r) => r.resource!,
    );
    for (const r of ['page', 'history/30d', 'charts']) {
      expect(states.get(`token/ghost-token/${r}`), r).toMatchObject({ status: 'not_found', code: 'token-not-found', instance: expect.stringMatching(/^\/v1\/tokens\/ghost-token/), rid: expect.stringMatching(/^sim-/) });
    }
    expect(states.get(`token/${second}/history/30d`)?.status).toBe('ok');
    expect(states.get(`token/${chart.slug}/chart/${chart.c!.key}/30d`)).toMatchObject({ status: 'failed', code: 'invalid-parameter', instance: `/v1/tokens/${chart.slug}/charts/${chart.c!.key}` });
    expect(states.get('openapi')).toMatchObject({ status: 'failed', code: 'internal-error', rid: expect.stringMatching(/^sim-/) });
    expect(states.get('screener')?.status).toBe('partial');
    expect(run.stats.failures.map((f) => f.resource).sort()).toEqual(['openapi', `token/${chart.slug}/chart/${chart.c!.key}/30d`].sort());
  });
});

describe('both sources in one run', () => {
  const fx = useSimAndWarehouse({ tokens: 6, historyDays: 15, chartsPerToken: 1, gatewayKeys: [key], seed: 3 });

  it('mirrors the app host and the gateway in one performSync', async () => {
    const run = await sync(fx.sim, fx.warehouse, {}, ['app', 'gateway']);
    expect(run.stats.failures).toEqual([]);
    expect(run.status).toBe('succeeded');
    await expectAppMirror(fx.warehouse, fx.sim.data, { bundles: 'skipped' });
    await expectGatewayMirror(fx.warehouse, fx.sim.data, { periods: PERIODS, timeframes: TIMEFRAMES });
    const runs = await q(fx.warehouse, `select distinct run_id::text as r from (select run_id from app.screener_rows union all select run_id from gateway.screener_rows union all select run_id from gateway.chart_points) x`);
    expect(runs).toEqual([{ r: run.runId }]);
  });
});
