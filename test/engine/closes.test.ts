// Complete sets close, partial ones do not (contract: "Absence is not emptiness", and "A
// fully fetched set closes what it no longer carries"). A simulator whose sets each lose one
// member closes each at the instant of the response that no longer carried it; one whose
// answers leave parts out (a page without `sections`, a bundle without its arrays, a token
// list cut short without a count) closes nothing, its resources `invalid` with the bodies
// kept, and the next sync fetches them again and repairs them (never `unchanged`). On
// Postgres and on the embedded server; the catalogs and the mass removal on Postgres.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { REMOVED_POINT_INDEX, REMOVED_SECTION, REMOVED_TIMEFRAME, removedHistoryDate, type SimOptions, type Simulator } from '../../sim/index.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import { useSimulator, useTestWarehouse, useWarehouseServer, type ServerStart } from '../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';
import { patience } from '../helpers/patience.ts';
import { syncOnce } from '../helpers/sync.ts';
import { BOTH_SERVERS, postgresWarehouses, type WarehouseServer } from '../helpers/servers.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const log = createTestLogger([appKey, gatewayKey], 'warn');
const SIM: SimOptions = { tokens: 6, historyDays: 6, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] };

// The simulator and warehouse of the block running now (blocks run one after another), which
// the helpers below use: each block's fixtures point them at its own as it starts.
let sim: Simulator;
let tw: Warehouse;

/** This block's simulator (the helpers' while it runs) and server (its blocks' warehouses'). */
function useSimAndServer(start: ServerStart): { readonly server: WarehouseServer } {
  const fx = useSimulator(SIM);
  const held = useWarehouseServer(start);
  beforeAll(() => {
    sim = fx.sim;
  });
  return held;
}
/** A fresh warehouse on `held`'s server for the block it is called in: the helpers' while it runs. */
function useBlockWarehouse(held: { readonly server: WarehouseServer }): void {
  const w = useTestWarehouse({ on: held });
  beforeAll(() => {
    tw = w;
  });
}

const sync = async (full = false) => {
  const r = await syncOnce(sim, tw, log.logger, { appKey, gatewayKey }, ['app', 'gateway'], { full });
  return r;
};
const count = async (from: string) => Number((await tw.query<{ n: string }>(sql.raw(`select count(*)::text as n from ${from}`)))[0]!.n);
const state = async (source: string, resource: string) =>
  (await tw.query<{ status: string; last_run_id: string; last_error: string | null }>(sql`select status, last_run_id, last_error from sync.resource_state where source = ${source} and resource = ${resource}`))[0];

/**
 * The rows of `table` that `where` picks are gone from it, and were closed by the run that
 * got the response without them: each version's `known_to` falls inside that run, and the
 * table as of that instant lacks the rows it still had a microsecond before.
 */
async function closedBy(table: string, where: string, runId: string): Promise<number> {
  const [run] = await tw.query<{ started: string; finished: string }>(sql`select started_at::text as started, finished_at::text as finished from sync.runs where id = ${runId}`);
  expect(await count(`${table} where ${where}`), `${table} still holds ${where}`).toBe(0);
  const ends = await tw.query<{ known_to: string; inside: boolean }>(
    sql.raw(`select distinct known_to::text as known_to, known_to between '${run!.started}' and '${run!.finished}' as inside from ${table}_history where ${where} and known_to >= '${run!.started}'`),
  );
  expect(ends.length, `${table}: a version of ${where} closed in the run`).toBeGreaterThan(0);
  let closed = 0;
  for (const e of ends) {
    expect(e.inside, `${table} closed at ${e.known_to}, inside the run`).toBe(true);
    expect(await count(`${table}_as_of('${e.known_to}') x where ${where}`)).toBe(0);
    closed += await count(`${table}_as_of(timestamptz '${e.known_to}' - interval '1 microsecond') x where ${where}`);
  }
  expect(closed, `${table}: ${where} was there until the closing response`).toBeGreaterThan(0);
  return closed;
}

describe.each(BOTH_SERVERS)('on %s', (_label, start) => {
  const held = useSimAndServer(start);

  describe('fully fetched sets close what they lost', () => {
    useBlockWarehouse(held);
    beforeAll(async () => {
      sim.setLosses({ removed: false, omitted: [] });
    });

    it('a day of a history, a point of a chart, a section, a screener row, a catalog metric: each closed by the response without it', async () => {
      expect((await sync()).status).toBe('succeeded');
      const slug = sim.data.appTokens().find((t) => t.coverage.metricHistory && t.coverage.charts)!.slug;
      const gone = removedHistoryDate(sim.data);
      const chartKey = sim.data.appCharts(slug)![0]!.key;
      const appX = sim.data.appChartData(slug, chartKey)!.rows[REMOVED_POINT_INDEX]![0]!;
      const appRow = sim.data.appScreenerRows().at(-1)!.token.slug;
      const metric = sim.data.appMetrics().at(-1)!.slug;
      const gwSlug = sim.data.gatewayTokens().find((t) => (sim.data.gatewayCharts(t.slug) ?? []).length > 0)!.slug;
      const gwChart = sim.data.gatewayCharts(gwSlug)![0]!;
      const [tf] = await tw.query<{ timeframe: string }>(sql`select timeframe from gateway.chart_points where token_slug = ${gwSlug} and chart_key = ${gwChart.key} limit 1`);
      const gwTs = sim.data.gatewayChartData(gwSlug, gwChart.key, tf!.timeframe as never)!.data[REMOVED_POINT_INDEX]!.timestamp;
      const [period] = await tw.query<{ period: string }>(sql`select period from gateway.trend_points where token_slug = ${gwSlug} limit 1`);
      const trendTs = sim.data.gatewayTrend(gwSlug, period!.period as never)!.times[REMOVED_POINT_INDEX]!;
      const gwRow = sim.data.gatewayScreenerRows().at(-1)!.slug;
      const before = await count('app.metric_history');
      const onTheDay = await count(`app.metric_history where ts = '${gone}T00:00:00Z'`);

      sim.setLosses({ removed: true });
      // Whole: the history is fetched without `from=`, as its periodic full fetch does.
      const run = await sync(true);
      expect(run.status).toBe('succeeded');

      const perDay = await closedBy('app.metric_history', `token_slug = '${slug}' and ts = '${gone}T00:00:00Z'`, run.runId);
      expect(perDay).toBeGreaterThanOrEqual(3);
      // Every token's day, and nothing else.
      expect(await count('app.metric_history')).toBe(before - onTheDay);
      await closedBy('app.chart_points', `token_slug = '${slug}' and chart_key = '${chartKey}' and x = '${appX}'`, run.runId);
      await closedBy('app.screener_rows', `token_slug = '${appRow}'`, run.runId);
      await closedBy('app.metrics', `slug = '${metric}'`, run.runId);
      expect(await count('app.metrics')).toBe(sim.data.appMetrics().length);
      await closedBy('gateway.token_sections', `token_slug = '${gwSlug}' and section = '${REMOVED_SECTION}'`, run.runId);
      await closedBy('gateway.chart_points', `token_slug = '${gwSlug}' and chart_key = '${gwChart.key}' and timeframe = '${tf!.timeframe}' and ts = '${gwTs}'`, run.runId);
      await closedBy('gateway.trend_points', `token_slug = '${gwSlug}' and period = '${period!.period}' and ts = '${trendTs}'`, run.runId);
      await closedBy('gateway.screener_rows', `token_slug = '${gwRow}'`, run.runId);
      // Nothing else left: every other section and screener row is still there.
      expect(await count(`gateway.token_sections where section <> '${REMOVED_SECTION}'`)).toBe(sim.data.gatewayTokens().length);
      expect(await count('app.screener_rows')).toBe(sim.data.appScreenerRows().length);
      // The tokens stay listed: a screener row leaving is not a delisting.
      expect(await count('app.tokens where delisted_at is not null')).toBe(0);
      expect(await count('gateway.tokens where delisted_at is not null')).toBe(0);
    }, patience(120_000));
  });

  describe('partial responses close nothing, and the next sync repairs them', () => {
    useBlockWarehouse(held);
    beforeAll(async () => {
      sim.setLosses({ removed: false, omitted: [] });
    });

    const versions = async () => (await count('gateway.token_sections_history')) + (await count('app.value_drivers_history')) + (await count('app.value_driver_edges_history')) + (await count('app.token_functions_history'));
    const invalidBodies = (like: string) => tw.query<{ body_text: string }>(sql`select body_text from sync.raw_responses where status = 'invalid' and path like ${like}`);

    it('a page without sections and a bundle without its arrays: refused, bodies kept, repaired next time', async () => {
      expect((await sync()).status).toBe('succeeded');
      const slug = sim.data.gatewayTokens()[0]!.slug;
      const bundleSlug = sim.data.appTokens()[0]!.slug;
      const sections = await count('gateway.token_sections');
      const drivers = await count('app.value_drivers');
      expect(sections).toBeGreaterThan(0);
      expect(drivers).toBeGreaterThan(0);
      const v0 = await versions();

      sim.setLosses({ omitted: ['sections', 'bundleArrays'] });
      // Fetched whatever the markers say, as a resync after upstream moved would.
      const partial = await sync(true);
      expect(partial.status).toBe('partial');
      expect(await state('gateway', `token/${slug}/page`)).toMatchObject({ status: 'invalid', last_run_id: partial.runId });
      expect((await state('gateway', `token/${slug}/page`))!.last_error).toMatch(/sections/);
      expect(await state('app', `token/${bundleSlug}/bundle`)).toMatchObject({ status: 'invalid', last_run_id: partial.runId });
      expect(await count('gateway.token_sections')).toBe(sections);
      expect(await count('app.value_drivers')).toBe(drivers);
      expect(await versions()).toBe(v0);
      const pages = await invalidBodies(`/v1/tokens/${slug}`);
      expect(pages.length).toBe(1);
      expect(pages[0]!.body_text).not.toContain('"sections"');
      expect((await invalidBodies(`/api/v1/tokens/${bundleSlug}/full`)).length).toBe(1);

      sim.setLosses({ omitted: [] });
      // Not full: the markers are as before, but a refused answer vouches for nothing.
      const repair = await sync();
      expect(repair.status).toBe('succeeded');
      expect(await state('gateway', `token/${slug}/page`)).toMatchObject({ status: 'ok', last_run_id: repair.runId });
      expect(await state('app', `token/${bundleSlug}/bundle`)).toMatchObject({ status: 'ok', last_run_id: repair.runId });
      expect(await count('gateway.token_sections')).toBe(sections);
      expect(await count('app.value_drivers')).toBe(drivers);
      expect(await versions()).toBe(v0);
    }, patience(120_000));

    it('a token list cut short without a count: outvoted two to one, nothing delisted, the cut kept invalid', async () => {
      const listed = await count('app.tokens where delisted_at is null');
      const gwListed = await count('gateway.tokens where delisted_at is null');
      expect(listed - 2).toBeGreaterThanOrEqual(3);

      sim.setLosses({ omitted: ['tokenListCut'] });
      sim.resetRequests();
      const cut = await sync();
      // The cut answer, then two whole ones fetched at once: the two that agree are written.
      expect(sim.requests.filter((r) => r.path === '/api/v1/tokens')).toHaveLength(3);
      expect(cut.status).toBe('succeeded');
      for (const source of ['app', 'gateway']) expect(await state(source, 'tokens'), source).toMatchObject({ status: 'ok', last_run_id: cut.runId });
      expect(await count('app.tokens where delisted_at is null')).toBe(listed);
      expect(await count('gateway.tokens where delisted_at is null')).toBe(gwListed);
      expect(await count('app.tokens_history')).toBe(0);
      const kept = await invalidBodies('/api/v1/tokens');
      expect(kept.length).toBe(1);
      expect(JSON.parse(kept[0]!.body_text).data).toHaveLength(2);
      expect((await invalidBodies('/v1/tokens')).length).toBe(1);
      sim.setLosses({ omitted: [] });
    }, patience(120_000));
  });
});

// The catalogs and the mass removal: the same code on either server, shown on Postgres.
describe('catalogs and mass removals, on Postgres', () => {
  const held = useSimAndServer(postgresWarehouses);

  describe('a catalog closes what hangs from it', () => {
    useBlockWarehouse(held);
    // Two charts a token, both timeframes every gateway chart lists mirrored.
    const fx2 = useSimulator({ tokens: 6, historyDays: 6, chartsPerToken: 2, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
    const sync2 = () => syncOnce(fx2.sim, tw, log.logger, { appKey, gatewayKey, env: { TE_GATEWAY_CHART_TIMEFRAMES: `30d,${REMOVED_TIMEFRAME}` } }, ['app', 'gateway'], { full: true });

    it('a chart gone from a catalog, a timeframe or a series gone from a chart, a token gone from the screener: their rows closed', async () => {
      expect((await sync2()).status).toBe('succeeded');
      const slug = fx2.sim.data.appTokens().find((t) => (fx2.sim.data.appCharts(t.slug) ?? []).length >= 2)!.slug;
      const appGone = fx2.sim.data.appCharts(slug)!.at(-1)!.key;
      const gwSlug = fx2.sim.data.gatewayTokens().find((t) => (fx2.sim.data.gatewayCharts(t.slug) ?? []).length >= 2)!.slug;
      const [gwKept, gwGone] = fx2.sim.data.gatewayCharts(gwSlug)!.map((c) => c.key);
      const series = fx2.sim.data.gatewayChartData(gwSlug, gwKept!, '30d')!.config.series;
      expect(series.length, 'the chart has two series or more').toBeGreaterThanOrEqual(2);
      const lostSeries = series.at(-1)!.key;
      const seriesBefore = await count(`gateway.chart_series where token_slug = '${gwSlug}' and chart_key = '${gwKept}'`);
      const screenerGone = fx2.sim.data.appScreenerRows().at(-1)!.token.slug;
      const screenerCells = await count(`app.metric_values where surface = 'screener'`);
      const goneCells = await count(`app.metric_values where surface = 'screener' and token_slug = '${screenerGone}'`);
      expect(goneCells).toBeGreaterThan(0);
      expect(await count(`gateway.chart_points where token_slug = '${gwSlug}' and chart_key = '${gwKept}' and timeframe = '${REMOVED_TIMEFRAME}'`)).toBeGreaterThan(0);

      fx2.sim.setLosses({ removed: true });
      const run = await sync2();
      expect(run.status).toBe('succeeded');

      // The app chart no longer listed: its entry and every point.
      await closedBy('app.charts', `token_slug = '${slug}' and chart_key = '${appGone}'`, run.runId);
      await closedBy('app.chart_points', `token_slug = '${slug}' and chart_key = '${appGone}'`, run.runId);
      // The gateway chart no longer listed: its entry, timeframes, series and points.
      for (const table of ['gateway.charts', 'gateway.chart_timeframes', 'gateway.chart_series', 'gateway.chart_points']) {
        await closedBy(table, `token_slug = '${gwSlug}' and chart_key = '${gwGone}'`, run.runId);
      }
      // The listed chart's timeframe it no longer lists: closed with its points; the other stays.
      await closedBy('gateway.chart_timeframes', `token_slug = '${gwSlug}' and chart_key = '${gwKept}' and timeframe = '${REMOVED_TIMEFRAME}'`, run.runId);
      await closedBy('gateway.chart_points', `token_slug = '${gwSlug}' and chart_key = '${gwKept}' and timeframe = '${REMOVED_TIMEFRAME}'`, run.runId);
      expect(await count(`gateway.chart_points where token_slug = '${gwSlug}' and chart_key = '${gwKept}' and timeframe = '30d'`)).toBeGreaterThan(0);
      // A series gone from a listed chart (its config and every row of every timeframe): closed
      // with its points; the chart's other series stay.
      await closedBy('gateway.chart_series', `token_slug = '${gwSlug}' and chart_key = '${gwKept}' and series_key = '${lostSeries}'`, run.runId);
      await closedBy('gateway.chart_points', `token_slug = '${gwSlug}' and chart_key = '${gwKept}' and timeframe = '30d' and series_key = '${lostSeries}'`, run.runId);
      expect(await count(`gateway.chart_series where token_slug = '${gwSlug}' and chart_key = '${gwKept}'`)).toBe(seriesBefore - 1);
      // The token gone from the screener: its cells there, and no other cell.
      await closedBy('app.metric_values', `surface = 'screener' and token_slug = '${screenerGone}'`, run.runId);
      expect(await count(`app.metric_values where surface = 'screener'`)).toBe(screenerCells - goneCells);
      // Nothing of a chart still listed: every app chart listed still has points.
      const listedWithout = await count(`app.charts c where not exists (select 1 from app.chart_points p where p.token_slug = c.token_slug and p.chart_key = c.chart_key)`);
      expect(listedWithout).toBe(0);
    }, patience(120_000));
  });

  describe('a mass removal is written only when a second response agrees', () => {
    useBlockWarehouse(held);
    beforeAll(async () => {
      sim.setLosses({ removed: false, omitted: [] });
    });

    it('the same short list twice in a row: fetched again at once, then delisted', async () => {
      expect((await syncOnce(sim, tw, log.logger, {}, ['app'])).status).toBe('succeeded');
      const listed = sim.data.appTokens().length;
      const body = JSON.parse(await (await fetch(`${sim.url}/api/v1/tokens`)).text()) as { data: unknown[]; meta: Record<string, unknown> };
      const short = JSON.stringify({ data: body.data.slice(0, 2), meta: { asOf: body.meta.asOf } });
      const answer = { status: 200, headers: { 'content-type': 'application/json' }, body: short };
      sim.script('/api/v1/tokens', [answer, answer]);
      sim.resetRequests();
      const run = await syncOnce(sim, tw, log.logger, {}, ['app'], { tokens: [] });
      expect(sim.requests.filter((r) => r.path === '/api/v1/tokens')).toHaveLength(2);
      expect(await state('app', 'tokens')).toMatchObject({ status: 'ok', last_run_id: run.runId });
      expect(await count('app.tokens where delisted_at is not null')).toBe(listed - 2);
      expect(await count("sync.raw_responses where status = 'invalid'")).toBe(0);
    }, patience(60_000));
  });
});
