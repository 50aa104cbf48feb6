// The analytics views answer the analysts' questions with what the simulator served: the
// listed universe with its latest screener values (and as it was at an instant), P/FCF per
// token and day, wide, the metric crosswalk covering the catalog and every gateway screener
// field, and data age per table.
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { ANALYTICS_VIEWS, CROSSWALK, WINDOWS } from '../../../src/schema/warehouse/analytics.ts';
import { declaredTables } from '../../../src/schema/warehouse/declare-table.ts';
import * as appTables from '../../../src/schema/warehouse/app.ts';
import * as gatewayTables from '../../../src/schema/warehouse/gateway.ts';
import { hasAsOf } from '../../../src/schema/warehouse/analytics.ts';
import { patience } from '../../helpers/patience.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../../helpers/services.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const testLog = createTestLogger([appKey, gatewayKey]);
const str = (d: { toString(): string } | null | undefined) => (d === null || d === undefined ? null : d.toString());

describe('analytics views', () => {
  const fx = useSimAndWarehouse({ tokens: 6, historyDays: 30, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  let beforeSwitch: string;
  beforeAll(async () => {
    expect((await fx.sync(testLog.logger, { appKey, gatewayKey }, ['app', 'gateway'])).status).toBe('succeeded');
    // An instant between the two syncs on the clock that stamps them: the server's.
    beforeSwitch = (await fx.warehouse.query<{ t: string }>(sql`select "sync"."server_clock"()::text as t`))[0]!.t;
    // The delisting epoch: one token leaves both universes, a value is revised.
    fx.sim.setEpoch(1);
    expect((await fx.sync(testLog.logger, { appKey, gatewayKey }, ['app', 'gateway'])).status).toBe('succeeded');
  }, patience(60_000));
  const q = <T>(text: string) => fx.warehouse.query<T & Record<string, unknown>>(sql.raw(text));

  it('app_universe: the listed tokens with the screener values served, and as it was before the switch', async () => {
    const view = fx.sim.data;
    const rows = await q<{ token_slug: string; pfcf_30d: string | null; effective_market_cap: string | null; holder_fcf_annualized: string | null }>(
      `select token_slug, pfcf_30d::text, effective_market_cap::text, holder_fcf_annualized::text from analytics.app_universe order by 1`,
    );
    const served = new Map(view.appScreenerRows().map((r) => [r.token.slug, r]));
    expect(rows.map((r) => r.token_slug)).toEqual(view.appTokens().map((t) => t.slug).sort());
    for (const r of rows) {
      const s = served.get(r.token_slug);
      expect({ pfcf: r.pfcf_30d, emc: r.effective_market_cap, fcf: r.holder_fcf_annualized }, r.token_slug).toEqual({
        pfcf: str(s?.multiples['30d'].value),
        emc: str(s?.effectiveMarketCap.value),
        fcf: str(s?.annualizedRevenue.value),
      });
    }
    const delisted = view.epochChanges.delistedSlug!;
    expect(rows.map((r) => r.token_slug)).not.toContain(delisted);
    const then = await q<{ token_slug: string }>(`select token_slug from analytics.app_universe_as_of('${beforeSwitch}') order by 1`);
    expect(then.map((r) => r.token_slug)).toContain(delisted);
    const revised = view.epochChanges.revised!;
    const [emcThen] = await q<{ v: string }>(`select effective_market_cap::text as v from analytics.app_universe_as_of('${beforeSwitch}') where token_slug = '${revised.slug}'`);
    expect(emcThen!.v).toBe(revised.app.before.toString());
  });

  it('gateway_universe: one row per listed token, every window wide, as served', async () => {
    const rows = await q<Record<string, string | null>>(
      `select token_slug, pfcf_annualized::text, ${WINDOWS.map((w) => `pfcf_${w}::text, holder_fcf_${w}::text`).join(', ')} from analytics.gateway_universe order by 1`,
    );
    const served = new Map(fx.sim.data.gatewayScreenerRows().map((r) => [r.slug, r]));
    expect(rows.map((r) => r.token_slug)).toEqual(fx.sim.data.gatewayTokens().map((t) => t.slug).sort());
    for (const r of rows) {
      const s = served.get(r.token_slug!);
      const want: Record<string, string | null> = { token_slug: r.token_slug!, pfcf_annualized: str(s?.multAnnualized) };
      for (const w of WINDOWS) {
        want[`pfcf_${w}`] = str(s?.windows[w].mult);
        want[`holder_fcf_${w}`] = str(s?.windows[w].rev);
      }
      expect(r, r.token_slug!).toEqual(want);
    }
  });

  it('app_pfcf_daily: one row per token, stream and day, each window a column equal to the long history', async () => {
    const [counts] = await q<{ wide: number; days: number }>(
      `select (select count(*) from analytics.app_pfcf_daily)::int as wide, (select count(distinct (token_slug, stream, ts)) from app.metric_history)::int as days`,
    );
    expect(counts!.wide).toBe(counts!.days);
    expect(counts!.wide).toBeGreaterThan(100);
    const [diff] = await q<{ n: number }>(
      `select count(*)::int as n from analytics.app_pfcf_daily d
       join app.metric_history h on h.token_slug = d.token_slug and h.stream = d.stream and (h.ts at time zone 'UTC')::date = d.day
       where (h.metric = 'erm30d' and h.value is distinct from d.pfcf_30d) or (h.metric = 'holderFcf' and h.value is distinct from d.holder_fcf_annualized)
          or (h.metric = 'effectiveMarketCap' and h.value is distinct from d.effective_market_cap)`,
    );
    expect(diff!.n).toBe(0);
  });

  it('metric_crosswalk: every metric of the catalog and every gateway screener field, each pointing at a real column', async () => {
    const rows = await q<{ app_catalog_slug: string | null; gateway_field: string | null; app_column: string | null; gateway_column: string | null; unit: string | null }>(
      `select app_catalog_slug, gateway_field, app_column, gateway_column, unit from analytics.metric_crosswalk`,
    );
    const slugs = new Set(rows.map((r) => r.app_catalog_slug));
    for (const m of fx.sim.data.appMetrics()) expect(slugs.has(m.slug), `catalog metric ${m.slug}`).toBe(true);
    const fields = new Set(rows.map((r) => r.gateway_field));
    const row = fx.sim.data.gatewayScreenerRows()[0]!;
    const gatewayFields = [
      ...Object.keys(row).filter((k) => !['slug', 'symbol', 'name', 'windows', 'streams'].includes(k)),
      ...WINDOWS.flatMap((w) => [`windows.${w}.rev`, `windows.${w}.mult`]),
      'streams[]',
    ];
    for (const f of gatewayFields) expect(fields.has(f), `gateway screener field ${f}`).toBe(true);
    // Every column a crosswalk row names exists.
    const columns = new Set((await q<{ c: string }>(`select table_schema || '.' || table_name || '.' || column_name as c from information_schema.columns where table_schema in ('app', 'gateway')`)).map((r) => r.c));
    const tables = new Set((await q<{ t: string }>(`select table_schema || '.' || table_name as t from information_schema.tables where table_schema in ('app', 'gateway')`)).map((r) => r.t));
    for (const e of CROSSWALK) {
      for (const where of [e.appColumn, e.gatewayColumn]) {
        if (!where) continue;
        const ref = where.split(' ')[0]!;
        expect(ref.split('.').length === 3 ? columns.has(ref) : tables.has(ref), `${e.concept}: ${where}`).toBe(true);
      }
    }
    // The app's per-window holder FCF is where the crosswalk says.
    const [path] = await q<{ n: number }>(`select count(*)::int as n from app.metric_values where surface = 'screener' and path = 'revenues.30d' and value is not null`);
    expect(path!.n).toBeGreaterThan(0);
  });

  it('data_age: every table, with the data time upstream gave and when tesync last confirmed it', async () => {
    const all = (await q<{ t: string }>(`select table_schema || '.' || table_name as t from information_schema.tables where table_schema in ('app', 'gateway') and table_type = 'BASE TABLE' order by 1`)).map((r) => r.t);
    // Every table but the versions of another (app.metric_history is a table; its versions are not).
    expect(declaredTables(appTables, gatewayTables).map((d) => d.name).sort()).toEqual(all.filter((t) => !(t.endsWith('_history') && all.includes(t.slice(0, -'_history'.length)))));
    const rows = await q<{ table_name: string; resources: number; data_as_of: string | null; last_confirmed_at: string | null; newest_point_at: string | null }>(
      `select table_name, resources, data_as_of::text, last_confirmed_at::text, newest_point_at::text from analytics.data_age`,
    );
    const by = new Map(rows.map((r) => [r.table_name, r]));
    for (const t of ['app.screener_rows', 'app.metric_history', 'gateway.screener_rows', 'gateway.trend_points']) {
      expect(by.get(t)?.resources, t).toBeGreaterThan(0);
      expect(by.get(t)?.last_confirmed_at, t).not.toBeNull();
    }
    expect(new Date(by.get('app.screener_rows')!.data_as_of!).toISOString()).toBe(new Date(fx.sim.data.asOf).toISOString());
    expect(by.get('app.metric_history')!.newest_point_at?.slice(0, 10)).toBe(fx.sim.data.lastDate);
    // Upstream's verdicts, counted: each token's (from its marker), and a screener's rows'.
    const verdicts = await q<{ table_name: string | null; source: string; group: string; freshness: string | null; resources: number }>(
      `select table_name, source, "group", freshness, resources from analytics.data_age order by 1, 2, 3`,
    );
    const verdict = (t: string) => verdicts.find((r) => r.table_name === t)?.freshness;
    expect(verdict('app.metric_history')).toMatch(/^fresh \d+$/);
    expect(verdict('app.screener_rows')).toBe(`fresh ${fx.sim.data.appScreenerRows().length}`);
    expect(verdict('gateway.screener_rows')).toMatch(/^fresh \d+$/);
    expect(verdict('gateway.token_pages')).toBeNull();
    // A group that fills no table has a row of its own.
    expect(verdicts.filter((r) => r.table_name === null)).toEqual([{ table_name: null, source: 'gateway', group: 'contract', freshness: null, resources: 1 }]);
  });

  it('every view over versioned tables has its as-of form', async () => {
    const fns = new Set((await q<{ f: string }>(`select proname as f from pg_proc where pronamespace = 'analytics'::regnamespace`)).map((r) => r.f));
    for (const v of ANALYTICS_VIEWS) expect(fns.has(`${v.name}_as_of`), v.name).toBe(hasAsOf(v));
    expect(ANALYTICS_VIEWS.filter(hasAsOf).length).toBeGreaterThanOrEqual(4);
  });
});
