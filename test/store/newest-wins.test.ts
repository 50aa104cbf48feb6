// The newest response wins, not the last commit (issue 45; contract: time and history). Two
// real syncs of one warehouse at once, each with a pool of its own (as a sync beside a
// worker): the older reads epoch 1 of the simulator, where 'cobalt-dex' is delisted; the newer
// reads epoch 2, where it is listed again. The older is held by an advisory lock the test
// holds, through a trigger that waits on it for the older writer's connections only
// (`application_name`):
// - held inside its write of the token list, after its known time: the newer writer's write
//   of the same resource waits for it (`sync.begin_write`'s resource lock), so the two commit
//   in the order of their known times, and the older response holds from its known time
//   until the newer one's;
// - held after its responses were received, before its writes (in the first statement of its
//   token list's commit, as it dates the answer and before it takes its turn on the resource):
//   the newer writer's responses are written first, and the older ones, written last, are
//   superseded (nothing of them written, each counted `superseded`).
// Either way the token is listed now, `T_as_of` gives at every instant what the newest
// response known then said, and no versions overlap. What the database does with an older
// write that commits last anyway (a writer that takes no resource lock) is shown per row in
// one-clock.test.ts.
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { openWarehouse, type Warehouse } from '../../src/store/connection.ts';
import type { SyncOutcome } from '../../src/cli/sync-session.ts';
import { patience } from '../helpers/patience.ts';
import { freshWarehouse, useSimulator } from '../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';
import { expectNoOverlap } from '../helpers/versions.ts';
import { waitFor } from '../helpers/workers.ts';

const appKey = canaryKey('ak');
const testLog = createTestLogger([appKey]);
const OLDER = 'tesync_older';
const HOLD = 4_545_454;
const TOKEN = 'cobalt-dex';

// Six tokens: one delisted is less than a fifth of the list, read once.
const fx = useSimulator({ tokens: 6, historyDays: 5, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } } });

interface Writers {
  /** The newer writer's warehouse, and the test's. */
  w: Warehouse;
  /** The older writer's: its connections carry `application_name` OLDER. */
  older: Warehouse;
  /** The test's own connection, which holds HOLD. */
  holder: postgres.ReservedSql;
  holderPool: postgres.Sql;
}

/**
 * A warehouse synced once at epoch 0, a second pool of the older writer, and the hold taken on
 * the older writer's writes: of app.tokens (`write`), or as its token list's commit dates the
 * answer (`received`: the warehouse's clock, read by the commit's first statement, then held
 * before that statement takes the resource's turn).
 */
async function withWriters(held: 'write' | 'received', fn: (x: Writers) => Promise<void>): Promise<void> {
  // A process's pool (10 connections), as the older writer's beside it.
  const { warehouse: w, databaseUrl } = await freshWarehouse({ maxConnections: 10 });
  const url = new URL(databaseUrl);
  url.searchParams.set('application_name', OLDER);
  const older = await openWarehouse({ databaseUrl: url.toString(), dataDir: '' });
  const holderPool = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const holder = await holderPool.reserve();
  try {
    fx.sim.setEpoch(0);
    const first = await syncOnce(fx.sim, w, testLog.logger, { appKey }, ['app']);
    expect(first.status).toBe('succeeded');
    const isOlder = `current_setting('application_name') = '${OLDER}'`;
    const hold = `perform pg_advisory_xact_lock_shared(${HOLD})`;
    if (held === 'write') {
      await w.query(sql.raw(`create function public.hold_older() returns trigger language plpgsql as $$ begin if ${isOlder} then ${hold}; end if; return null; end $$`));
      await w.query(sql.raw(`create trigger hold_older before insert or update or delete on app.tokens for each statement execute function public.hold_older()`));
    } else {
      // begin_write wrapped: the older writer's commit of the token list waits once its
      // answer's time is read (the statement's first part) and before it takes its turn.
      await w.query(sql.raw(`alter function sync.begin_write(bigint, text, timestamptz) rename to begin_write_unheld`));
      await w.query(
        sql.raw(`create function sync.begin_write(closing_body bigint, resource text default null, "at" timestamptz default null) returns timestamptz language plpgsql as $$
          begin
            if ${isOlder} and resource = 'app/tokens' then ${hold}; end if;
            return sync.begin_write_unheld(closing_body, resource, "at");
          end $$`),
      );
    }
    await holder`select pg_advisory_lock(${HOLD})`;
    await fn({ w, older, holder, holderPool });
  } finally {
    holder.release();
    await holderPool.end();
    await older.close();
  }
}

/** The backends of this database waiting for an advisory lock, by application_name. */
async function waiting(w: Warehouse): Promise<{ app: string; n: number }[]> {
  return w.query<{ app: string; n: number }>(sql`
    select a.application_name as app, count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
     where l.locktype = 'advisory' and not l.granted and a.datname = current_database() group by 1`);
}

/** The token's row and versions in app.tokens: whether delisted, and from when to when. */
async function tokenVersions(w: Warehouse) {
  return w.query<{ delisted: boolean; from: string; to: string | null }>(sql`
    select delisted, "from", "to" from (
      select delisted_at is not null as delisted, known_from::text as "from", known_to::text as "to", known_from as k from app.tokens_history where slug = ${TOKEN}
      union all
      select delisted_at is not null, fetched_at::text, null, fetched_at from app.tokens where slug = ${TOKEN}) v order by k`);
}

/** Whether the token is delisted in app.tokens as known at `at` (undefined: not there). */
async function delistedAsOf(w: Warehouse, at: string): Promise<boolean | undefined> {
  const rows = await w.query<{ d: boolean }>(sql`select delisted_at is not null as d from app.tokens_as_of(${at}::timestamptz) where slug = ${TOKEN}`);
  expect(rows.length).toBeLessThanOrEqual(1);
  return rows[0]?.d;
}

const shifted = async (w: Warehouse, at: string, by: string) => (await w.query<{ t: string }>(sql`select (${at}::timestamptz + ${by}::interval)::text as t`))[0]!.t;

const runStart = async (w: Warehouse, id: string) => (await w.query<{ t: string }>(sql`select started_at::text as t from sync.runs where id = ${id}`))[0]!.t;

const superseded = (o: SyncOutcome) => Object.fromEntries(Object.entries(o.stats.byGroup).flatMap(([g, s]) => (s.superseded ? [[g, s.superseded]] : [])));

describe('two syncs on the same keys, the older one held', () => {
  it('held inside its write, after its known time: the newer write of the resource waits for it, and each holds in the order of their known times', async () => {
    await withWriters('write', async ({ w, older, holder }) => {
      fx.sim.setEpoch(1);
      const a = syncOnce(fx.sim, older, testLog.logger, { appKey }, ['app'], { full: true });
      a.catch(() => {});
      await waitFor('the older writer held in its token list write', async () => ((await waiting(w)).find((x) => x.app === OLDER)?.n ?? 0) > 0 || undefined, 60_000);
      fx.sim.setEpoch(2);
      const b = syncOnce(fx.sim, w, testLog.logger, { appKey }, ['app'], { full: true });
      b.catch(() => {});
      // The newer writer's token list reaches its write and waits for the resource: the older holds it.
      await waitFor('the newer writer waiting for the token list resource', async () => ((await waiting(w)).find((x) => x.app !== OLDER)?.n ?? 0) > 0 || undefined, 60_000);
      await holder`select pg_advisory_unlock(${HOLD})`;
      const [ra, rb] = await Promise.all([a, b]);
      expect(ra.status).toBe('succeeded');
      expect(rb.status).toBe('succeeded');

      const versions = await tokenVersions(w);
      const current = versions.at(-1)!;
      expect(current, 'listed again by the newest response').toMatchObject({ delisted: false, to: null });
      // The older response (delisted) holds from its known time, before the newer sync began,
      // until the newer one's row begins.
      const held = versions.at(-2)!;
      expect(held).toMatchObject({ delisted: true, to: current.from });
      expect(held.from < (await runStart(w, rb.runId)), `the older write's known time ${held.from} is before the newer sync began`).toBe(true);
      expect(versions.filter((v) => v.delisted)).toHaveLength(1);
      // T_as_of at every instant around the two: listed, delisted from the older response's known time, listed from the newer's.
      expect(await delistedAsOf(w, await shifted(w, held.from, '-1 microsecond'))).toBe(false);
      expect(await delistedAsOf(w, held.from)).toBe(true);
      expect(await delistedAsOf(w, await shifted(w, current.from, '-1 microsecond'))).toBe(true);
      expect(await delistedAsOf(w, current.from)).toBe(false);
      expect(await delistedAsOf(w, (await w.query<{ t: string }>(sql`select clock_timestamp()::text as t`))[0]!.t)).toBe(false);
      await expectNoOverlap(w);
    });
  }, patience(180_000));

  it('held after its responses were received, before its writes: written last, they are superseded, nothing of them written, each counted', async () => {
    await withWriters('received', async ({ w, older, holder }) => {
      const before = fx.sim.requests.length;
      fx.sim.setEpoch(1);
      const a = syncOnce(fx.sim, older, testLog.logger, { appKey }, ['app'], { full: true });
      a.catch(() => {});
      // Its token list received (epoch 1), its commit held as it dates the answer, before its turn on the resource.
      await waitFor(
        'the older writer held after reading its token list',
        async () => (fx.sim.requests.slice(before).some((r) => /\/tokens(\?|$)/.test(r.path) && r.status === 200) && ((await waiting(w)).find((x) => x.app === OLDER)?.n ?? 0) > 0) || undefined,
        60_000,
      );
      fx.sim.setEpoch(2);
      const rb = await syncOnce(fx.sim, w, testLog.logger, { appKey }, ['app'], { full: true });
      expect(rb.status).toBe('succeeded');
      const newer = await tokenVersions(w);
      await holder`select pg_advisory_unlock(${HOLD})`;
      const ra = await a;
      expect(ra.status).toBe('succeeded');
      expect(superseded(ra), 'the older sync: jobs superseded, by group').toMatchObject({ 'app.tokens': 1 });
      expect(superseded(rb)).toEqual({});

      // Nothing of the older token list: no delisting anywhere, the versions as the newer sync left them.
      expect(await tokenVersions(w)).toEqual(newer);
      expect(newer.some((v) => v.delisted)).toBe(false);
      const [state] = await w.query<{ run: string; received: boolean }>(sql`select last_run_id::text as run, received_at is not null as received from sync.resource_state where source = 'app' and resource = 'tokens'`);
      expect(state).toEqual({ run: rb.runId, received: true });
      await expectNoOverlap(w);
    });
  }, patience(180_000));
});
