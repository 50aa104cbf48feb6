// `sync.archive_days` (src/store/sql/daily-archive.sql): each daily archive's days, kept by
// statement triggers in the transaction that writes the archive, whoever writes it: the
// fill, an UPDATE, a DELETE, an upsert, a TRUNCATE. Its counts always equal the archive's;
// a day's writer is the last transaction that changed it, so a reader in an earlier snapshot
// is told the day changed, and only that day; an archive an earlier release filled is counted
// when the migrations run. What `tesync export` finds the days to write with.
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { DAILY_ARCHIVE_NAMES } from '../../src/schema/warehouse/history.ts';
import { archiveDays } from '../../src/export/pg-read.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const log = createTestLogger([appKey, gatewayKey], 'warn');

describe('sync.archive_days', () => {
  const fx = useSimAndWarehouse({ tokens: 4, historyDays: 5, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
  const q = <T>(text: string) => fx.warehouse.query<T>(sql.raw(text));

  /** The archive's days counted from its rows, and as archive_days keeps them (days with rows). */
  async function both(archive: string) {
    const counted = await q<{ day: string; rows: number }>(`select snapshot_date::text as day, count(*)::int as rows from ${archive} group by 1 order by 1`);
    const kept = await q<{ day: string; rows: number }>(`select day::text as day, rows::int as rows from sync.archive_days where archive = '${archive}' and rows > 0 order by 1`);
    return { counted, kept };
  }
  const writers = async (archive: string) => new Map((await q<{ day: string; writer: string }>(`select day::text as day, writer::text as writer from sync.archive_days where archive = '${archive}'`)).map((r) => [r.day, r.writer]));
  /** As the export reads them: the days written since `since`, a snapshot's text. */
  async function writtenSince(archive: string, since: string): Promise<string[]> {
    const db = postgres(fx.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      return (await archiveDays(db, archive, since)).filter((d) => d.written).map((d) => d.day);
    } finally {
      await db.end({ timeout: 5 });
    }
  }
  const snapshot = async () => (await q<{ s: string }>('select pg_current_snapshot()::text as s'))[0]!.s;

  it('every daily archive has its triggers, and after a sync and its fill the counts are the archive\'s', async () => {
    const run = await fx.sync(log.logger, { appKey, gatewayKey }, ['app', 'gateway'], { only: ['screener', 'snapshot'] });
    expect(run.status).toBe('succeeded');
    for (const archive of DAILY_ARCHIVE_NAMES) {
      const triggers = await q<{ t: string }>(`select tgname as t from pg_trigger where tgrelid = '${archive}'::regclass and not tgisinternal order by 1`);
      expect(triggers.map((t) => t.t), archive).toEqual(['archive_days_delete', 'archive_days_insert', 'archive_days_truncate', 'archive_days_update']);
      const { counted, kept } = await both(archive);
      expect(counted.length, archive).toBeGreaterThan(0);
      expect(kept, archive).toEqual(counted);
    }
  });

  it('an UPDATE, a DELETE and an upsert each mark their day alone, and the counts follow', async () => {
    const archive = 'app.screener_daily';
    const [{ day, slug }] = (await q<{ day: string; slug: string }>(`select min(snapshot_date)::text as day, min(token_slug) as slug from ${archive}`)) as [{ day: string; slug: string }];
    let before = await writers(archive);
    let since = await snapshot();

    await q(`update ${archive} set effective_ratio = coalesce(effective_ratio, 0) + 1 where snapshot_date = '${day}' and token_slug = '${slug}'`);
    let after = await writers(archive);
    expect([...after].filter(([d, w]) => before.get(d) !== w).map(([d]) => d)).toEqual([day]);
    expect(await writtenSince(archive, since)).toEqual([day]);
    expect((await both(archive)).kept).toEqual((await both(archive)).counted);

    // A row removed, then put back by an upsert that also rewrites a row of the day.
    before = after;
    since = await snapshot();
    const [row] = await q<{ payload: string }>(`select payload::text as payload from ${archive} where snapshot_date = '${day}' and token_slug = '${slug}'`);
    await q(`delete from ${archive} where snapshot_date = '${day}' and token_slug = '${slug}'`);
    const { counted, kept } = await both(archive);
    expect(kept).toEqual(counted);
    await q(`insert into ${archive} (snapshot_date, token_slug, payload, fetched_at)
             select snapshot_date, '${slug}', '${row!.payload.replaceAll("'", "''")}'::jsonb, fetched_at from ${archive} where snapshot_date = '${day}' limit 1
             on conflict (snapshot_date, token_slug) do update set status = excluded.status`);
    await q(`insert into ${archive} (snapshot_date, token_slug, payload, fetched_at)
             select snapshot_date, token_slug, payload, fetched_at from ${archive} where snapshot_date = '${day}'
             on conflict (snapshot_date, token_slug) do update set symbol = excluded.symbol`);
    after = await writers(archive);
    expect([...after].filter(([d, w]) => before.get(d) !== w).map(([d]) => d)).toEqual([day]);
    expect((await both(archive)).kept).toEqual((await both(archive)).counted);
    expect(await writtenSince(archive, since)).toEqual([day]);
  });

  it('a reader whose snapshot was taken while a writer of the day was uncommitted is told the day changed', async () => {
    const archive = 'app.token_snapshots_daily';
    const [{ day }] = (await q<{ day: string }>(`select max(snapshot_date)::text as day from ${archive}`)) as [{ day: string }];
    const writer = postgres(fx.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let written!: () => void;
      const wrote = new Promise<void>((r) => (written = r));
      const tx = writer.begin(async (t) => {
        await t.unsafe(`update ${archive} set symbol = symbol where snapshot_date = '${day}'`);
        written();
        await held;
      });
      await wrote;
      // Taken while the writer is in flight: it does not see that write.
      const since = await snapshot();
      release();
      await tx;
      expect(await writtenSince(archive, since)).toEqual([day]);
      // And a snapshot after the commit sees it: nothing is new since then.
      expect(await writtenSince(archive, await snapshot())).toEqual([]);
    } finally {
      await writer.end({ timeout: 5 });
    }
  });

  it('TRUNCATE leaves no day with rows; an archive filled before the triggers is counted by the migrations', async () => {
    const archive = 'gateway.screener_daily';
    const { counted } = await both(archive);
    // As an earlier release left it: rows, and nothing counted.
    await q(`delete from sync.archive_days where archive = '${archive}'`);
    await q(`select sync.track_archive_days('gateway', 'screener_daily', 'snapshot_date')`);
    expect((await both(archive)).kept).toEqual(counted);
    // Counted again, the triggers still in place: nothing doubles.
    await q(`select sync.track_archive_days('gateway', 'screener_daily', 'snapshot_date')`);
    expect((await both(archive)).kept).toEqual(counted);
    const since = await snapshot();
    await q(`truncate ${archive}`);
    expect((await both(archive)).kept).toEqual([]);
    expect((await writtenSince(archive, since)).length).toBe(0);
    const zeroed = await q<{ n: number }>(`select count(*)::int as n from sync.archive_days where archive = '${archive}' and rows = 0`);
    expect(zeroed[0]!.n).toBe(counted.length);
  });
});
