// One clock for every writer (contract: time and history). Writers whose own clocks differ
// (2 h behind, right, 30 min behind: injected into the sync, and real `tesync sync` processes
// under faketime; two workers on one queue an hour apart) store a past in which every T_as_of at every instant equals what had
// arrived by then, nothing is visible before its run began, no version is lost and none
// overlaps; the database refuses an overlapping version; two writers racing on one row keep
// their versions in order. On Postgres and on the embedded server.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { getTableConfig } from 'drizzle-orm/pg-core';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSIONED } from '../../src/schema/warehouse/history.ts';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { openWarehouse, type Warehouse } from '../../src/store/connection.ts';
import { rulesOf } from '../../src/schema/warehouse/table-rules.ts';
import { runCli } from '../helpers/cli.ts';
import { BOTH_SERVERS, type TestServer } from '../helpers/servers.ts';
import { canaryKey, createTestLogger, redisServerUrl, uniqueName } from '../helpers/services.ts';
import { deleteRedisKeys, killAll, SCHEDULES_OFF, startWorker } from '../helpers/workers.ts';
import { syncOnce } from '../helpers/sync.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const testLog = createTestLogger([appKey, gatewayKey]);
const HOUR = 3_600_000;
const NAMES = VERSIONED.map((t) => `${getTableConfig(t).schema}.${getTableConfig(t).name}`);

/** Whether faketime runs a process on a skewed clock here (`.ci/run` installs it). */
function faketimeWorks(): boolean {
  try {
    const out = execFileSync('faketime', ['-f', '-2h', process.execPath, '-e', 'process.stdout.write(String(Date.now()))'], { encoding: 'utf8' });
    return Math.abs(Date.now() - 2 * HOUR - Number(out)) < 60_000;
  } catch {
    return false;
  }
}

describe.each(BOTH_SERVERS)('one clock on %s', (_label, start) => {
  let sim: Simulator;
  let server: TestServer;
  beforeAll(async () => {
    sim = await startSimulator({ tokens: 4, historyDays: 10, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
    server = await start();
  }, 120_000);
  afterAll(async () => {
    await sim?.close();
    await server?.close();
  });

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

  async function expectNoOverlap(w: Warehouse) {
    for (const table of VERSIONED) {
      const { schema, name } = getTableConfig(table);
      const on = rulesOf(table).key.map((c) => `a."${c.name}" = b."${c.name}"`).join(' and ');
      const [r] = await w.query<{ n: string }>(
        sql.raw(`select (select count(*) from ${schema}.${name}_history a join ${schema}.${name}_history b on ${on} and a.ctid <> b.ctid
                   where a.known_from < b.known_to and b.known_from < a.known_to)
                 + (select count(*) from ${schema}.${name}_history a join ${schema}.${name} b on ${on} where a.known_to > b.fetched_at)
                 + (select count(*) from ${schema}.${name}_history where known_to <= known_from) as n`),
      );
      expect(Number(r!.n), `${schema}.${name}: overlapping or empty versions`).toBe(0);
    }
  }

  it('writers 2 h behind, right and 30 min behind (injected clocks): the past is what arrived, when it arrived', async () => {
    const db = await server.database();
    const w = await openWarehouse({ databaseUrl: db.url, dataDir: '' });
    try {
      await w.migrate();
      const states = [];
      for (const [epoch, skew] of [
        [0, -2 * HOUR],
        [1, 0],
        [2, -HOUR / 2],
      ] as const) {
        sim.setEpoch(epoch);
        const r = await syncOnce(sim, w, testLog.logger, { appKey, gatewayKey }, ['app', 'gateway'], { clock: () => new Date(Date.now() + skew) });
        expect(r.status, `sync of epoch ${epoch}`).toBe('succeeded');
        states.push({ at: await serverNow(w), tables: await dump(w) });
      }
      await expectPastAsArrived(w, states);
    } finally {
      await w.close();
      await db.drop();
    }
  });

  it('two real `tesync sync` processes, one under faketime 2 h behind: the same', async () => {
    expect(faketimeWorks(), 'faketime is needed (Debian package faketime; .ci/run installs it)').toBe(true);
    const db = await server.database();
    const w = await openWarehouse({ databaseUrl: db.url, dataDir: '' });
    try {
      const env = { DATABASE_URL: db.url, TE_APP_URL: sim.url, TE_APP_API_KEY: appKey, TE_GATEWAY_URL: sim.url, TE_GATEWAY_API_KEY: gatewayKey, LOG_LEVEL: 'warn' };
      const states = [];
      for (const [epoch, skew] of [
        [0, '-2h'],
        [1, null],
        [2, '-30m'],
      ] as const) {
        sim.setEpoch(epoch);
        const r = await runCli(['sync', '--json'], env, skew ? { wrap: ['faketime', '-f', skew] } : {});
        expect(r.code, r.stderr.slice(-2000)).toBe(0);
        states.push({ at: await serverNow(w), tables: await dump(w) });
      }
      // Each process stamped nothing with its own clock: the runs follow one another.
      const runs = await w.query<{ ok: boolean }>(sql`select started_at < finished_at and finished_at < lead(started_at, 1, 'infinity') over (order by started_at) as ok from sync.runs`);
      expect(runs.map((r) => r.ok)).toEqual([true, true, true]);
      await expectPastAsArrived(w, states);
    } finally {
      await w.close();
      await db.drop();
    }
  });

  it('two workers on one queue, their clocks an hour apart: the same', async () => {
    expect(faketimeWorks(), 'faketime is needed (Debian package faketime; .ci/run installs it)').toBe(true);
    const db = await server.database();
    const w = await openWarehouse({ databaseUrl: db.url, dataDir: '' });
    const prefix = uniqueName('tesync_clock');
    const redisUrl = await redisServerUrl();
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl,
      TE_QUEUE_PREFIX: prefix,
      TE_APP_URL: sim.url,
      TE_APP_API_KEY: appKey,
      TE_GATEWAY_URL: sim.url,
      TE_GATEWAY_API_KEY: gatewayKey,
      TE_METRICS_PORT: '0',
      TE_WORKER_CONCURRENCY: '3',
      // Info: a worker says `worker ready` at that level.
      LOG_LEVEL: 'info',
      ...SCHEDULES_OFF,
    };
    await w.migrate();
    const workers = [startWorker(env), startWorker(env, [], { wrap: ['faketime', '-f', '-1h'] })];
    try {
      await Promise.all(workers.map((x) => x.ready));
      const states = [];
      for (const epoch of [0, 1, 2]) {
        sim.setEpoch(epoch);
        const r = await runCli(['enqueue', '--wait', '--timeout', '90', '--full'], env, { timeoutMs: 100_000 });
        expect(r.code, r.stderr.slice(-2000)).toBe(0);
        states.push({ at: await serverNow(w), tables: await dump(w) });
      }
      // Both workers wrote: the skewed one's writes are in the versions checked.
      const [req] = await w.query<{ n: number }>(sql`select count(distinct run_id)::int as n from sync.requests`);
      expect(req!.n).toBe(3);
      await expectPastAsArrived(w, states);
    } finally {
      await killAll(workers);
      await deleteRedisKeys(redisUrl, prefix);
      await w.close();
      await db.drop();
    }
  }, 180_000);

  it('the database refuses an overlapping version: a constraint on every history table', async () => {
    const db = await server.database();
    const w = await openWarehouse({ databaseUrl: db.url, dataDir: '' });
    try {
      await w.migrate();
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
    } finally {
      await w.close();
      await db.drop();
    }
  });

  it('a warehouse of the release before: its key-first constraints are rebuilt period first, every version kept and still refused to overlap', async () => {
    const db = await server.database();
    const folder = mkdtempSync(path.join(tmpdir(), 'tesync-key-first-'));
    try {
      // The release before: the migrations up to 0013, whose constraints hold the key first.
      cpSync(new URL('../../drizzle/', import.meta.url), folder, { recursive: true });
      const journalFile = path.join(folder, 'meta', '_journal.json');
      const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { idx: number }[] };
      writeFileSync(journalFile, JSON.stringify({ ...journal, entries: journal.entries.filter((e) => e.idx <= 13) }));
      const client = postgres(db.url, { max: 1, onnotice: () => {} });
      try {
        await migrate(drizzle(client), { migrationsFolder: folder });
        const [before] = await client<{ def: string }[]>`select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'metrics_history_no_overlap'`;
        expect(before!.def).toMatch(/^EXCLUDE USING gist \(slug WITH =, tstzrange/);
        await client`insert into app.metrics (slug, unit, payload) values ('m', 'usd', '{}')`;
        await client`update app.metrics set unit = 'eur' where slug = 'm'`;
      } finally {
        await client.end();
      }
      const w = await openWarehouse({ databaseUrl: db.url, dataDir: '' });
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
      await db.drop();
    }
  });

  it('two writers racing on one row: the later-started one commits first, both versions kept in order', async () => {
    const db = await server.database();
    const w = await openWarehouse({ databaseUrl: db.url, dataDir: '' });
    const a = postgres(db.url, { max: 1, onnotice: () => {} });
    const b = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      await w.migrate();
      await w.query(sql`insert into app.metrics (slug, unit, payload) values ('m', 'v0', '{}')`);
      const [t0] = await w.query<{ f: string }>(sql`select fetched_at::text as f from app.metrics`);
      // A takes its known time first; B takes a later one, writes and commits; then A writes.
      const reserved = await a.reserve();
      await reserved`begin`;
      await reserved`select "sync"."begin_write"(null)`;
      await b.begin(async (tx) => {
        await tx`select "sync"."begin_write"(null)`;
        await tx`update app.metrics set unit = 'vB' where slug = 'm'`;
      });
      await reserved`update app.metrics set unit = 'vA' where slug = 'm'`;
      await reserved`commit`;
      reserved.release();
      const history = await w.query<{ unit: string; from: string; to: string }>(sql`select unit, known_from::text as from, known_to::text as to from app.metrics_history order by known_from`);
      const [current] = await w.query<{ unit: string; f: string }>(sql`select unit, fetched_at::text as f from app.metrics`);
      expect(history.map((h) => h.unit)).toEqual(['v0', 'vB']);
      expect(history[0]!.from).toBe(t0!.f);
      expect(history[0]!.to).toBe(history[1]!.from);
      expect(history[1]!.to).toBe(current!.f);
      expect(current!.unit).toBe('vA');
      await expectNoOverlap(w);
    } finally {
      await a.end();
      await b.end();
      await w.close();
      await db.drop();
    }
  });
});
