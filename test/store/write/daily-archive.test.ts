// The daily archives hold a row for every listed token for every UTC day from the first sync
// on, equal to what was known at the end of that day: days without a sync included, filled
// from the versions when a run finishes; rows archived by an earlier release stay. A write
// that commits after the day's fill ran is archived on its day, the archives are the same
// under any TimeZone, and every connection tesync opens is in UTC: on Postgres and on the
// embedded server.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { getTableConfig } from 'drizzle-orm/pg-core';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { DAILY_ARCHIVES } from '../../../src/schema/warehouse/history.ts';
import { fillDailyArchives } from '../../../src/store/write/daily-archive.ts';
import { openWarehouse } from '../../../src/store/connection.ts';
import { rulesOf } from '../../../src/schema/warehouse/table-rules.ts';
import { freshDatabase, freshWarehouse, useSimAndWarehouse, useSimAndWarehouseOn } from '../../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger, withServerClockOffset } from '../../helpers/services.ts';
import { syncOnce } from '../../helpers/sync.ts';
import { BOTH_SERVERS } from '../../helpers/servers.ts';
import type { SimOptions } from '../../../sim/index.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const testLog = createTestLogger([appKey, gatewayKey]);
const DAY = 86_400_000;
const name = (t: Parameters<typeof getTableConfig>[0]) => `${getTableConfig(t).schema}.${getTableConfig(t).name}`;
const utcDay = (d: Date) => d.toISOString().slice(0, 10);
const SIM: SimOptions = { tokens: 6, historyDays: 10, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] };
/**
 * The groups whose rows the archives keep (the screeners, the app's token snapshots): a walk of
 * these and the planners fills every archive; the histories and charts would only add work.
 */
const ARCHIVED = ['screener', 'snapshot'];
const serverDay = async (w: { query<T>(s: ReturnType<typeof sql>): Promise<T[]> }) => (await w.query<{ d: string }>(sql`select ("sync"."server_clock"() at time zone 'UTC')::date::text as d`))[0]!.d;

// The late commit, the TimeZone and the connections' UTC on both servers; the rest on Postgres.
describe('daily archives', () => {
  const fx = useSimAndWarehouse(SIM);

  /** Each archive's source rows of listed tokens, as JSON text by token, without the day. */
  const listedRows = async () => {
    const out = new Map<string, Map<string, string>>();
    for (const a of DAILY_ARCHIVES) {
      const [tokenKey] = rulesOf(a.source).key.map((c) => c.name);
      const rows = await fx.warehouse.query<{ k: string; r: string }>(
        sql.raw(`select s.${tokenKey} as k, to_jsonb(s)::text as r from ${name(a.source)} s join ${name(a.universe)} u on u.slug = s.${tokenKey} and u.delisted_at is null`),
      );
      out.set(name(a.archive), new Map(rows.map((r) => [r.k, r.r])));
    }
    return out;
  };
  const archivedDay = async (archive: string, day: string) => {
    const rows = await fx.warehouse.query<{ k: string; r: string }>(sql.raw(`select token_slug as k, (to_jsonb(a) - 'snapshot_date')::text as r from ${archive} a where snapshot_date = '${day}'`));
    return new Map(rows.map((r) => [r.k, r.r]));
  };

  it('has a row for every listed token on every day between two syncs three days apart, as known at each day end', async () => {
    const secondAt = Date.now();
    const firstAt = secondAt - 3 * DAY;
    // Two syncs three days apart: the first on a server clock three days behind.
    const past = await openWarehouse({ databaseUrl: withServerClockOffset(fx.databaseUrl, '-3 days'), dataDir: '' });
    const first = await syncOnce(fx.sim, past, testLog.logger, { appKey, gatewayKey }, ['app', 'gateway'], { clock: () => new Date(Date.now() - 3 * DAY), only: ARCHIVED }).finally(() => past.close());
    expect(first.status).toBe('succeeded');
    const known1 = await listedRows();
    fx.sim.setEpoch(1);
    const second = await fx.sync(testLog.logger, { appKey, gatewayKey }, ['app', 'gateway'], { only: ARCHIVED });
    expect(second.status).toBe('succeeded');
    const known2 = await listedRows();

    const days = [0, 1, 2, 3].map((i) => utcDay(new Date(firstAt + i * DAY)));
    expect(days[3]).toBe(utcDay(new Date(secondAt)));
    for (const a of DAILY_ARCHIVES) {
      const archive = name(a.archive);
      expect(known1.get(archive)!.size, archive).toBeGreaterThan(3);
      // The first three days end before the second sync: what the first one received.
      for (const day of days.slice(0, 3)) expect(await archivedDay(archive, day), `${archive} ${day}`).toEqual(known1.get(archive));
      expect(await archivedDay(archive, days[3]!), `${archive} ${days[3]}`).toEqual(known2.get(archive));
      // Nothing before the first sync's day.
      const [early] = await fx.warehouse.query<{ n: number }>(sql.raw(`select count(*)::int as n from ${archive} where snapshot_date < '${days[0]}'`));
      expect(early!.n).toBe(0);
    }
    // The epoch delisted one token: archived on the days it was listed, not after.
    const delisted = fx.sim.data.epochChanges.delistedSlug!;
    expect((await archivedDay('app.screener_daily', days[2]!)).has(delisted)).toBe(true);
    expect((await archivedDay('app.screener_daily', days[3]!)).has(delisted)).toBe(false);
    // A revised value reaches the day it was received on, and no earlier day.
    const revised = fx.sim.data.epochChanges.revised!;
    const emc = async (day: string) => (await fx.warehouse.query<{ v: string }>(sql`select effective_market_cap::text as v from app.screener_daily where snapshot_date = ${day} and token_slug = ${revised.slug}`))[0]?.v;
    expect(await emc(days[2]!)).not.toBe(await emc(days[3]!));

    // Filling again changes nothing: no row inserted, rewritten or removed. (Not by
    // pg_stat_xact_user_tables: a pooled backend's counts of earlier, unflushed transactions
    // show there too.)
    await fx.warehouse.db.transaction(async (tx) => {
      const archives = DAILY_ARCHIVES.map((a) => name(a.archive));
      const contents = async () => Promise.all(archives.map(async (t) => (await tx.execute(sql.raw(`select count(*)::int as n, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as d from ${t} x`))) as unknown as unknown[]));
      const before = await contents();
      await fillDailyArchives(tx as unknown as typeof fx.warehouse.db);
      const mine = await Promise.all(archives.map(async (t) => [t, ((await tx.execute(sql.raw(`select count(*)::int as n from ${t} where xmin::text = (txid_current() % 4294967296)::text`))) as unknown as { n: number }[])[0]!.n] as const));
      expect(mine.filter(([, n]) => n > 0), 'rows a second fill wrote').toEqual([]);
      expect(await contents(), 'rows a second fill removed').toEqual(before);
    });
  });

  it('keeps the rows a release before the point-in-time history archived, and adds the days after', async () => {
    // Empty: migrated below as the release before point in time left one.
    const db = await freshDatabase();
    const folder = mkdtempSync(path.join(tmpdir(), 'tesync-old-release-'));
    try {
      // The release before point in time: the migrations up to 0003.
      cpSync(new URL('../../../drizzle/', import.meta.url), folder, { recursive: true });
      const journalFile = path.join(folder, 'meta', '_journal.json');
      const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { idx: number }[] };
      writeFileSync(journalFile, JSON.stringify({ ...journal, entries: journal.entries.filter((e) => e.idx <= 3) }));
      const client = postgres(db.databaseUrl, { max: 1, onnotice: () => {} });
      await migrate(drizzle(client), { migrationsFolder: folder });
      const at = '2026-01-02T10:00:00Z';
      await client.unsafe(`insert into app.screener_daily (snapshot_date, token_slug, multiple_30d, payload, fetched_at) values ('2026-01-01', 'aurora', 12.345678901234567890, '{}', '${at}'), ('2026-01-02', 'aurora', 13.5, '{}', '${at}')`);
      await client.unsafe(`insert into app.token_snapshots_daily (snapshot_date, token_slug, payload, fetched_at) values ('2026-01-01', 'aurora', '{}', '${at}')`);
      await client.unsafe(`insert into gateway.screener_daily (snapshot_date, token_slug, eff_mcap, payload, fetched_at) values ('2026-01-01', 'aurora', 1.50, '{}', '${at}')`);
      await client.end();

      const w = await openWarehouse({ databaseUrl: db.databaseUrl, dataDir: '' });
      try {
        await w.migrate();
        fx.sim.setEpoch(0);
        const r = await syncOnce(fx.sim, w, testLog.logger, { appKey, gatewayKey }, ['app', 'gateway'], { only: ARCHIVED });
        expect(r.status).toBe('succeeded');
        const old = await w.query<{ t: string }>(
          sql`select 'app.screener_daily ' || snapshot_date || ' ' || multiple_30d::text as t from app.screener_daily where snapshot_date < '2026-02-01'
              union all select 'app.token_snapshots_daily ' || snapshot_date from app.token_snapshots_daily where snapshot_date < '2026-02-01'
              union all select 'gateway.screener_daily ' || snapshot_date || ' ' || eff_mcap::text from gateway.screener_daily where snapshot_date < '2026-02-01' order by 1`,
        );
        expect(old.map((o) => o.t)).toEqual(['app.screener_daily 2026-01-01 12.345678901234567890', 'app.screener_daily 2026-01-02 13.5', 'app.token_snapshots_daily 2026-01-01', 'gateway.screener_daily 2026-01-01 1.50']);
        const [today] = await w.query<{ n: number }>(sql`select count(*)::int as n from app.screener_daily where snapshot_date = (now() at time zone 'UTC')::date`);
        expect(today!.n).toBe(6);
      } finally {
        await w.close();
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe.each(BOTH_SERVERS)('daily archives on %s', (_label, start) => {
  const fx = useSimAndWarehouseOn(start, SIM);

  /** A server-clock offset that makes the server read `target` now. */
  const clockAt = (target: Date) => `${target.getTime() - Date.now()} milliseconds`;
  const archives = async (w: Awaited<ReturnType<typeof openWarehouse>>) => {
    const out: Record<string, string[]> = {};
    for (const a of DAILY_ARCHIVES) out[name(a.archive)] = (await w.query<{ r: string }>(sql.raw(`select to_jsonb(x)::text as r from ${name(a.archive)} x order by 1`))).map((x) => x.r);
    return out;
  };

  it('archives a write that commits after midnight, known before it, on its day', async () => {
    const { warehouse: today, databaseUrl } = await freshWarehouse({ on: fx.server });
    fx.sim.setEpoch(0);
    expect((await syncOnce(fx.sim, today, testLog.logger, { appKey, gatewayKey }, ['app', 'gateway'], { only: ARCHIVED })).status).toBe('succeeded');
    const tomorrow = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1));
    const midnight = new Date(tomorrow.getTime() + DAY);
    const writer = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    let w: Awaited<ReturnType<typeof openWarehouse>> | undefined;
    try {
      // A write known before midnight that has not committed when the day's fill starts: its
      // clock is set to read tomorrow, 23:59:59 UTC, in the statement that takes its known time,
      // so that no slowness of the machine's moves the known time past midnight.
      const tx = await writer.reserve();
      await tx`begin`;
      const [row] = (await tx`select token_slug as slug from app.screener_rows order by 1 limit 1`) as unknown as [{ slug: string }];
      const [{ offset, known }] = (await tx`
        with o as (select set_config('tesync.clock_offset', ((${midnight.toISOString()}::timestamptz - interval '1 second') - clock_timestamp())::text, true) as offset)
        select o.offset, "sync"."begin_write"(null)::text as known from o`) as unknown as [{ offset: string; known: string }];
      await tx`update app.screener_rows set effective_market_cap = 424242.000001 where token_slug = ${row.slug}`;
      // The fill on the same clock, once that clock has passed midnight; the write commits once
      // the fill waits for it at the write barrier.
      w = await openWarehouse({ databaseUrl: withServerClockOffset(databaseUrl, offset), dataDir: '' });
      while ((await serverDay(w)) === utcDay(tomorrow)) await new Promise((r) => setTimeout(r, 100));
      const fill = fillDailyArchives(w.db);
      const fillWaits = async () =>
        (await w!.query<{ n: number }>(sql`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())`))[0]!.n > 0;
      while (!(await fillWaits())) await new Promise((r) => setTimeout(r, 20));
      await tx`commit`;
      tx.release();
      await fill;
      expect(known.slice(0, 10)).toBe(utcDay(tomorrow));
      const [archived] = await w.query<{ v: string }>(sql`select effective_market_cap::text as v from app.screener_daily where snapshot_date = ${utcDay(tomorrow)} and token_slug = ${row.slug}`);
      expect(archived!.v).toBe('424242.000001');
      // And the day equals the as-of view at its end.
      const end = new Date(midnight.getTime() - 1).toISOString();
      const asOf = await w.query<{ r: string }>(sql.raw(`select to_jsonb(s)::text as r from app.screener_rows_as_of('${end}') s join app.tokens_as_of('${end}') u on u.slug = s.token_slug and u.delisted_at is null order by 1`));
      const day = await w.query<{ r: string }>(sql.raw(`select (to_jsonb(a) - 'snapshot_date')::text as r from app.screener_daily a where snapshot_date = '${utcDay(tomorrow)}' order by 1`));
      expect(day.map((d) => d.r)).toEqual(asOf.map((d) => d.r));
    } finally {
      await writer.end();
      await w?.close();
    }
  });

  it('fills the same archives under TimeZone America/Santiago as under UTC, across its DST change at midnight', async () => {
    const db = await freshDatabase({ migrated: true, on: fx.server });
    let santiago: postgres.Sql | undefined;
    try {
      // Two syncs on either side of 2026-09-06, when Santiago's clocks skip from 00:00 to 01:00.
      for (const [epoch, at] of [
        [0, '2026-09-03T12:00:00Z'],
        [1, '2026-09-09T12:00:00Z'],
      ] as const) {
        const w = await openWarehouse({ databaseUrl: withServerClockOffset(db.databaseUrl, clockAt(new Date(at))), dataDir: '' });
        try {
          await w.migrate();
          fx.sim.setEpoch(epoch);
          expect((await syncOnce(fx.sim, w, testLog.logger, { appKey, gatewayKey }, ['app', 'gateway'], { only: ARCHIVED })).status).toBe('succeeded');
        } finally {
          await w.close();
        }
      }
      const w = await openWarehouse({ databaseUrl: db.databaseUrl, dataDir: '' });
      try {
        const utc = await archives(w);
        const days = await w.query<{ d: string }>(sql`select distinct snapshot_date::text as d from app.screener_daily order by 1`);
        expect(days[0]!.d).toBe('2026-09-03');
        // Every day from the first sync through the last, none dropped or doubled.
        expect(days.map((d) => d.d)).toEqual(['03', '04', '05', '06', '07', '08', '09'].map((d) => `2026-09-${d}`));
        // The same fill on a Santiago session, from nothing, on the same server day.
        santiago = postgres(withServerClockOffset(db.databaseUrl, clockAt(new Date('2026-09-09T13:00:00Z'))), { max: 1, onnotice: () => {}, connection: { TimeZone: 'America/Santiago' } });
        for (const a of DAILY_ARCHIVES) await santiago.unsafe(`delete from ${name(a.archive)}`);
        const [tz] = (await santiago`show timezone`) as unknown as [{ TimeZone: string }];
        expect(tz.TimeZone).toBe('America/Santiago');
        await fillDailyArchives(drizzle(santiago) as unknown as typeof w.db);
        expect(await archives(w)).toEqual(utc);
      } finally {
        await w.close();
      }
    } finally {
      await santiago?.end();
    }
  });

  it('opens every connection in UTC on a database whose TimeZone is America/Santiago', async () => {
    const db = await freshDatabase({ migrated: true, on: fx.server });
    const admin = postgres(db.databaseUrl, { max: 1, onnotice: () => {} });
    let w: Awaited<ReturnType<typeof openWarehouse>> | undefined;
    let session: postgres.Sql | undefined;
    try {
      await admin.unsafe(`alter database "${db.name}" set timezone = 'America/Santiago'`);
      // The setting took: a connection of no opinion gets it.
      const plain = postgres(db.databaseUrl, { max: 1, onnotice: () => {} });
      const [p] = (await plain`show timezone`.finally(() => plain.end())) as unknown as [{ TimeZone: string }];
      expect(p.TimeZone).toBe('America/Santiago');

      w = await openWarehouse({ databaseUrl: db.databaseUrl, dataDir: '', maxConnections: 3 });
      // Every connection of the pool (three at once, each held: each query waits on a lock the
      // admin connection holds until all three wait), and a session of its own.
      const locker = await admin.reserve();
      await locker`begin`;
      await locker`lock table sync.runs in access exclusive mode`;
      const asked = Promise.all(
        [1, 2, 3].map(() => w!.query<{ pid: number; tz: string; t: string }>(sql`select pg_backend_pid() as pid, current_setting('TimeZone') as tz, timestamptz '2026-09-06 03:30:00+00'::text as t, (select count(*) from sync.runs) as runs`)),
      );
      const waiting = async () => (await locker<{ n: number }[]>`select count(*)::int as n from pg_locks where relation = 'sync.runs'::regclass and not granted`)[0]!.n;
      while ((await waiting()) < 3) await new Promise((r) => setTimeout(r, 20));
      await locker`commit`;
      locker.release();
      const pool = await asked;
      expect(new Set(pool.map((r) => r[0]!.pid)).size).toBe(3);
      for (const [r] of pool) expect({ tz: r!.tz, t: r!.t }).toEqual({ tz: 'UTC', t: '2026-09-06 03:30:00+00' });
      session = w.session({ name: 'tesync-timezone-test' });
      const [st] = (await session`show timezone`) as unknown as [{ TimeZone: string }];
      expect(st.TimeZone).toBe('UTC');
    } finally {
      await session?.end();
      await w?.close();
      await admin.end();
    }
  });
});
