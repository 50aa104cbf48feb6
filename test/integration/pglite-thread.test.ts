// The embedded warehouse on its own thread: drizzle's transactions commit and roll back as
// on in-process PGlite, Postgres errors keep their fields, and a transaction is isolated from
// statements sent while it is open (PGlite has one session: they wait for it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { PgliteThreadClient, RAW_TYPES } from '../../src/warehouse/pglite-client.ts';

let dir: string;
let w: Warehouse;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tesync-pglite-thread-'));
  w = await openWarehouse({ dataDir: dir });
  await w.query(sql`create table t (k int primary key, v numeric not null)`);
});
afterAll(async () => {
  await w?.close();
  rmSync(dir, { recursive: true, force: true });
});

const values = async () => (await w.query<{ k: number; v: string }>(sql`select k, v::text as v from t order by k`)).map((r) => [Number(r.k), r.v]);

describe('PGlite on its own thread', () => {
  it('is not exposed as an in-process object', () => {
    expect(w.kind).toBe('pglite');
    expect(w.embedded).toBeUndefined();
  });

  it('starts Postgres with the bulk-write settings, on the thread and in-process alike', async () => {
    const settings = async (x: Warehouse) =>
      (await x.query<{ name: string; setting: string; unit: string | null }>(sql`select name, setting, unit from pg_settings where name in ('wal_init_zero', 'max_wal_size', 'search_path') order by name`)).map((r) => `${r.name}=${r.setting}${r.unit ?? ''}`);
    // PGlite's own defaults (search_path) are kept beside ours.
    const expected = ['max_wal_size=2048MB', 'search_path=public', 'wal_init_zero=off'];
    expect(await settings(w)).toEqual(expected);
    const inProcessDir = mkdtempSync(path.join(tmpdir(), 'tesync-pglite-inprocess-'));
    const inProcess = await openWarehouse({ dataDir: inProcessDir, embeddedInProcess: true });
    try {
      expect(await settings(inProcess)).toEqual(expected);
    } finally {
      await inProcess.close();
      rmSync(inProcessDir, { recursive: true, force: true });
    }
  });

  it('returns what in-process PGlite returns to drizzle: dates and timestamps as their text, other types parsed', async () => {
    // The thread installs drizzle's text-as-is types once (RAW_TYPES) instead of per query.
    const probe = sql`select '2026-01-02 03:04:05.123456+00'::timestamptz as tstz, '2026-01-02 03:04:05.5'::timestamp as ts, '2026-01-02'::date as d,
      '1 day 02:03:04'::interval as iv, array['2026-01-02 03:04:05.1+00'::timestamptz, null] as tstzs, array['2026-01-02'::date] as ds,
      array[1.50, 2]::numeric[] as nums, 12.30::numeric as num, 7::int as i, 9007199254740993::bigint as big, true as b, '{"a": [1, "x"]}'::jsonb as j,
      array['a', 'b,c']::text[] as texts, '00000000-0000-4000-8000-000000000001'::uuid as u`;
    const threadRows = await w.db.execute(probe);
    const inProcessDir = mkdtempSync(path.join(tmpdir(), 'tesync-pglite-inprocess-'));
    const inProcess = await openWarehouse({ dataDir: inProcessDir, embeddedInProcess: true });
    try {
      const inProcessRows = await inProcess.db.execute(probe);
      expect((threadRows as unknown as { rows: unknown[] }).rows).toEqual((inProcessRows as unknown as { rows: unknown[] }).rows);
      expect((threadRows as unknown as { rows: Record<string, unknown>[] }).rows[0]).toMatchObject({ tstz: '2026-01-02 03:04:05.123456+00', d: '2026-01-02', i: 7, b: true, j: { a: [1, 'x'] } });
    } finally {
      await inProcess.close();
      rmSync(inProcessDir, { recursive: true, force: true });
    }
  });

  it('refuses a query that asks other types as text than the thread gives so', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'tesync-pglite-client-'));
    const client = await PgliteThreadClient.open(folder, PGlite.defaultStartParams);
    try {
      await expect(client.query('select 1', [], { parsers: { 25: (x: unknown) => x } })).rejects.toThrow(/gives types 1082, .* as text, and only those; a query asked for 25/);
      const asDrizzle = Object.fromEntries(RAW_TYPES.map((oid) => [oid, (x: unknown) => x]));
      expect(await client.query("select '2026-01-02'::date as d", [], { parsers: asDrizzle })).toMatchObject({ rows: [{ d: '2026-01-02' }] });
    } finally {
      await client.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('commits a transaction whose callback returns, and keeps decimals exact', async () => {
    const out = await w.db.transaction(async (tx) => {
      await tx.execute(sql`insert into t values (1, '12345678901234567890.123456789012345678')`);
      return 'done';
    });
    expect(out).toBe('done');
    expect(await values()).toEqual([[1, '12345678901234567890.123456789012345678']]);
  });

  it('rolls back a transaction whose callback throws, or that calls rollback', async () => {
    await expect(
      w.db.transaction(async (tx) => {
        await tx.execute(sql`insert into t values (2, 2)`);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await w.db
      .transaction(async (tx) => {
        await tx.execute(sql`insert into t values (3, 3)`);
        tx.rollback();
      })
      .catch(() => {});
    expect(await values()).toEqual([[1, '12345678901234567890.123456789012345678']]);
  });

  it('a Postgres error keeps its code, and the session is usable after it', async () => {
    // drizzle wraps it (as it does in-process); the cause is Postgres' own error.
    const err = (await w.query(sql`insert into t values (1, 1)`).catch((e: unknown) => e)) as Error & { cause?: Error & { code?: string; constraint?: string } };
    expect(err).toBeInstanceOf(Error);
    expect(err.cause?.code).toBe('23505');
    expect(err.cause?.constraint).toBe('t_pkey');
    expect(err.cause?.message).toMatch(/duplicate key/);
    expect(await values()).toHaveLength(1);
  });

  it('a statement sent while a transaction is open waits for it and sees its result', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const tx = w.db.transaction(async (t) => {
      await t.execute(sql`insert into t values (4, 4)`);
      await held;
      await t.execute(sql`update t set v = 40 where k = 4`);
    });
    await new Promise((r) => setTimeout(r, 50));
    const outside = w.query<{ v: string }>(sql`select v::text as v from t where k = 4`);
    release();
    await tx;
    expect(await outside).toEqual([{ v: '40' }]);
  });

  it("a transaction's statements sent before its BEGIN ran wait for it, not running in the transaction ahead", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = w.db.transaction(async (t) => {
      await t.execute(sql`insert into t values (5, 5)`);
      await held;
      await t.execute(sql`update t set v = 50 where k = 5`);
    });
    await new Promise((r) => setTimeout(r, 50));
    // The second transaction's BEGIN waits for the first; its statements are sent at once.
    const second = w.db.transaction(async (t) => {
      const [a, b] = await Promise.all([t.execute(sql`insert into t values (6, 6)`), t.execute(sql`select v::text as v from t where k = 5`)]);
      expect(a).toBeDefined();
      return b;
    });
    await new Promise((r) => setTimeout(r, 50));
    release();
    await first;
    // Run in the first transaction, the select would have seen 5; the insert would have been
    // committed with it even if the second rolled back.
    expect((await second) as unknown).toMatchObject({ rows: [{ v: '50' }] });
    expect((await values()).filter(([k]) => k === 6)).toEqual([[6, '6']]);
    await expect(
      w.db.transaction(async (t) => {
        await Promise.all([t.execute(sql`insert into t values (7, 7)`), t.execute(sql`insert into t values (7, 70)`)]);
      }),
    ).rejects.toThrow();
    expect((await values()).filter(([k]) => k === 7)).toEqual([]);
  });

  it('a closed warehouse refuses statements with a clear error', async () => {
    const other = await openWarehouse({ dataDir: path.join(dir, 'other') });
    await other.close();
    const err = (await other.query(sql`select 1`).catch((e: unknown) => e)) as Error;
    expect(String((err.cause as Error | undefined)?.message)).toMatch(/closed/);
  });
});

describe('the PGlite thread and the process', () => {
  it('a process that never closes its idle warehouse still exits', async () => {
    const { execFileSync } = await import('node:child_process');
    const script = `
      import { openWarehouse } from './src/warehouse/connection.ts';
      import { sql } from 'drizzle-orm';
      const w = await openWarehouse({ dataDir: process.argv[1] });
      const [row] = await w.query(sql\`select 41 + 1 as n\`);
      console.log(row.n);`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, path.join(dir, 'unclosed')], { timeout: 30_000, encoding: 'utf8' });
    expect(out.trim()).toBe('42');
  });
});
