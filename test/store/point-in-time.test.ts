// Point in time, on Postgres and on the embedded server: across the simulator's epochs (a
// delisted token, revised values, a new day; then the revision epoch: past history revised
// inside and outside the overlap, screener and page values changed, a bundle shrunk, the
// token relisted), every T_as_of returns at each instant exactly what tesync had received by
// then, T equals a fresh sync of the latest data, versions never overlap, and every version
// links to the archived body it was read from.
import { sql } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { VERSIONED } from '../../src/schema/warehouse/history.ts';
import { rulesOf } from '../../src/schema/warehouse/table-rules.ts';
import { freshWarehouse, useSimAndWarehouseOn } from '../helpers/mirror-fixture.ts';
import { BOTH_SERVERS } from '../helpers/servers.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';
import { warehouseDigest } from '../helpers/warehouse-compare.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const testLog = createTestLogger([appKey, gatewayKey]);
const DAY = 86_400_000;
const NAMES = VERSIONED.map((t) => `${getTableConfig(t).schema}.${getTableConfig(t).name}`);

describe.each(BOTH_SERVERS)('point in time on %s', (_label, start) => {
  // Ten days: the revision epoch revises a day outside the resync's overlap only from nine on.
  const fx = useSimAndWarehouseOn(start, { tokens: 6, historyDays: 10, chartsPerToken: 2, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  // tesync's clock, which schedules (never stamps): the first syncs ran ten days ago, so the
  // last one is due its whole history fetch. Known time is the server's.
  let offset = -10 * DAY;
  const clock = () => new Date(Date.now() + offset);


  /** A table's rows (or a function's), each as its JSON text, sorted: equal sets compare equal. */
  const rowsOf = async (from: string) => (await fx.warehouse.query<{ r: string }>(sql.raw(`select to_jsonb(x)::text as r from ${from} x order by 1`))).map((x) => x.r);
  const dump = async () => new Map(await Promise.all(NAMES.map(async (t) => [t, await rowsOf(t)] as const)));
  const sync = async (epoch: number) => {
    fx.sim.setEpoch(epoch);
    const r = await syncOnce(fx.sim, fx.warehouse, testLog.logger, { appKey, gatewayKey }, ['app', 'gateway'], { clock });
    expect(r.status, `sync at epoch ${epoch}`).toBe('succeeded');
    const at = await serverNow();
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { at, tables: await dump() };
  };
  const one = async <T>(q: ReturnType<typeof sql>) => (await fx.warehouse.query<T & Record<string, unknown>>(q))[0];
  const serverNow = async () => (await one<{ t: string }>(sql`select "sync"."server_clock"()::text as t`))!.t;

  it('every T_as_of returns what was received by each instant; T equals a fresh sync of the latest', async () => {
    const k0 = await serverNow();
    const s0 = await sync(0);
    const s1 = await sync(1);
    // The revision epoch, fetched as a resync does: histories from the overlap on.
    const s2 = await sync(2);
    // Ten days later on tesync's clock: each token's app history is due its whole fetch.
    offset = 0;
    const s3 = await sync(2);
    const instants = [s0, s1, s2, s3];

    for (const t of NAMES) {
      expect(await rowsOf(`${t}_as_of('${k0}')`), `${t} before the first sync`).toEqual([]);
      for (const [i, s] of instants.entries()) expect(await rowsOf(`${t}_as_of('${s.at}')`), `${t} as of after sync ${i}`).toEqual(s.tables.get(t));
    }
    const changed = NAMES.filter((t) => JSON.stringify(s0.tables.get(t)) !== JSON.stringify(s3.tables.get(t)));
    expect(changed.length, changed.join(' ')).toBeGreaterThanOrEqual(15);

    // What the simulator served, per instant.
    const e1 = fx.sim.data.epochChanges;
    const e2 = e1.epoch2;
    const rev = e2.revised!;
    const relisted = e2.relistedSlug!;
    const listed = async (schema: string, at: string, slug: string) =>
      (await one<{ listed: boolean }>(sql.raw(`select delisted_at is null as listed from ${schema}.tokens_as_of('${at}') where slug = '${slug}'`)))?.listed;
    for (const schema of ['app', 'gateway']) {
      expect([await listed(schema, s0.at, relisted), await listed(schema, s1.at, relisted), await listed(schema, s2.at, relisted)], `${schema} universe`).toEqual([true, false, true]);
    }
    const emc = async (at: string, date: string) =>
      (await one<{ v: string }>(sql.raw(`select value::text as v from app.metric_history_as_of('${at}') where token_slug = '${rev.slug}' and stream = 'aggregate' and metric = '${rev.appHistory.metric}' and ts = '${date}T00:00:00Z'`)))?.v;
    const [inside, outside] = [rev.appHistory.days.find((d) => d.position === 'insideOverlap')!, rev.appHistory.days.find((d) => d.position === 'outsideOverlap')!];
    // Inside the overlap: revised by the next resync. Outside: only by the whole fetch.
    expect([await emc(s1.at, inside.date), await emc(s2.at, inside.date), await emc(s3.at, inside.date)]).toEqual([inside.before!.toString(), inside.after.toString(), inside.after.toString()]);
    expect([await emc(s1.at, outside.date), await emc(s2.at, outside.date), await emc(s3.at, outside.date)]).toEqual([outside.before!.toString(), outside.before!.toString(), outside.after.toString()]);
    const trend = async (at: string, date: string) =>
      (await fx.warehouse.query<{ v: string }>(sql.raw(`select distinct value::text as v from gateway.trend_points_as_of('${at}') where token_slug = '${rev.slug}' and series_key = '${rev.gatewayTrend.series}' and ts = '${date}T00:00:00Z'`))).map((r) => r.v);
    for (const d of rev.gatewayTrend.days) expect([await trend(s1.at, d.date), await trend(s3.at, d.date)], `trend ${d.date}`).toEqual([[d.before!.toString()], [d.after.toString()]]);
    const m30 = async (at: string) => (await one<{ v: string }>(sql.raw(`select multiple_30d::text as v from app.screener_rows_as_of('${at}') where token_slug = '${rev.slug}'`)))?.v;
    expect([await m30(s1.at), await m30(s2.at)]).toEqual([rev.app.before!.toString(), rev.app.after.toString()]);
    const mult = async (at: string) => (await one<{ v: string }>(sql.raw(`select mult_annualized::text as v from gateway.screener_rows_as_of('${at}') where token_slug = '${rev.slug}'`)))?.v;
    expect([await mult(s1.at), await mult(s2.at)]).toEqual([rev.gateway.before!.toString(), rev.gateway.after.toString()]);
    const drivers = async (at: string) => (await fx.warehouse.query<{ id: string }>(sql.raw(`select driver_id as id from app.value_drivers_as_of('${at}') where token_slug = '${rev.slug}' order by 1`))).map((r) => r.id);
    expect(await drivers(s1.at)).toContain(rev.bundle.removedDriverId);
    expect(await drivers(s2.at)).toEqual([...rev.bundle.driverIds].sort());
    const edges = async (at: string) => Number((await one<{ n: number }>(sql.raw(`select count(*)::int as n from app.value_driver_edges_as_of('${at}') where token_slug = '${rev.slug}' and '${rev.bundle.removedDriverId}' in (from_driver_id, to_driver_id)`)))!.n);
    expect([await edges(s1.at), await edges(s2.at)]).toEqual([rev.bundle.removedEdges.length, 0]);

    // T equals a fresh sync of the same data, but for when and from which body rows were read.
    const fresh = await freshWarehouse({ on: fx.server });
    const r = await syncOnce(fx.sim, fresh.warehouse, testLog.logger, { appKey, gatewayKey }, ['app', 'gateway']);
    expect(r.status).toBe('succeeded');
    const [mine, theirs] = [await warehouseDigest(fx.warehouse), await warehouseDigest(fresh.warehouse)];
    for (const t of NAMES) expect(mine[t], t).toEqual(theirs[t]);
  });

  it('versions of one key never overlap, nor overlap the current row', async () => {
    let versions = 0;
    for (const table of VERSIONED) {
      const { schema, name } = getTableConfig(table);
      const key = rulesOf(table).key.map((c) => `"${c.name}"`);
      const on = key.map((k) => `a.${k} = b.${k}`).join(' and ');
      const r = await one<{ overlaps: number; n: number }>(
        sql.raw(`select (select count(*) from ${schema}.${name}_history a join ${schema}.${name}_history b on ${on} and a.ctid <> b.ctid
                   where a.known_from < b.known_to and b.known_from < a.known_to)
                 + (select count(*) from ${schema}.${name}_history a join ${schema}.${name} b on ${on} where a.known_to > b.fetched_at)
                 + (select count(*) from ${schema}.${name}_history where known_to <= known_from) as overlaps,
                 (select count(*) from ${schema}.${name}_history)::int as n`),
      );
      expect(Number(r!.overlaps), `${schema}.${name}`).toBe(0);
      versions += r!.n;
    }
    // Values, verdicts and rows that left: an asOf or generatedAt moved alone makes none.
    expect(versions).toBeGreaterThan(50);
  });

  it('every version, current or earlier, links to the body it was read from, which holds its value', async () => {
    for (const t of NAMES) {
      for (const from of [t, `${t}_history`]) {
        const r = await one<{ unlinked: number; dangling: number }>(
          sql.raw(`select count(*) filter (where x.raw_response_id is null)::int as unlinked,
                          count(*) filter (where x.raw_response_id is not null and not exists (select 1 from sync.raw_responses r where r.id = x.raw_response_id and r.status = 'ok'))::int as dangling
                   from ${from} x`),
        );
        expect(r, from).toEqual({ unlinked: 0, dangling: 0 });
      }
    }
    // The revised history value's earlier version came from a body that served it.
    const rev = fx.sim.data.epochChanges.epoch2.revised!;
    const inside = rev.appHistory.days.find((d) => d.position === 'insideOverlap')!;
    const version = await one<{ v: string; body: string; path: string }>(
      sql.raw(`select h.value::text as v, r.body::text as body, r.path from app.metric_history_history h join sync.raw_responses r on r.id = h.raw_response_id
               where h.token_slug = '${rev.slug}' and h.stream = 'aggregate' and h.metric = '${rev.appHistory.metric}' and h.ts = '${inside.date}T00:00:00Z' order by h.known_from limit 1`),
    );
    expect(version!.v).toBe(inside.before!.toString());
    expect(version!.path).toContain(`/tokens/${rev.slug}/metrics/history`);
    expect(version!.body).toContain(inside.before!.toString());
  });
});
