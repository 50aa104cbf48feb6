// No silent gaps in gateway charts: with the default TE_GATEWAY_CHART_TIMEFRAMES=all, a chart
// whose catalog entry does not list `all` is mirrored at the longest timeframe it does list,
// its points stored under that timeframe, and the substitution recorded (gateway.charts,
// the chart job's resource state, one log line).
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../../sim/index.ts';
import type { Timeframe } from '../../../sim/dataset-types.ts';
import { count, expectedTimeframes, expectGatewayMirror, json, q } from '../../helpers/gateway-mirror.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../../helpers/services.ts';

const key = canaryKey('gw');
const testLog = createTestLogger([key], 'info');
const chartDataRequests = (sim: Simulator) => sim.requests.filter((r) => /^\/v1\/tokens\/[^/]+\/charts\/[^/?]+/.test(r.path));

describe('gateway chart timeframes (defaults)', () => {
  const fx = useSimAndWarehouse({ tokens: 10, historyDays: 30, chartsPerToken: 3, gatewayKeys: [key], seed: 7 });
  const charts = () => fx.sim.data.gatewayTokens().flatMap((t) => (fx.sim.data.gatewayCharts(t.slug) ?? []).map((c) => ({ slug: t.slug, ...c })));
  const sync = (env: Record<string, string> = {}) => fx.sync(testLog.logger, { gatewayKey: key, env }, ['gateway']);

  it('the simulator has charts with and without `all`', () => {
    const all = charts();
    const without = all.filter((c) => !c.timeframes.includes('all'));
    console.info(`gateway charts: ${all.length}, without 'all': ${without.length}`);
    expect(without.length).toBeGreaterThan(0);
    expect(without.length).toBeLessThan(all.length);
  });

  it('gives every chart points after one sync, the substituted ones at their real timeframe, and says which', async () => {
    const run = await fx.sync(testLog.logger, { gatewayKey: key }, ['gateway']);
    expect(run.stats.failures).toEqual([]);
    expect(run.status).toBe('succeeded');
    // Every table against the simulator's truth for the timeframes actually mirrored, the
    // chart rows' mirrored_timeframes / timeframe_substitutions and the states' details too.
    await expectGatewayMirror(fx.warehouse, fx.sim.data, { timeframes: ['all'] });
    const w = fx.warehouse;
    const points = new Map((await q(w, `select token_slug || '|' || chart_key as k, string_agg(distinct timeframe, ',') as tfs, count(*)::text as n from gateway.chart_points group by 1`)).map((r) => [r.k!, r]));
    let substituted = 0;
    for (const c of charts()) {
      const want = expectedTimeframes(c.timeframes, ['all']);
      const got = points.get(`${c.slug}|${c.key}`);
      expect(Number(got?.n ?? 0), `${c.slug} ${c.key}`).toBeGreaterThan(0);
      // Stored under the timeframe fetched, never relabelled as 'all'.
      expect(got!.tfs, `${c.slug} ${c.key}`).toBe(want.mirrored.join(','));
      const [row] = await q(w, `select timeframe_substitutions::text as s, array_to_json(mirrored_timeframes)::text as m from gateway.charts where token_slug = '${c.slug}' and chart_key = '${c.key}'`);
      if (c.timeframes.includes('all')) {
        expect(json(row!.s)).toEqual({});
        continue;
      }
      substituted++;
      const instead = want.substitutions.all!;
      expect(instead).not.toBe('all');
      expect([json(row!.s), json(row!.m)]).toEqual([{ all: instead }, [instead]]);
      const [state] = await q(w, `select status, details::text as d from sync.resource_state where source = 'gateway' and resource = 'token/${c.slug}/chart/${c.key}/${instead}'`);
      expect(state!.status).toBe('ok');
      expect(json(state!.d)).toMatchObject({ mirrored: instead, requested: ['all'], substituted: true, substitutedFor: ['all'] });
      // The points equal the simulator's for that timeframe, row by row.
      const truth = fx.sim.data.gatewayChartData(c.slug, c.key, instead as Timeframe)!;
      expect(await count(w, `gateway.chart_points where token_slug = '${c.slug}' and chart_key = '${c.key}' and timeframe = '${instead}'`)).toBe(truth.data.length * truth.config.series.length);
    }
    expect(substituted).toBeGreaterThan(0);
    expect(await count(w, `sync.resource_state where source = 'gateway' and kind = 'chart' and resource like '%/all' and status <> 'ok'`)).toBe(0);
    // One info line per substitution.
    const logged = testLog.lines().filter((l) => l.includes('mirrored the longest it lists instead'));
    expect(logged).toHaveLength(substituted);
    expect(JSON.parse(logged[0]!)).toMatchObject({ level: 30, requested: ['all'] });
  });

  it('a second sync skips every chart, the substituted ones too', async () => {
    fx.sim.resetRequests();
    const run = await sync();
    expect(run.status).toBe('succeeded');
    expect(chartDataRequests(fx.sim)).toHaveLength(0);
    await expectGatewayMirror(fx.warehouse, fx.sim.data, { timeframes: ['all'] });
  });

  it('follows a change of TE_GATEWAY_CHART_TIMEFRAMES on unchanged data: one fetch per timeframe, the record up to date', async () => {
    fx.sim.resetRequests();
    const configured: Timeframe[] = ['all', '1y', '30d'];
    const run = await sync({ TE_GATEWAY_CHART_TIMEFRAMES: configured.join(',') });
    expect(run.stats.failures).toEqual([]);
    await expectGatewayMirror(fx.warehouse, fx.sim.data, { timeframes: configured });
    // Each chart timeframe asked at most once, though `all` and `1y` often come down to one.
    const paths = chartDataRequests(fx.sim).map((r) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
    const twoInOne = charts().filter((c) => [...expectedTimeframes(c.timeframes, configured).requested.values()].some((r) => r.length > 1));
    expect(twoInOne.length).toBeGreaterThan(0);
    // The catalogs were not fetched again: their rows' record of what is mirrored was written
    // as any write is, a version each, the rows still linked to the bodies they were read from.
    const [latest] = await q(fx.warehouse, `select id::text as id from sync.runs order by started_at desc limit 1`);
    expect(await count(fx.warehouse, `gateway.charts where run_id = '${latest!.id}'`)).toBeGreaterThan(0);
    expect(await count(fx.warehouse, `gateway.charts where raw_response_id is null`)).toBe(0);
    expect(await count(fx.warehouse, `gateway.charts_history h join gateway.charts c using (token_slug, chart_key) where h.known_to = c.fetched_at and h.mirrored_timeframes is distinct from c.mirrored_timeframes`)).toBeGreaterThan(0);
  });
});
