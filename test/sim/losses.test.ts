// The simulator's losses (sim/losses.ts): `removed` takes one member out of every set, in the
// data and in whole answers; `omitted` leaves parts out of answers only (a token list cut
// once per list).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUT_LIST_LENGTH, REMOVED_POINT_INDEX, REMOVED_SECTION, removedHistoryDate, startSimulator, type Simulator } from '../../sim/index.ts';
import { get } from './support.ts';

const KEY = 'sim_app_key_0001';
const GW = 'sim_gateway_key_0001';
let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ tokens: 6, historyDays: 10, chartsPerToken: 1, appKeys: { [KEY]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [GW] });
});
afterAll(() => sim?.close());

const gw = (path: string) => get(`${sim.url}${path}`, { authorization: `Bearer ${GW}` });

describe('removed', () => {
  it('every set loses one member, in the data and in the answers', async () => {
    const slug = sim.data.appTokens().find((t) => t.coverage.metricHistory && t.coverage.charts)!.slug;
    const chartKey = sim.data.appCharts(slug)![0]!.key;
    const before = {
      days: sim.data.appHistory(slug)![0]!.rows.length,
      chart: sim.data.appChartData(slug, chartKey)!.rows,
      screener: sim.data.appScreenerRows().length,
      gwScreener: sim.data.gatewayScreenerRows().length,
    };
    const gwSlug = sim.data.gatewayTokens()[0]!.slug;
    sim.setLosses({ removed: true });
    try {
      const gone = removedHistoryDate(sim.data);
      expect(sim.data.appHistory(slug)![0]!.rows.map((r) => r.date)).not.toContain(gone);
      expect(sim.data.appHistory(slug)![0]!.rows).toHaveLength(before.days - 1);
      const history = await get(`${sim.url}/api/v1/tokens/${slug}/metrics/history?stream=all`);
      expect(history.text).not.toContain(gone);
      const chart = await get(`${sim.url}/api/v1/tokens/${slug}/charts/${chartKey}`);
      expect((chart.json.data.rows as unknown[][]).map((r) => r[0])).toEqual(before.chart.filter((_, i) => i !== REMOVED_POINT_INDEX).map((r) => r[0]));
      expect((await get(`${sim.url}/api/v1/screener`)).json.data).toHaveLength(before.screener - 1);
      expect((await gw('/v1/screener')).json.data).toHaveLength(before.gwScreener - 1);
      expect(Object.keys((await gw(`/v1/tokens/${gwSlug}`)).json.data.sections)).not.toContain(REMOVED_SECTION);
      // The tokens stay listed.
      expect((await get(`${sim.url}/api/v1/tokens`)).json.data).toHaveLength(6);
    } finally {
      sim.setLosses({ removed: false });
    }
    expect(sim.data.appHistory(slug)![0]!.rows).toHaveLength(before.days);
  });
});

describe('omitted', () => {
  it('pages without sections, bundles without their arrays, token lists cut once', async () => {
    const slug = sim.data.gatewayTokens()[0]!.slug;
    sim.setLosses({ omitted: ['sections', 'bundleArrays', 'tokenListCut'] });
    try {
      expect((await gw(`/v1/tokens/${slug}`)).json.data).not.toHaveProperty('sections');
      const bundle = (await get(`${sim.url}/api/v1/tokens/${slug}/full`, { authorization: `Bearer ${KEY}` })).json.data;
      for (const k of ['valueDrivers', 'valueDriverEdges', 'tokenFunctions']) expect(bundle).not.toHaveProperty(k);
      expect(bundle).toHaveProperty('summary');
      const cut = (await get(`${sim.url}/api/v1/tokens`)).json;
      expect(cut.data).toHaveLength(CUT_LIST_LENGTH);
      expect(cut.meta).not.toHaveProperty('count');
      const whole = (await get(`${sim.url}/api/v1/tokens`)).json;
      expect(whole.data).toHaveLength(6);
      expect(whole.meta.count).toBe(6);
      expect((await gw('/v1/tokens')).json.data).toHaveLength(CUT_LIST_LENGTH);
      // The data itself is whole.
      expect(sim.data.gatewayPage(slug)!.sections).toHaveProperty('trend');
    } finally {
      sim.setLosses({ omitted: [] });
    }
    expect((await gw(`/v1/tokens/${slug}`)).json.data).toHaveProperty('sections');
  });
});
