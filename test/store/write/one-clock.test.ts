// One clock for every writer (contract: time and history). Writers whose own clocks differ
// (2 h behind, right, 30 min behind: injected into the sync, and real `tesync sync` processes
// under faketime; two workers on one queue an hour apart) store a past in which every T_as_of at every instant equals what had
// arrived by then, nothing is visible before its run began, no version is lost and none
// overlaps; the database refuses an overlapping version; the newest response wins, not the
// last commit: an older writer committing after a newer one on one row, a later-known removal
// beside an earlier-known insert of one key, an older removal of a row rewritten since, and
// any backdated insert each place the older write in the history where its known time puts
// it, the newer row staying (a warehouse an earlier release left overlapping is mended when
// migrated); the ordinary write still starts at its transaction's known time. On Postgres and on the embedded server; the real
// processes on Postgres alone (what they vary is their own clock, not the server's: the
// injected clocks show the same on both servers).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { getTableConfig } from 'drizzle-orm/pg-core';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { metricHistory, metrics } from '../../../src/schema/warehouse/app.ts';
import { VERSIONED } from '../../../src/schema/warehouse/history.ts';
import { openWarehouse, rowsOf as resultRows, type Warehouse } from '../../../src/store/connection.ts';
import { beginWrite } from '../../../src/store/write/known-time.ts';
import type { Executor } from '../../../src/store/write/table-shape.ts';
import { upsertRows } from '../../../src/store/write/upsert.ts';
import { runCli } from '../../helpers/cli.ts';
import { patience } from '../../helpers/patience.ts';
import { freshDatabase, freshWarehouse, useSimulator, useWarehouseServer } from '../../helpers/mirror-fixture.ts';
import { BOTH_SERVERS } from '../../helpers/servers.ts';
import { canaryKey, createTestLogger, redisServerUrl, uniqueName } from '../../helpers/services.ts';
import { deleteRedisKeys, killAll, SCHEDULES_OFF, startWorker } from '../../helpers/workers.ts';
import { syncOnce } from '../../helpers/sync.ts';
import { expectNoOverlap } from '../../helpers/versions.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const testLog = createTestLogger([appKey, gatewayKey]);
const HOUR = 3_600_000;
const NAMES = VERSIONED.map((t) => `${getTableConfig(t).schema}.${getTableConfig(t).name}`);

/**
 * What keeps faketime from running a process on a skewed clock here (`.ci/run` installs it), or
 * undefined: the time the process read, two hours on, falls between our readings before and
 * after it ran.
 */
function faketimeProblem(): string | undefined {
  const before = Date.now();
  const r = spawnSync('faketime', ['-f', '-2h', process.execPath, '-e', 'process.stdout.write(String(Date.now()))'], { encoding: 'utf8' });
  const after = Date.now();
  if (r.error || r.status !== 0) return `faketime -f -2h node: ${r.error?.message ?? `exit ${r.status ?? r.signal}`} ${r.stderr ?? ''}`.trim();
  const read = Number(r.stdout) + 2 * HOUR;
  return before <= read && read <= after ? undefined : `the process read ${JSON.stringify(r.stdout)}, not two hours before a time between ${before} and ${after}`;
}

// One simulator for the file: each test sets the epoch it serves.
const fx = useSimulator({ tokens: 4, historyDays: 10, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });

/** Each table's rows (or a function's), as JSON text, sorted. */
const rowsOf = async (w: Warehouse, from: string) => (await w.query<{ r: string }>(sql.raw(`select to_jsonb(x)::text as r from ${from} x order by 1`))).map((x) => x.r);
const dump = async (w: Warehouse) => new Map(await Promise.all(NAMES.map(async (t) => [t, await rowsOf(w, t)] as const)));
const serverNow = async (w: Warehouse) => (await w.query<{ t: string }>(sql`select "sync"."server_clock"()::text as t`))[0]!.t;

/**
 * After syncs that each served one epoch: at each sync's end, every T_as_of equals what that
 * sync left; just before each sync began, what the one before left (nothing seen early).
 */
async function expectPastAsArrived(w: Warehouse, states: { at: string; tables: Map<string, string[]> }[]) {
  const runs = await w.query<{ before: string }>(sql`select (started_at - interval '1 microsecond')::text as before from sync.runs order by started_at`);
  expect(runs).toHaveLength(states.length);
  for (const t of NAMES) {
    for (const [i, s] of states.entries()) {
      expect(await rowsOf(w, `${t}_as_of('${s.at}')`), `${t} as of the end of sync ${i}`).toEqual(s.tables.get(t));
      const earlier = i === 0 ? [] : states[i - 1]!.tables.get(t);
      expect(await rowsOf(w, `${t}_as_of('${runs[i]!.before}')`), `${t} just before sync ${i} began`).toEqual(earlier);
    }
  }
  // The epochs changed many tables: the check above saw versions, not one state thrice.
  const changed = NAMES.filter((t) => JSON.stringify(states[0]!.tables.get(t)) !== JSON.stringify(states.at(-1)!.tables.get(t)));
  expect(changed.length, changed.join(' ')).toBeGreaterThanOrEqual(10);
  await expectNoOverlap(w);
}

/**
 * `app.metrics_as_of` holds each slug at most once at every instant a version of it begins or
 * ends, and one microsecond either side.
 */
async function expectOneRowPerKey(w: Warehouse) {
  const [twice] = await w.query<{ n: number; at: string | null }>(
    sql.raw(`with bounds as (select known_from as t from app.metrics_history union select known_to from app.metrics_history union select fetched_at from app.metrics),
                  instants as (select distinct t + d as at from bounds, unnest(array[interval '-1 microsecond', interval '0', interval '1 microsecond']) d)
             select count(*)::int as n, min(i.at)::text as at from instants i, lateral (select slug from app.metrics_as_of(i.at) group by slug having count(*) > 1) k`),
  );
  expect(twice, 'a slug twice in app.metrics_as_of').toEqual({ n: 0, at: null });
}

describe.each(BOTH_SERVERS)('one clock on %s', (_label, start) => {
  const held = useWarehouseServer(start);

  /** Two connections of their own: writers whose transactions interleave. */
  const writers = (url: string) => [0, 1].map(() => postgres(url, { max: 1, onnotice: () => {}, connection: { TimeZone: 'UTC' } })) as [postgres.Sql, postgres.Sql];

  /**
   * A migrated warehouse in a new database of this server for `fn` (a copy of the server's
   * migrated template), with two connections of their own beside it (writers whose
   * transactions interleave); all closed and dropped after.
   */
  async function withWarehouse(fn: (w: Warehouse, url: string, writers: [postgres.Sql, postgres.Sql]) => Promise<void>): Promise<void> {
    // A process's pool (10 connections), beside the writers.
    const { warehouse: w, databaseUrl } = await freshWarehouse({ on: held.server, maxConnections: 10 });
    const pair = writers(databaseUrl);
    try {
      await fn(w, databaseUrl, pair);
    } finally {
      await Promise.all(pair.map((c) => c.end()));
    }
  }

  /** What the write path sends for `app.metrics` (upsert.ts): an upsert that rewrites a row only when it changed. */
  const UPSERT_METRICS = `on conflict (slug) do update set unit = excluded.unit, payload = excluded.payload, fetched_at = excluded.fetched_at where app.metrics.unit is distinct from excluded.unit`;

  /**
   * The race of two writers on `app.metrics`' key m: 1. A takes its known time; 2. B takes a
   * later one, removes m and commits; 3. A writes m as the write path does (nothing conflicts
   * any more, so m is inserted, known from tA) and commits.
   */
  function insertAfterLaterDelete(a: postgres.Sql, b: postgres.Sql): Promise<{ tA: string; tB: string }> {
    return olderCommitsLast(a, b, `insert into app.metrics (slug, unit, payload) values ('m', 'vA', '{}') ${UPSERT_METRICS}`, `delete from app.metrics where slug = 'm'`);
  }

  const metricsAsOf = async (w: Warehouse, at: string) => w.query<{ slug: string; unit: string }>(sql`select slug, unit from app.metrics_as_of(${at}::timestamptz) order by slug`);
  const earlier = async (w: Warehouse, x: string, y: string) => (await w.query<{ e: boolean }>(sql`select ${x}::timestamptz < ${y}::timestamptz as e`))[0]!.e;
  const metricRows = async (w: Warehouse) => w.query<{ slug: string; unit: string; f: string }>(sql`select slug, unit, fetched_at::text as f from app.metrics order by slug`);
  /** The metric `m` written as `v0` by the test itself, before the writers: its row. */
  const firstVersion = async (w: Warehouse) => {
    await w.query(sql`insert into app.metrics (slug, unit, payload) values ('m', 'v0', '{}')`);
    const [t0] = await metricRows(w);
    return t0!;
  };
  /** One row per key, and no two versions of a key overlapping: what every case leaves. */
  const expectWhole = async (w: Warehouse) => {
    await expectOneRowPerKey(w);
    await expectNoOverlap(w);
  };
  const metricVersions = async (w: Warehouse) =>
    w.query<{ slug: string; unit: string; from: string; to: string }>(sql`select slug, unit, known_from::text as from, known_to::text as to from app.metrics_history order by slug, known_from`);

  it('writers 2 h behind, right and 30 min behind (injected clocks): the past is what arrived, when it arrived', async () => {
    await withWarehouse(async (w) => {
      const states = [];
      for (const [epoch, skew] of [
        [0, -2 * HOUR],
        [1, 0],
        [2, -HOUR / 2],
      ] as const) {
        fx.sim.setEpoch(epoch);
        const r = await syncOnce(fx.sim, w, testLog.logger, { appKey, gatewayKey }, ['app', 'gateway'], { clock: () => new Date(Date.now() + skew) });
        expect(r.status, `sync of epoch ${epoch}`).toBe('succeeded');
        states.push({ at: await serverNow(w), tables: await dump(w) });
      }
      await expectPastAsArrived(w, states);
    });
  });

  it('the database refuses an overlapping version: a constraint on every history table', async () => {
    await withWarehouse(async (w) => {
      const constraints = await w.query<{ t: string }>(
        sql`select n.nspname || '.' || c.relname as t from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
            where k.contype = 'x' and c.relname like '%\_history' order by 1`,
      );
      expect(constraints.map((c) => c.t)).toEqual(NAMES.map((t) => `${t}_history`).sort());
      // The period first: the index the as-of reads find the versions holding at an instant through.
      const defs = await w.query<{ def: string }>(sql`select pg_get_constraintdef(k.oid) as def from pg_constraint k join pg_class c on c.oid = k.conrelid where k.contype = 'x' and c.relname like '%\_history'`);
      for (const d of defs) expect(d.def).toMatch(/^EXCLUDE USING gist \(tstzrange\(known_from, known_to\) WITH &&, /);
      await w.query(sql`insert into app.metrics (slug, unit, payload) values ('m', 'usd', '{}')`);
      await w.query(sql`update app.metrics set unit = 'eur' where slug = 'm'`);
      const [v] = await w.query<{ from: string; to: string }>(sql`select known_from::text as from, known_to::text as to from app.metrics_history where slug = 'm'`);
      expect(v).toBeDefined();
      // A version that overlaps the one kept: refused (exclusion_violation), not dropped.
      await expect(w.query(sql.raw(`insert into app.metrics_history (slug, unit, payload, status, fetched_at, known_from, known_to) values ('m', 'x', '{}', 'ok', '${v!.from}', '${v!.from}', '${v!.to}')`))).rejects.toMatchObject({
        cause: { code: '23P01' },
      });
    });
  });

  it('a warehouse of the release before: its key-first constraints are rebuilt period first, every version kept and still refused to overlap', async () => {
    // Empty: migrated below as the release before left one.
    const db = await freshDatabase({ on: held.server });
    const folder = mkdtempSync(path.join(tmpdir(), 'tesync-key-first-'));
    try {
      // The release before: the migrations up to 0013, whose constraints hold the key first.
      cpSync(new URL('../../../drizzle/', import.meta.url), folder, { recursive: true });
      const journalFile = path.join(folder, 'meta', '_journal.json');
      const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { idx: number }[] };
      writeFileSync(journalFile, JSON.stringify({ ...journal, entries: journal.entries.filter((e) => e.idx <= 13) }));
      const client = postgres(db.databaseUrl, { max: 1, onnotice: () => {} });
      try {
        await migrate(drizzle(client), { migrationsFolder: folder });
        const [before] = await client<{ def: string }[]>`select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'metrics_history_no_overlap'`;
        expect(before!.def).toMatch(/^EXCLUDE USING gist \(slug WITH =, tstzrange/);
        await client`insert into app.metrics (slug, unit, payload) values ('m', 'usd', '{}')`;
        await client`update app.metrics set unit = 'eur' where slug = 'm'`;
      } finally {
        await client.end();
      }
      const w = await openWarehouse({ databaseUrl: db.databaseUrl, dataDir: '' });
      try {
        await w.migrate();
        const [after] = await w.query<{ def: string }>(sql`select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'metrics_history_no_overlap'`);
        expect(after!.def).toBe('EXCLUDE USING gist (tstzrange(known_from, known_to) WITH &&, slug WITH =)');
        const [v] = await w.query<{ unit: string; from: string; to: string }>(sql`select unit, known_from::text as from, known_to::text as to from app.metrics_history where slug = 'm'`);
        expect(v!.unit).toBe('usd');
        const [asOf] = await w.query<{ unit: string }>(sql.raw(`select unit from app.metrics_as_of('${v!.from}') where slug = 'm'`));
        expect(asOf!.unit).toBe('usd');
        await expect(w.query(sql.raw(`insert into app.metrics_history (slug, unit, payload, status, fetched_at, known_from, known_to) values ('m', 'x', '{}', 'ok', '${v!.from}', '${v!.from}', '${v!.to}')`))).rejects.toMatchObject({
          cause: { code: '23P01' },
        });
      } finally {
        await w.close();
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  /**
   * A takes its known time first; B takes a later one, runs `b` and commits; then A runs `a`
   * (held inside its transaction until B committed) and commits last.
   */
  async function olderCommitsLast(a: postgres.Sql, b: postgres.Sql, ofA: string, ofB: string): Promise<{ tA: string; tB: string }> {
    const reserved = await a.reserve();
    try {
      await reserved`begin`;
      const [{ known: tA }] = (await reserved`select "sync"."begin_write"(null)::text as known`) as unknown as [{ known: string }];
      const tB = await b.begin(async (tx) => {
        const [r] = await tx<{ known: string }[]>`select "sync"."begin_write"(null)::text as known`;
        await tx.unsafe(ofB);
        return r!.known;
      });
      await reserved.unsafe(ofA);
      await reserved`commit`;
      return { tA, tB };
    } finally {
      reserved.release();
    }
  }

  it('two writers racing on one row: the older one, committing last, is placed before the newer, which stays', async () => {
    await withWarehouse(async (w, _url, [a, b]) => {
      const t0 = await firstVersion(w);
      const { tA, tB } = await olderCommitsLast(a, b, `update app.metrics set unit = 'vA' where slug = 'm'`, `update app.metrics set unit = 'vB' where slug = 'm'`);
      expect(await earlier(w, tA, tB)).toBe(true);
      expect(await metricVersions(w)).toEqual([
        { slug: 'm', unit: 'v0', from: t0.f, to: tA },
        { slug: 'm', unit: 'vA', from: tA, to: tB },
      ]);
      expect(await metricRows(w)).toEqual([{ slug: 'm', unit: 'vB', f: tB }]);
      await expectWhole(w);
      // The same through the write path's upsert (fetched_at from known time), and again in A's
      // transaction: the version A placed is replaced, not cut to nothing.
      const again = await olderCommitsLast(
        a,
        b,
        `insert into app.metrics (slug, unit, payload) values ('m', 'a1', '{}') ${UPSERT_METRICS}; insert into app.metrics (slug, unit, payload) values ('m', 'a2', '{}') ${UPSERT_METRICS}`,
        `insert into app.metrics (slug, unit, payload) values ('m', 'b1', '{}') ${UPSERT_METRICS}`,
      );
      expect((await metricVersions(w)).slice(2)).toEqual([
        { slug: 'm', unit: 'vB', from: tB, to: again.tA },
        { slug: 'm', unit: 'a2', from: again.tA, to: again.tB },
      ]);
      expect(await metricRows(w)).toEqual([{ slug: 'm', unit: 'b1', f: again.tB }]);
      await expectWhole(w);
    });
  });

  it('an older removal of a row a newer writer rewrote: the key absent from the older known time until the newer row; a key the newer writer first wrote: the older write held until it', async () => {
    await withWarehouse(async (w, _url, [a, b]) => {
      const t0 = await firstVersion(w);
      const { tA, tB } = await olderCommitsLast(a, b, `delete from app.metrics where slug = 'm'`, `update app.metrics set unit = 'vB' where slug = 'm'`);
      expect(await metricVersions(w)).toEqual([{ slug: 'm', unit: 'v0', from: t0.f, to: tA }]);
      expect(await metricRows(w)).toEqual([{ slug: 'm', unit: 'vB', f: tB }]);
      expect(await metricsAsOf(w, tA)).toEqual([]);
      // n: B inserts it first, A's older upsert of it conflicts and is placed before B's row.
      const n = await olderCommitsLast(
        a,
        b,
        `insert into app.metrics (slug, unit, payload) values ('n', 'nA', '{}') ${UPSERT_METRICS}`,
        `insert into app.metrics (slug, unit, payload) values ('n', 'nB', '{}') ${UPSERT_METRICS}`,
      );
      expect((await metricVersions(w)).filter((v) => v.slug === 'n')).toEqual([{ slug: 'n', unit: 'nA', from: n.tA, to: n.tB }]);
      expect((await metricRows(w)).filter((r) => r.slug === 'n')).toEqual([{ slug: 'n', unit: 'nB', f: n.tB }]);
      await expectWhole(w);
    });
  });

  it('an earlier-known insert after a later-known delete: held from its known time until the removal, the key left removed, and still writable', async () => {
    await withWarehouse(async (w, url, [a, b]) => {
      const t0 = await firstVersion(w);
      const { tA, tB } = await insertAfterLaterDelete(a, b);
      expect(await earlier(w, tA, tB), `A (${tA}) took its known time before B (${tB})`).toBe(true);
      // v0 until A's known time, A's value until B removed the key; nothing current.
      expect(await metricVersions(w)).toEqual([
        { slug: 'm', unit: 'v0', from: t0.f, to: tA },
        { slug: 'm', unit: 'vA', from: tA, to: tB },
      ]);
      expect(await metricRows(w)).toEqual([]);
      await expectWhole(w);
      // The key is not stuck: a later insert, update and removal keep their versions, one after another.
      await w.query(sql`insert into app.metrics (slug, unit, payload) values ('m', 'v2', '{}')`);
      await w.query(sql`update app.metrics set unit = 'v3' where slug = 'm'`);
      await w.query(sql`delete from app.metrics where slug = 'm'`);
      const versions = await metricVersions(w);
      expect(versions.map((v) => v.unit)).toEqual(['v0', 'vA', 'v2', 'v3']);
      expect(versions[3]!.from).toBe(versions[2]!.to);
      await expectWhole(w);
    });
  });

  it('a backdated insert of a key with history is placed before that history; one of a key without history is left as written', async () => {
    await withWarehouse(async (w) => {
      await w.query(sql`insert into app.metrics (slug, unit, payload) values ('m', 'v0', '{}')`);
      await w.query(sql`delete from app.metrics where slug = 'm'`);
      const [v0] = await metricVersions(w);
      await w.query(sql`insert into app.metrics (slug, unit, payload, fetched_at) values ('m', 'back', '{}', '2000-01-01T00:00:00Z'), ('n', 'new', '{}', '2000-01-01T00:00:00Z')`);
      expect(await metricRows(w)).toEqual([{ slug: 'n', unit: 'new', f: '2000-01-01 00:00:00+00' }]);
      expect(await metricsAsOf(w, '2000-06-01T00:00:00Z')).toEqual([
        { slug: 'm', unit: 'back' },
        { slug: 'n', unit: 'new' },
      ]);
      expect(await metricsAsOf(w, v0!.from)).toEqual([
        { slug: 'm', unit: 'v0' },
        { slug: 'n', unit: 'new' },
      ]);
      expect(await metricsAsOf(w, v0!.to)).toEqual([{ slug: 'n', unit: 'new' }]);
      expect((await metricVersions(w)).map((v) => [v.unit, v.to])).toEqual([
        ['back', v0!.from],
        ['v0', v0!.to],
      ]);
      await expectWhole(w);
    });
  });

  it('an upsert whose batch partly conflicts: only the rows it inserts are placed, and only those overlapping a history', async () => {
    await withWarehouse(async (w, url, [a, b]) => {
      // What the statement's transition table holds (Postgres: an INSERT ... ON CONFLICT DO
      // UPDATE's inserted rows only), seen by a trigger beside the one under test.
      await w.query(sql.raw('create table public.inserted_rows (slug text)'));
      await w.query(sql.raw('create function public.record_inserted() returns trigger language plpgsql as $$ begin insert into public.inserted_rows select slug from inserted; return null; end $$'));
      await w.query(sql.raw('create trigger record_inserted after insert on app.metrics referencing new table as inserted for each statement execute function public.record_inserted()'));
      await w.query(sql`insert into app.metrics (slug, unit, payload) values ('kept', 'k', '{}'), ('changed', 'c0', '{}'), ('back', 'b0', '{}')`);
      const before = new Map((await metricRows(w)).map((r) => [r.slug, r.f]));
      await w.query(sql.raw('truncate public.inserted_rows'));
      const reserved = await a.reserve();
      await reserved`begin`;
      const [{ known: tA }] = (await reserved`select "sync"."begin_write"(null)::text as known`) as unknown as [{ known: string }];
      const tB = await b.begin(async (tx) => {
        const [r] = await tx<{ known: string }[]>`select "sync"."begin_write"(null)::text as known`;
        await tx`delete from app.metrics where slug = 'back'`;
        return r!.known;
      });
      // One batch: unchanged (conflict, left), changed (conflict, updated), removed by B (inserted
      // again), new (inserted).
      await reserved.unsafe(`insert into app.metrics (slug, unit, payload) values ('kept', 'k', '{}'), ('changed', 'c1', '{}'), ('back', 'b1', '{}'), ('fresh', 'f', '{}') ${UPSERT_METRICS}`);
      await reserved`commit`;
      reserved.release();
      expect((await w.query<{ slug: string }>(sql.raw('select slug from public.inserted_rows order by slug'))).map((r) => r.slug)).toEqual(['back', 'fresh']);
      expect(await metricRows(w)).toEqual([
        { slug: 'changed', unit: 'c1', f: tA },
        { slug: 'fresh', unit: 'f', f: tA },
        { slug: 'kept', unit: 'k', f: before.get('kept') },
      ]);
      expect(await metricVersions(w)).toEqual([
        { slug: 'back', unit: 'b0', from: before.get('back'), to: tA },
        { slug: 'back', unit: 'b1', from: tA, to: tB },
        { slug: 'changed', unit: 'c0', from: before.get('changed'), to: tA },
      ]);
      await expectWhole(w);
    });
  });

  it('the ordinary write path (a new range without ON CONFLICT, an upsert, an unchanged resync, a change) starts each row at its transaction\'s known time', async () => {
    await withWarehouse(async (w) => {
      // 600 days of one token: a range no stored row shares, written as a plain INSERT (upsert.ts).
      const days = (value: (d: number) => string) =>
        Array.from({ length: 600 }, (_, d) => ({ tokenSlug: 'tok', stream: 'all', metric: 'm', ts: new Date(Date.UTC(2024, 0, 1) + d * 86_400_000), interval: '1d', value: value(d), unit: null, kind: null, asOf: null, freshness: null, runId: null, status: 'ok' }));
      const units = (unit: (slug: string) => string) => ['a', 'b', 'c'].map((slug) => ({ slug, unit: unit(slug), kind: null, group: null, payload: {}, asOf: null, freshness: null, runId: null, status: 'ok' }));
      const write = (history: ReturnType<typeof days>, catalog: ReturnType<typeof units>) =>
        w.db.transaction(async (tx) => {
          await beginWrite(tx);
          const [k] = resultRows<{ known: string }>(await tx.execute(sql`select "sync"."known_at"()::text as known`));
          const written = (await upsertRows(tx as unknown as Executor, metricHistory, history)) + (await upsertRows(tx as unknown as Executor, metrics, catalog));
          return { known: k!.known, written };
        });
      const starts = async () =>
        w.query<{ f: string; n: number }>(
          sql`select f, count(*)::int as n from (select fetched_at::text as f from app.metric_history union all select fetched_at::text from app.metrics) x group by f order by f`,
        );
      const versions = async () => (await w.query<{ n: number }>(sql`select (select count(*) from app.metric_history_history) + (select count(*) from app.metrics_history) as n`))[0]!.n;

      const first = await write(days((d) => `${d}`), units(() => 'usd'));
      expect(first.written).toBe(603);
      expect(await starts()).toEqual([{ f: first.known, n: 603 }]);
      // Unchanged: nothing rewritten, every row still known from the first write.
      const again = await write(days((d) => `${d}`), units(() => 'usd'));
      expect(again.written).toBe(0);
      expect(await earlier(w, first.known, again.known)).toBe(true);
      expect(await starts()).toEqual([{ f: first.known, n: 603 }]);
      expect(Number(await versions())).toBe(0);
      // One day and one metric change: those two start at the new write's known time, their old values end there.
      const changed = await write(days((d) => (d === 7 ? '-7' : `${d}`)), units((slug) => (slug === 'b' ? 'eur' : 'usd')));
      expect(changed.written).toBe(2);
      expect(await starts()).toEqual([
        { f: first.known, n: 601 },
        { f: changed.known, n: 2 },
      ]);
      const periods = await w.query<{ from: string; to: string }>(
        sql`select known_from::text as from, known_to::text as to from app.metric_history_history union all select known_from::text, known_to::text from app.metrics_history`,
      );
      expect(periods).toEqual([
        { from: first.known, to: changed.known },
        { from: first.known, to: changed.known },
      ]);
      await expectNoOverlap(w);
    });
  });

  it('a warehouse an earlier release left with a row overlapping its history: migrated, the row starts where the history ends, and its key can be written again', async () => {
    await withWarehouse(async (w, url, [a, b]) => {
      // The release before had no trigger after INSERT: the race of the test above left m so.
      await w.query(sql.raw('drop trigger start_after_history on app.metrics'));
      await w.query(sql`insert into app.metrics (slug, unit, payload) values ('m', 'v0', '{}')`);
      const { tB } = await insertAfterLaterDelete(a, b);
      const [stuck] = await metricRows(w);
      expect(await earlier(w, stuck!.f, tB)).toBe(true);
      await expect(w.query(sql`update app.metrics set unit = 'v2' where slug = 'm'`)).rejects.toMatchObject({ cause: { code: '23P01' } });
      // history.sql applied again, as it is when a newer release first migrates this warehouse.
      await w.query(sql`delete from drizzle.__tesync_sql_files where name = 'history.sql'`);
      await w.migrate();
      expect(await metricRows(w)).toEqual([{ slug: 'm', unit: 'vA', f: tB }]);
      await expectWhole(w);
      await w.query(sql`update app.metrics set unit = 'v2' where slug = 'm'`);
      expect((await metricVersions(w)).map((v) => v.unit)).toEqual(['v0', 'vA']);
      const [trigger] = await w.query<{ n: number }>(sql`select count(*)::int as n from pg_trigger where tgname = 'start_after_history' and tgrelid = 'app.metrics'::regclass`);
      expect(trigger!.n).toBe(1);
    });
  });
});

// What these vary is each process's own clock; the server's clock, which alone stamps, is of
// the same kind as in the injected-clock test above, which runs on both servers.

describe('one clock across real processes, on Postgres', () => {
  it('two real `tesync sync` processes, one under faketime 2 h behind: the same', async () => {
    expect(faketimeProblem(), 'faketime is needed (Debian package faketime; .ci/run installs it)').toBeUndefined();
    const { warehouse: w, databaseUrl } = await freshWarehouse();
    const env = { DATABASE_URL: databaseUrl, TE_APP_URL: fx.sim.url, TE_APP_API_KEY: appKey, TE_GATEWAY_URL: fx.sim.url, TE_GATEWAY_API_KEY: gatewayKey, LOG_LEVEL: 'warn' };
    const states = [];
    for (const [epoch, skew] of [
      [0, '-2h'],
      [1, null],
      [2, '-30m'],
    ] as const) {
      fx.sim.setEpoch(epoch);
      const r = await runCli(['sync', '--json'], env, skew ? { wrap: ['faketime', '-f', skew] } : {});
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      states.push({ at: await serverNow(w), tables: await dump(w) });
    }
    // Each process stamped nothing with its own clock: the runs follow one another.
    const runs = await w.query<{ ok: boolean }>(sql`select started_at < finished_at and finished_at < lead(started_at, 1, 'infinity') over (order by started_at) as ok from sync.runs`);
    expect(runs.map((r) => r.ok)).toEqual([true, true, true]);
    await expectPastAsArrived(w, states);
  });

  it('two workers on one queue, their clocks an hour apart: the same', async () => {
    expect(faketimeProblem(), 'faketime is needed (Debian package faketime; .ci/run installs it)').toBeUndefined();
    const { warehouse: w, databaseUrl } = await freshWarehouse();
    const prefix = uniqueName('tesync_clock');
    const redisUrl = await redisServerUrl();
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      TE_QUEUE_PREFIX: prefix,
      TE_APP_URL: fx.sim.url,
      TE_APP_API_KEY: appKey,
      TE_GATEWAY_URL: fx.sim.url,
      TE_GATEWAY_API_KEY: gatewayKey,
      TE_METRICS_PORT: '0',
      TE_WORKER_CONCURRENCY: '3',
      // Info: a worker says `worker ready` at that level.
      LOG_LEVEL: 'info',
      ...SCHEDULES_OFF,
    };
    const workers = [startWorker(env), startWorker(env, [], { wrap: ['faketime', '-f', '-1h'] })];
    try {
      await Promise.all(workers.map((x) => x.ready));
      const states = [];
      for (const epoch of [0, 1, 2]) {
        fx.sim.setEpoch(epoch);
        const r = await runCli(['enqueue', '--wait', '--timeout', String(patience(90_000) / 1000), '--full'], env, { timeoutMs: 100_000 });
        expect(r.code, r.stderr.slice(-2000)).toBe(0);
        states.push({ at: await serverNow(w), tables: await dump(w) });
      }
      const [req] = await w.query<{ n: number }>(sql`select count(distinct run_id)::int as n from sync.requests`);
      expect(req!.n).toBe(3);
      // Both workers ran jobs that wrote rows: the skewed one's writes are in the versions checked.
      for (const [i, name] of ['the worker on the right clock', 'the worker an hour behind'].entries()) {
        const done = workers[i]!.lines().filter((l) => l.msg === 'job done');
        expect(done.length, `${name}: jobs done`).toBeGreaterThan(0);
        expect(done.reduce((n, l) => n + Number(l.rows ?? 0), 0), `${name}: rows written`).toBeGreaterThan(0);
      }
      await expectPastAsArrived(w, states);
    } finally {
      await killAll(workers);
      await deleteRedisKeys(redisUrl, prefix);
    }
  }, patience(180_000));
});
