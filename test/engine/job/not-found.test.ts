// No silent gaps, no endless asking: a token or chart that upstream says does not exist (404
// `token_not_found` / `chart_not_found` on the app host, `chart-item-not-found` on the gateway)
// is recorded `not_found`, is not asked again on later syncs, and is asked again once its
// list or catalog says it is back (its marker moved, or it was left out and is listed again):
// one rule for both hosts (src/engine/job/not-found.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import { stillNotFound, wholeListOf } from '../../../src/engine/job/not-found.ts';
import { appChartJob } from '../../../src/resources/app/chart.ts';
import type { Simulator } from '../../../sim/index.ts';
import { json, q } from '../../helpers/gateway-mirror.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger, type TestWarehouse } from '../../helpers/services.ts';

const gatewayKey = canaryKey('gw');
const testLog = createTestLogger([gatewayKey], 'info');

type Envelope = { data: Record<string, unknown>[]; meta: Record<string, unknown> };

async function get(sim: Simulator, path: string, headers: Record<string, string> = {}): Promise<Envelope> {
  return (await fetch(`${sim.url}${path}`, { headers })).json() as Promise<Envelope>;
}

async function stateOf(tw: TestWarehouse, source: string, resource: string) {
  const [s] = await q(tw.warehouse, `select status, details::text as d from sync.resource_state where source = '${source}' and resource = '${resource}'`);
  return s ? { status: s.status, details: json(s.d) } : undefined;
}

describe('the rule', () => {
  it('leaves a not_found resource alone while it is planned with the marker its 404 came under', () => {
    const state = { status: 'not_found', details: { problem: {}, notFoundMarker: 'm1' } };
    expect(stillNotFound(state, 'm1')).toBe(true);
    expect(stillNotFound(state, 'm2')).toBe(false);
    // No marker: nothing tells it unchanged.
    expect(stillNotFound(state, null)).toBe(false);
    expect(stillNotFound({ status: 'not_found', details: { notFoundMarker: null } }, 'm1')).toBe(false);
    // Forgotten by a whole list that left it out.
    expect(stillNotFound({ status: 'not_found', details: { problem: {} } }, 'm1')).toBe(false);
    expect(stillNotFound({ ...state, status: 'ok' }, 'm1')).toBe(false);
    expect(stillNotFound(undefined, 'm1')).toBe(false);
  });

  it('a whole list names the resources it plans, of the jobs it plans them with', () => {
    const followUps = [
      { name: 'app.chart', payload: { slug: 'a', chartKey: 'k1', link: null, marker: 'x' } },
      { name: 'app.chart', payload: { slug: 'a', chartKey: 'k2', link: null, marker: null } },
      { name: 'app.screener', payload: {} },
    ];
    expect(wholeListOf('token/a/chart/', [appChartJob], followUps)).toEqual({ under: 'token/a/chart/', groups: ['chart'], planned: ['token/a/chart/k1', 'token/a/chart/k2'] });
  });
});

describe('app host 404s', () => {
  const fx = useSimAndWarehouse({ tokens: 8, historyDays: 15, chartsPerToken: 2, seed: 11 });
  const sync = () => fx.sync(testLog.logger, {}, ['app']);
  const asked = (prefix: string) => fx.sim.requests.filter((r) => r.path.startsWith(prefix)).length;
  /** Requests of a chart catalog (not of its charts' data). */
  const catalogAsked = (slug: string) => fx.sim.requests.filter((r) => r.path.split('?')[0] === `/api/v1/tokens/${slug}/charts`).length;
  // The chart: its catalog's 404 says it does not exist. The history token: its list entry
  // changes. The catalog token: it leaves the token list and comes back unchanged.
  let chart: { slug: string; key: string; path: string };
  let historySlug: string;
  let catalogSlug: string;

  beforeAll(async () => {
    const tokens = fx.sim.data.appTokens();
    const withCharts = tokens.filter((t) => t.coverage.charts && (fx.sim.data.appCharts(t.slug)?.length ?? 0) > 0);
    const c = fx.sim.data.appCharts(withCharts[0]!.slug)!;
    // A key no other key of the token starts with, so that the scripted prefix hits it alone.
    const entry = c.find((e) => !c.some((o) => o !== e && o.key.startsWith(e.key)))!;
    chart = { slug: withCharts[0]!.slug, key: entry.key, path: `/api/v1/tokens/${withCharts[0]!.slug}/charts/${entry.key}` };
    catalogSlug = withCharts[1]!.slug;
    historySlug = tokens.find((t) => t.coverage.metricHistory && t.slug !== chart.slug && t.slug !== catalogSlug)!.slug;
  });

  it('records a 404 token_not_found / chart_not_found as not_found', async () => {
    fx.sim.script(chart.path, [{ status: 404, code: 'chart_not_found' }]);
    fx.sim.script(`/api/v1/tokens/${historySlug}/metrics/history`, [{ status: 404, code: 'token_not_found' }]);
    fx.sim.script(`/api/v1/tokens/${catalogSlug}/charts`, [{ status: 404, code: 'token_not_found' }]);
    const run = await sync();
    // Upstream's answer about the resource, not a failure: the run is not partial for it.
    expect(run.status).toBe('succeeded');
    for (const r of [`token/${chart.slug}/chart/${chart.key}`, `token/${historySlug}/history`, `token/${catalogSlug}/charts`]) {
      expect((await stateOf(fx.tw, 'app', r))?.status, r).toBe('not_found');
    }
    // Everything else was mirrored.
    const [others] = await q(fx.warehouse, `select count(*)::text as n from sync.resource_state where source = 'app' and status not in ('ok', 'not_found')`);
    expect(others!.n).toBe('0');
  });

  it('does not ask them again while their list and catalog say the same', async () => {
    fx.sim.resetRequests();
    await sync();
    expect([asked(chart.path), asked(`/api/v1/tokens/${historySlug}/metrics/history`), catalogAsked(catalogSlug)]).toEqual([0, 0, 0]);
    // Kept: the marker the 404 came under.
    expect(typeof (await stateOf(fx.tw, 'app', `token/${historySlug}/history`))!.details.notFoundMarker).toBe('string');
    for (const r of [`token/${chart.slug}/chart/${chart.key}`, `token/${historySlug}/history`, `token/${catalogSlug}/charts`]) {
      expect((await stateOf(fx.tw, 'app', r))?.status, r).toBe('not_found');
    }
  });

  it('asks a token route again once the token list entry changed; a chart stays left alone while its catalog leaves it out', async () => {
    // Read what to script first: a scripted prefix answers the next request that matches it.
    const list = await get(fx.sim, '/api/v1/tokens');
    const catalog = await get(fx.sim, `/api/v1/tokens/${chart.slug}/charts`);
    // A verdict that changed (an asOf moved alone is a recomputation, no change: volatile-resync.test.ts).
    const flip = (f: { status?: unknown }) => (f.status === 'stale' ? 'fresh' : 'stale');
    const moved = (t: Record<string, unknown>) => ({ ...t, freshness: { ...(t.freshness as object), status: flip(t.freshness as { status?: unknown }) } });
    // The chart's token and the history token changed; the catalog token is not listed (a whole list).
    const data = list.data.filter((t) => t.slug !== catalogSlug).map((t) => (t.slug === historySlug || t.slug === chart.slug ? moved(t) : t));
    fx.sim.script('/api/v1/tokens', [{ status: 200, body: JSON.stringify({ ...list, data, meta: { ...list.meta, count: data.length } }) }]);
    // The chart's token's catalog is read again (its token moved), without the chart.
    const without = catalog.data.filter((e) => ![e.key, e.chartKey, e.id].includes(chart.key));
    fx.sim.script(`/api/v1/tokens/${chart.slug}/charts`, [{ status: 200, body: JSON.stringify({ ...catalog, data: without, meta: { ...catalog.meta, count: without.length } }) }]);
    fx.sim.resetRequests();
    await sync();
    expect(catalogAsked(chart.slug)).toBe(1);
    expect(asked(chart.path)).toBe(0);
    expect(asked(`/api/v1/tokens/${historySlug}/metrics/history`)).toBeGreaterThan(0);
    expect((await stateOf(fx.tw, 'app', `token/${historySlug}/history`))?.status).toBe('ok');
    expect(catalogAsked(catalogSlug)).toBe(0);
    // Left out by a whole list: the 404 is forgotten (still not_found, and asked once listed again).
    for (const r of [`token/${catalogSlug}/charts`, `token/${chart.slug}/chart/${chart.key}`]) {
      const s = await stateOf(fx.tw, 'app', r);
      expect(s?.status, r).toBe('not_found');
      expect(s!.details, r).not.toHaveProperty('notFoundMarker');
    }
  });

  it('asks a chart and a token again once they are listed again, with the same markers as at the 404', async () => {
    fx.sim.resetRequests();
    const run = await sync();
    expect(run.stats.failures).toEqual([]);
    expect(asked(chart.path)).toBe(1);
    expect(catalogAsked(catalogSlug)).toBe(1);
    expect((await stateOf(fx.tw, 'app', `token/${chart.slug}/chart/${chart.key}`))?.status).toBe('ok');
    expect((await stateOf(fx.tw, 'app', `token/${catalogSlug}/charts`))?.status).toBe('ok');
    const [points] = await q(fx.warehouse, `select count(*)::text as n from app.chart_points where token_slug = '${chart.slug}' and chart_key = '${chart.key}'`);
    expect(Number(points!.n)).toBeGreaterThan(0);
    // And a later unchanged sync asks none of them.
    fx.sim.resetRequests();
    await sync();
    expect(fx.sim.requests.filter((r) => /\/charts\/[^/?]+/.test(r.path))).toHaveLength(0);
  });

  it('a full sync asks everything, a not_found resource too', async () => {
    const full = () => fx.sync(testLog.logger, {}, ['app'], { full: true });
    fx.sim.script(chart.path, [{ status: 404, code: 'chart_not_found' }]);
    await full();
    expect((await stateOf(fx.tw, 'app', `token/${chart.slug}/chart/${chart.key}`))?.status).toBe('not_found');
    fx.sim.resetRequests();
    await full();
    expect(asked(chart.path)).toBe(1);
    expect((await stateOf(fx.tw, 'app', `token/${chart.slug}/chart/${chart.key}`))?.status).toBe('ok');
  });
});

describe('gateway 404s', () => {
  const fx = useSimAndWarehouse({ tokens: 6, historyDays: 15, chartsPerToken: 1, gatewayKeys: [gatewayKey], seed: 4 });

  it('a chart the gateway does not cover is not asked again until the read plane moves', async () => {
    const delisted = fx.sim.data.epochChanges.delistedSlug;
    const t = fx.sim.data.gatewayTokens().find((x) => x.slug !== delisted && (fx.sim.data.gatewayCharts(x.slug)?.[0]?.timeframes.includes('30d') ?? false))!;
    const key = fx.sim.data.gatewayCharts(t.slug)![0]!.key;
    const path = `/v1/tokens/${t.slug}/charts/${key}?timeframe=30d`;
    const resource = `token/${t.slug}/chart/${key}/30d`;
    const env = { TE_GATEWAY_CHART_TIMEFRAMES: '30d' };
    fx.sim.script(path, [{ status: 404, code: 'chart-item-not-found' }]);
    let run = await fx.sync(testLog.logger, { gatewayKey, env }, ['gateway']);
    expect(run.stats.failures).toEqual([]);
    expect((await stateOf(fx.tw, 'gateway', resource))?.status).toBe('not_found');

    fx.sim.resetRequests();
    run = await fx.sync(testLog.logger, { gatewayKey, env }, ['gateway']);
    expect(fx.sim.requests.filter((r) => r.path === path)).toHaveLength(0);
    expect((await stateOf(fx.tw, 'gateway', resource))?.status).toBe('not_found');

    fx.sim.setEpoch(1);
    fx.sim.resetRequests();
    run = await fx.sync(testLog.logger, { gatewayKey, env }, ['gateway']);
    expect(run.stats.failures).toEqual([]);
    expect(fx.sim.requests.filter((r) => r.path === path)).toHaveLength(1);
    expect((await stateOf(fx.tw, 'gateway', resource))?.status).toBe('ok');
  });

  it('the same rule on the gateway: a token route left alone until the whole token list leaves the token out and lists it again, the read plane unmoved', async () => {
    const env = { TE_GATEWAY_CHART_TIMEFRAMES: '30d', TE_GATEWAY_HISTORY_PERIODS: '30d' };
    const sync = (full = false) => fx.sync(testLog.logger, { gatewayKey, env }, ['gateway'], { full });
    const list = await get(fx.sim, '/v1/tokens', { authorization: `Bearer ${gatewayKey}` });
    const slug = String(list.data[0]!.slug);
    // A prefix only the token's history matches (a scripted prefix answers the next request that matches it).
    const history = `/v1/tokens/${slug}/metrics/history`;
    const resource = `token/${slug}/history/30d`;
    const askedHistory = () => fx.sim.requests.filter((r) => r.path.startsWith(history)).length;
    // A full sync, so that it is asked whatever the markers say.
    fx.sim.script(history, [{ status: 404, code: 'token-not-found' }]);
    await sync(true);
    expect((await stateOf(fx.tw, 'gateway', resource))?.status).toBe('not_found');

    // The read plane has not moved: left alone.
    fx.sim.resetRequests();
    await sync();
    expect(askedHistory()).toBe(0);

    // A whole list without it (the same asOf), then the list as it was.
    const without = list.data.filter((t) => t.slug !== slug);
    fx.sim.script('/v1/tokens', [{ status: 200, body: JSON.stringify({ ...list, data: without, meta: { ...list.meta, count: without.length } }) }]);
    await sync();
    expect((await stateOf(fx.tw, 'gateway', resource))!.details).not.toHaveProperty('notFoundMarker');
    fx.sim.resetRequests();
    await sync();
    expect(askedHistory()).toBe(1);
    expect((await stateOf(fx.tw, 'gateway', resource))?.status).toBe('ok');
  });
});
