// upsertRows on Postgres (the embedded warehouse is a Postgres server too): what the unnest
// form must keep exactly as the VALUES form did (decimals, text, jsonb with lossless numbers,
// defaults, `keep`, a key sent twice: one row if the same, refused if not), a new key range
// written without ON CONFLICT and upserted when another writer fills it first, rows written in
// key order, and the VALUES form still taking tables it cannot carry (array columns).
import { asc, sql } from 'drizzle-orm';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { metricHistory, tokens } from '../../../src/schema/warehouse/app.ts';
import { gatewayCharts, gatewayTrendPoints } from '../../../src/schema/warehouse/gateway.ts';
import { NotUnderstoodError } from '../../../src/lib/errors.ts';
import { parseJson } from '../../../src/lib/json.ts';
import type { Executor } from '../../../src/store/write/table-shape.ts';
import { prepareUpsert, upsertRows } from '../../../src/store/write/upsert.ts';
import { patience } from '../../helpers/patience.ts';
import { freshWarehouse, useTestWarehouse } from '../../helpers/mirror-fixture.ts';

const t0 = new Date('2026-01-02T03:04:05.678Z');
const meta = { fetchedAt: t0, asOf: null, freshness: null, runId: null };
const HUGE = `-${'9'.repeat(45)}.${'0'.repeat(20)}1`;
const ODD_TEXT = `quote " backslash \\ comma , braces {} tab\tnewline\n NULL null 'single' ✨ 日本`;

describe('upsertRows on Postgres', () => {
  const w = useTestWarehouse();

  it('keeps decimals and text exactly, and a row sent twice once', async () => {
    const row = (metric: string, value: string | null, unit: string | null) => ({ tokenSlug: 'a', stream: 'all', metric, ts: t0, interval: '1d', value, unit, kind: null, ...meta, status: 'ok' });
    const n = await upsertRows(w.db, metricHistory, [row('m1', '0.000000000000000000000000000001', 'y'), row('m2', HUGE, ODD_TEXT), row('m3', null, ''), row('m1', '0.000000000000000000000000000001', 'y'), row('m4', '1.5E+3', null), row('m5', '-0', 'NULL'), row('m6', '2', 'null')], {
      batchSize: 2,
    });
    expect(n).toBe(6);
    const got = await w.query<{ metric: string; v: string | null; unit: string | null; ts: string }>(
      sql`select metric, value::text as v, unit, to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') as ts from app.metric_history order by metric`,
    );
    expect(got).toEqual([
      { metric: 'm1', v: '0.000000000000000000000000000001', unit: 'y', ts: '2026-01-02T03:04:05.678' },
      { metric: 'm2', v: HUGE, unit: ODD_TEXT, ts: '2026-01-02T03:04:05.678' },
      { metric: 'm3', v: null, unit: '', ts: '2026-01-02T03:04:05.678' },
      { metric: 'm4', v: '1500', unit: null, ts: '2026-01-02T03:04:05.678' },
      { metric: 'm5', v: '0', unit: 'NULL', ts: '2026-01-02T03:04:05.678' },
      { metric: 'm6', v: '2', unit: 'null', ts: '2026-01-02T03:04:05.678' },
    ]);
  });

  it('writes one row for a key sent thrice with the same values, and refuses a key with two values', async () => {
    const ts = new Date(t0.getTime() + 3_600_000);
    // Equal instants in separate Date objects are one key.
    const row = (value: string, payloadless = true) => ({ tokenSlug: 'same', stream: 'all', metric: 'm', ts: new Date(ts.getTime()), interval: '1d', value, unit: payloadless ? null : 'x', kind: null, ...meta, status: 'ok' });
    expect(await upsertRows(w.db, metricHistory, [row('3'), row('3'), row('3')])).toBe(1);
    const stored = () => w.query<{ v: string }>(sql`select value::text as v from app.metric_history where token_slug = 'same'`);
    expect(await stored()).toEqual([{ v: '3' }]);
    // Which of two values is true cannot be told: nothing of the batch is written.
    for (const rows of [[row('4'), row('5')], [row('4'), row('4', false)]]) {
      await expect(upsertRows(w.db, metricHistory, rows)).rejects.toThrow(NotUnderstoodError);
    }
    await expect(upsertRows(w.db, metricHistory, [row('4'), row('5')])).rejects.toThrow(/metric_history.*two rows for the key .*with different values/);
    // To the lifecycle the preparation returns the refusal as a value.
    expect(prepareUpsert(metricHistory, [row('4'), row('5')])).toEqual({ refused: expect.stringMatching(/metric_history.*two rows for the key .*with different values/) });
    expect(await stored()).toEqual([{ v: '3' }]);
  });

  it('writes jsonb with every digit, null jsonb as SQL null, and updates on conflict', async () => {
    const payload = parseJson(`{"v": 123456789012345678901234567890.123456789, "s": "a \\"b\\" \\\\ c", "n": null}`);
    const point = (seriesKey: string, p: unknown, value: string | null) => ({ tokenSlug: 'a', period: '30d', seriesKey, ts: t0, value, payload: p, ...meta, status: p === null ? 'ok' : 'invalid' });
    await upsertRows(w.db, gatewayTrendPoints, [point('s1', payload, null), point('s2', null, '2')]);
    await upsertRows(w.db, gatewayTrendPoints, [point('s2', null, '3')]);
    const got = await w.query<{ series_key: string; value: string | null; p: string | null; isnull: boolean }>(
      sql`select series_key, value::text as value, payload::text as p, payload is null as isnull from gateway.trend_points order by series_key`,
    );
    expect(got[0]).toMatchObject({ series_key: 's1', value: null, isnull: false });
    expect(got[0]!.p).toContain('123456789012345678901234567890.123456789');
    expect(JSON.parse(got[0]!.p!).s).toBe('a "b" \\ c');
    expect(got[1]).toMatchObject({ series_key: 's2', value: '3', isnull: true });
  });

  it('keeps `keep` columns, applies defaults to columns no row sets, and booleans', async () => {
    const later = new Date(t0.getTime() + 86_400_000);
    const token = (at: Date, displayName: string) => ({ slug: 'tok', displayName, firstSeenAt: at, lastSeenAt: at, coverageCharts: true, payload: { a: 1 }, fetchedAt: at });
    await upsertRows(w.db, tokens, [token(t0, 'first')]);
    const [first] = await w.db.select().from(tokens);
    await upsertRows(w.db, tokens, [token(later, 'second')]);
    const [row] = await w.db.select().from(tokens);
    expect(row).toMatchObject({ displayName: 'second', firstSeenAt: first!.firstSeenAt, coverageCharts: true, coverageSnapshot: false, status: 'ok', delistedAt: null, payload: { a: 1 } });
    // Known time is the server's: the times a caller sent are not what is stored.
    expect(row!.lastSeenAt.getTime()).toBeGreaterThan(first!.lastSeenAt.getTime());
    expect(row!.lastSeenAt.getTime()).not.toBe(later.getTime());
    expect(first!.fetchedAt.getTime()).not.toBe(t0.getTime());
  });

  it('sends a value shared by the whole batch once, typed as its column', async () => {
    // Every column but the key the same on each row: booleans, jsonb and timestamps as scalars.
    const token = (slug: string) => ({ slug, displayName: null, firstSeenAt: t0, lastSeenAt: t0, coverageCharts: true, coverageTrend: false, payload: { same: [1, 'x'] }, fetchedAt: t0 });
    await upsertRows(w.db, tokens, [token('s1'), token('s2'), token('s3')]);
    const rows = await w.query<{ slug: string; charts: boolean; trend: boolean; p: string; kind: string; at: boolean }>(
      sql`select slug, coverage_charts as charts, coverage_trend as trend, payload::text as p, jsonb_typeof(payload) as kind, first_seen_at = fetched_at as at from app.tokens where slug like 's%' order by slug`,
    );
    expect(rows).toEqual(['s1', 's2', 's3'].map((slug) => ({ slug, charts: true, trend: false, p: '{"same": [1, "x"]}', kind: 'object', at: true })));
  });

  it('writes a first range of many rows in full, and updates it on the next write', async () => {
    // 800 rows of one new token: a range no stored row shares, written without ON CONFLICT.
    const day = (d: number) => new Date(Date.UTC(2024, 0, 1) + d * 86_400_000);
    const rows = (value: (d: number) => string, unit: string) =>
      Array.from({ length: 800 }, (_, d) => ({ tokenSlug: 'bulk', stream: 'all', metric: `m${d % 2}`, ts: day(d >> 1), interval: '1d', value: value(d), unit, kind: null, ...meta, status: 'ok' }));
    const first = rows((d) => `${d}.${'1'.repeat(30)}`, ODD_TEXT);
    // A row sent twice inside the batch is written once on this path too.
    first.push({ ...first[0]! });
    expect(await upsertRows(w.db, metricHistory, first, { batchSize: 300 })).toBe(800);
    const stored = async () =>
      w.query<{ n: string; m0: string; m1: string; units: string }>(
        sql`select count(*)::text as n, max(value::text) filter (where metric = 'm0' and ts = ${day(0).toISOString()}::timestamptz) as m0, max(value::text) filter (where metric = 'm1' and ts = ${day(0).toISOString()}::timestamptz) as m1, count(distinct unit)::text as units from app.metric_history where token_slug = 'bulk'`,
      );
    expect(await stored()).toEqual([{ n: '800', m0: `0.${'1'.repeat(30)}`, m1: `1.${'1'.repeat(30)}`, units: '1' }]);
    const [unit] = await w.query<{ unit: string }>(sql`select distinct unit from app.metric_history where token_slug = 'bulk'`);
    expect(unit!.unit).toBe(ODD_TEXT);
    // The range is stored now: the same keys again update in place.
    expect(await upsertRows(w.db, metricHistory, rows((d) => `-${d}`, 'u2'))).toBe(800);
    expect(await stored()).toEqual([{ n: '800', m0: '0', m1: '-1', units: '1' }]);
  });

  it('writes rows in the order of their key, whatever order they come in: the index pages end full', async () => {
    // A history as upstream sends it: by day, then a value per metric. The key is metric, then day.
    const rows = [];
    for (let d = 0; d < 500; d++) for (let m = 0; m < 40; m++) rows.push({ tokenSlug: 'ordered', stream: m % 2 ? 'fees' : 'all', metric: `metric-${(m * 7) % 40}`, ts: new Date(Date.UTC(2022, 0, 1) + d * 86_400_000), interval: '1d', value: `${d}.${m}`, unit: null, kind: null, ...meta, status: 'ok' });
    expect(await upsertRows(w.db, metricHistory, rows)).toBe(20_000);
    const [pk] = await w.query<{ name: string }>(sql`select indexrelid::regclass::text as name from pg_index where indrelid = 'app.metric_history'::regclass and indisprimary`);
    const size = async () => Number((await w.query<{ n: string }>(sql`select pg_relation_size(${pk!.name}::regclass)::text as n`))[0]!.n);
    const written = await size();
    await w.query(sql.raw(`reindex index ${pk!.name}`));
    // Inserted one place after another, the pages split 90/10 as a fresh build fills them; inserted
    // at 40 places at once, they split in halves and the index was 1.64 times a rebuilt one.
    expect(written / (await size())).toBeLessThan(1.2);
    const [n] = await w.query<{ n: string }>(sql`select count(*)::text as n from app.metric_history where token_slug = 'ordered'`);
    expect(n!.n).toBe('20000');
  });

  it('a range another writer fills while this one probes is upserted, and the rest of the transaction kept', async () => {
    const slug = 'late';
    const rows = Array.from({ length: 600 }, (_, d) => ({ tokenSlug: slug, stream: 'all', metric: 'm', ts: new Date(Date.UTC(2024, 0, 1) + d * 86_400_000), interval: '1d', value: `${d}.5`, unit: null, kind: null, ...meta, status: 'ok' }));
    // Prepared before the transaction, as the lifecycle does; the key range is probed in it.
    const prepared = prepareUpsert(metricHistory, rows, { batchSize: 200 });
    if ('refused' in prepared) throw new Error(prepared.refused);
    expect(prepared.rows).toBe(600);
    // Another writer holds one key of the range, uncommitted: the probe does not see it, and
    // the plain INSERT waits on it until that writer commits.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let wrote!: () => void;
    const written450 = new Promise<void>((r) => (wrote = r));
    const other = w.db.transaction(async (tx) => {
      await upsertRows(tx as unknown as Executor, metricHistory, [{ ...rows[450]!, value: '-1' }]);
      wrote();
      await held;
    });
    await written450;
    const ours = w.db.transaction(async (tx) => {
      await upsertRows(tx as unknown as Executor, tokens, [{ slug: `${slug}-tok`, displayName: 'L', firstSeenAt: t0, lastSeenAt: t0, payload: {}, fetchedAt: t0 }]);
      return prepared.run(tx as unknown as Executor);
    });
    // Ours has probed and waits on the other's key: then the other commits.
    await expect
      .poll(async () => (await w.query<{ n: string }>(sql`select count(*)::text as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`))[0]!.n, { timeout: patience(10_000) })
      .toBe('1');
    release();
    await other;
    expect(await ours).toBe(600);
    const got = await w.query<{ n: string; v450: string; tok: string }>(
      sql`select count(*)::text as n, max(value::text) filter (where ts = ${rows[450]!.ts.toISOString()}::timestamptz) as v450, (select count(*)::text from app.tokens where slug = ${`${slug}-tok`}) as tok from app.metric_history where token_slug = ${slug}`,
    );
    expect(got).toEqual([{ n: '600', v450: '450.5', tok: '1' }]);
  });

  it('takes tables with array columns through the VALUES form', async () => {
    const chart = (chartKey: string, timeframes: string[] | null) => ({ tokenSlug: 'a', chartKey, title: 'T', timeframes, dataPath: null, payload: {}, ...meta, status: 'ok' });
    await upsertRows(w.db, gatewayCharts, [chart('c1', ['30d', 'all']), chart('c2', null)]);
    const rows = await w.db.select({ key: gatewayCharts.chartKey, tf: gatewayCharts.timeframes }).from(gatewayCharts).orderBy(asc(gatewayCharts.chartKey));
    expect(rows).toEqual([
      { key: 'c1', tf: ['30d', 'all'] },
      { key: 'c2', tf: null },
    ]);
  });

  it('a range another writer fills at the same moment is upserted, not lost or refused', async () => {
    const tw = await freshWarehouse();
    const other = postgres(tw.databaseUrl, { max: 1, onnotice: () => {} });
    const watcher = postgres(tw.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const rows = Array.from({ length: 600 }, (_, d) => ({ tokenSlug: 'race', stream: 'all', metric: 'm', ts: new Date(Date.UTC(2024, 0, 1) + d * 86_400_000), interval: '1d', value: String(d), unit: null, kind: null, ...meta, status: 'ok' }));
      const last = rows[599]!.ts.toISOString();
      // The other writer holds an uncommitted row of the range: our probe cannot see it, and
      // our plain INSERT waits on its key until it commits, then fails on it.
      let commit!: () => void;
      let inserted!: () => void;
      const committed = new Promise<void>((r) => (commit = r));
      const held = new Promise<void>((r) => (inserted = r));
      const holding = other.begin(async (tx) => {
        await tx`insert into app.metric_history (token_slug, stream, metric, ts, value, fetched_at, status) values ('race', 'all', 'm', ${last}::timestamptz, -1, now(), 'ok')`;
        inserted();
        await committed;
      });
      await held;
      const ours = upsertRows(tw.warehouse.db, metricHistory, rows);
      // Wait until ours is blocked on the held key, then let the other writer commit.
      let blocked = false;
      for (const deadline = Date.now() + patience(5_000); !blocked && Date.now() < deadline; ) {
        const [w] = await watcher<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where datname = ${tw.databaseUrl.split('/').pop()!} and wait_event_type = 'Lock' and query like 'insert into "app"."metric_history"%'`;
        blocked = (w?.n ?? 0) > 0;
        if (!blocked) await new Promise((r) => setTimeout(r, 50));
      }
      expect(blocked).toBe(true);
      commit();
      await holding;
      expect(await ours).toBe(600);
      const got = await tw.warehouse.query<{ n: string; last: string }>(sql`select count(*)::text as n, max(value::text) filter (where ts = ${last}::timestamptz) as last from app.metric_history where token_slug = 'race'`);
      expect(got).toEqual([{ n: '600', last: '599' }]);
    } finally {
      await other.end();
      await watcher.end();
    }
  });
});

