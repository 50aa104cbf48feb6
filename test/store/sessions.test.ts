// Sessions past a pooler (issue 60 item 3), against real PgBouncers of the test's own in front of
// the tests' Postgres, in session and in transaction mode: judgeSessions tells a direct
// connection, a session pooler and a transaction pooler apart; openWarehouse refuses a
// transaction pooler without TE_DATABASE_SESSION_URL (a ConfigError naming it and the fix),
// and with it sends sessions (locks, LISTEN) there and the rest through the pooler, whose pool
// survives many statements at once (postgres.js pipelines them; PgBouncer 1.18 loses the
// answer of one pipelined behind another, and the query never returns).
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/lib/errors.ts';
import { openWarehouse, type Warehouse } from '../../src/store/connection.ts';
import { judgeSessions } from '../../src/store/sessions.ts';
import { startOwnPgbouncer, type OwnPgbouncer } from '../helpers/own-pgbouncer.ts';
import { patience } from '../helpers/patience.ts';
import { useTestDatabase } from '../helpers/mirror-fixture.ts';

const db = useTestDatabase({ migrated: true });
const other = useTestDatabase();
let transaction: OwnPgbouncer;
let session: OwnPgbouncer;

beforeAll(async () => {
  [transaction, session] = await Promise.all([startOwnPgbouncer('transaction', db.databaseUrl), startOwnPgbouncer('session', db.databaseUrl)]);
}, patience(60_000));

afterAll(async () => {
  await Promise.allSettled([transaction?.cleanup(), session?.cleanup()]);
}, patience(30_000));

const open = (databaseUrl: string, sessionUrl?: string) => openWarehouse({ databaseUrl, sessionUrl, dataDir: '', maxConnections: 2 });

describe('judgeSessions', () => {
  it('a direct connection, a session pooler and a transaction pooler', async () => {
    expect(await judgeSessions(db.databaseUrl)).toEqual({ kind: 'direct' });
    expect(await judgeSessions(session.urlOf(db.name))).toEqual({ kind: 'session pooler' });
    expect(await judgeSessions(transaction.urlOf(db.name))).toMatchObject({ kind: 'shared' });
  });
});

describe('openWarehouse past a pooler', () => {
  it('refuses a transaction pooler without TE_DATABASE_SESSION_URL, naming it and the fix', async () => {
    const err = await open(transaction.urlOf(db.name)).then(
      async (w) => {
        await w.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe('TE_DATABASE_SESSION_URL');
    expect((err as ConfigError).message).toMatch(/pool_mode = transaction .*Set TE_DATABASE_SESSION_URL to a direct URL of the same database.*or use the pooler's session mode/);
  });

  it('refuses a session URL that is a transaction pooler too, or another database', async () => {
    await expect(open(transaction.urlOf(db.name), transaction.urlOf(db.name))).rejects.toThrow(/^TE_DATABASE_SESSION_URL: reaches Postgres at 127\.0\.0\.1:\d+\/\S+ through a pooler that shares server sessions/);
    await expect(open(transaction.urlOf(db.name), other.databaseUrl)).rejects.toThrow(/^TE_DATABASE_SESSION_URL: reaches another database than DATABASE_URL/);
  });

  it('a session pooler is a session: everything through it, as directly', async () => {
    const w = await open(session.urlOf(db.name));
    try {
      expect(w.sessions).toMatchObject({ variable: 'DATABASE_URL', pool: { kind: 'session pooler' } });
      await w.migrate();
    } finally {
      await w.close();
    }
  });

  describe('a transaction pooler with TE_DATABASE_SESSION_URL', () => {
    let w: Warehouse;
    beforeAll(async () => {
      w = await open(transaction.urlOf(db.name), db.databaseUrl);
    });
    afterAll(async () => {
      await w?.close();
    });

    it('holds its sessions directly: a lock and a LISTEN on the session URL', async () => {
      expect(w.sessions).toEqual({ url: db.databaseUrl, variable: 'TE_DATABASE_SESSION_URL' });
      const got: string[] = [];
      const s = w.session({ name: 'tesync sessions test', onNotify: (_c, payload) => got.push(payload) });
      try {
        const [me] = await s<{ pid: number }[]>`select pg_backend_pid() as pid`;
        await s`select pg_advisory_lock(60, 3)`;
        await s`listen tesync_sessions_test`;
        // Seen from the pool (through PgBouncer): held by the direct session, named as it was.
        const [holder] = await w.query<{ pid: number; name: string }>(sql`
          select l.pid, a.application_name as name from pg_locks l join pg_stat_activity a using (pid)
          where l.locktype = 'advisory' and l.classid = 60 and l.objid = 3 and l.objsubid = 2 and l.granted and l.database = (select oid from pg_database where datname = current_database())`);
        expect(holder).toEqual({ pid: me!.pid, name: 'tesync sessions test' });
        await w.query(sql`select pg_notify('tesync_sessions_test', 'through the pool')`);
        for (const until = Date.now() + patience(5000); got.length === 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
        expect(got).toEqual(['through the pool']);
      } finally {
        await s.end({ timeout: 1 });
      }
    });

    it('migrates under its lock, and its pool answers many statements at once', async () => {
      await w.migrate();
      // More at once than the pool has connections, some with a parameter (its type asked
      // first, with no Sync behind: what PgBouncer 1.18 loses when it comes pipelined behind a
      // statement without one), round after round: each answered.
      const round = (i: number) =>
        Promise.all([w.query(sql.raw('select 1')), w.query(sql.raw('select 2')), w.query(sql`select ${i}::int as x`), w.query(sql.raw('select 3')), w.query(sql`select ${String(i)}::text as y`)]);
      const rounds = (async () => {
        for (let i = 0; i < 50; i++) await round(i);
      })();
      await Promise.race([rounds, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('a statement through the transaction pooler never returned')), patience(15_000)))]);
      // Transactions too, side by side.
      const counts = await Promise.all(Array.from({ length: 10 }, (_, i) => w.db.transaction(async (tx) => (await tx.execute(sql`select ${i}::int as i`)) as unknown)));
      expect(counts).toHaveLength(10);
    });
  });
});
