import path from 'node:path';
import { is, sql } from 'drizzle-orm';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as warehouseSchema from '../../src/schema/warehouse/index.ts';
import { openWarehouse, type Warehouse } from '../../src/store/connection.ts';
import { runCli } from '../helpers/cli.ts';
import { embeddedFolder, type TempFolder } from '../helpers/embedded.ts';
import { useTestDatabase } from '../helpers/mirror-fixture.ts';

// The sync schema's tables as declared (src/schema/warehouse/), each declared once: the
// migrations must create exactly those.
const SYNC_TABLES = (Object.values(warehouseSchema) as unknown[])
  .filter((t): t is PgTable => is(t, PgTable))
  .map((t) => getTableConfig(t))
  .filter((c) => c.schema === 'sync')
  .map((c) => c.name)
  .sort();

async function describeWarehouse(w: Warehouse) {
  const schemas = await w.query<{ name: string }>(
    sql`select schema_name as name from information_schema.schemata where schema_name in ('sync','app','gateway') order by 1`,
  );
  const tables = await w.query<{ name: string }>(
    sql`select table_name as name from information_schema.tables where table_schema = 'sync' order by 1`,
  );
  return { schemas: schemas.map((r) => r.name), syncTables: tables.map((r) => r.name) };
}

describe('migrations on Postgres', () => {
  // Empty: the processes opened on it below migrate it, all at once.
  const db = useTestDatabase();

  it('creates the three schemas and the sync tables, idempotently, even when processes race', async () => {
    const warehouses = await Promise.all([1, 2, 3].map(() => openWarehouse({ databaseUrl: db.databaseUrl, dataDir: '' })));
    try {
      // Three processes starting at once must not trip over each other.
      await Promise.all(warehouses.map((w) => w.migrate()));
      await warehouses[0]!.migrate();
      const d = await describeWarehouse(warehouses[0]!);
      expect(d.schemas).toEqual(['app', 'gateway', 'sync']);
      expect(d.syncTables).toEqual(SYNC_TABLES);
      const applied = await warehouses[0]!.query<{ n: string }>(sql`select count(*)::text as n from drizzle.__drizzle_migrations`);
      expect(Number(applied[0]!.n)).toBeGreaterThan(0);
    } finally {
      await Promise.all(warehouses.map((w) => w.close()));
    }
  });

  it('`tesync migrate` exits 0 twice against DATABASE_URL', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await runCli(['migrate'], { DATABASE_URL: db.databaseUrl });
      expect(r.stderr).not.toMatch(/error/i);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Migrations applied to Postgres at 127.0.0.1');
    }
  });

  it('says which database it could not reach, without its password, exit 1', async () => {
    const r = await runCli(['migrate'], { DATABASE_URL: 'postgres://postgres:canarypw12345@127.0.0.1:1/nowhere' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot reach Postgres at 127.0.0.1:1/nowhere');
    expect(r.stderr + r.stdout).not.toContain('canarypw12345');
  });
});

describe('migrations on the embedded Postgres server', () => {
  let folder: TempFolder;
  beforeAll(async () => {
    folder = await embeddedFolder('tesync-embedded');
  });
  afterAll(async () => {
    await folder?.cleanup();
  });

  it('creates the same schemas and tables, keeps them across reopen, and keeps numerics exact', async () => {
    const w = await openWarehouse({ dataDir: folder.dir });
    expect(w.kind).toBe('embedded');
    await w.migrate();
    await w.migrate();
    expect(await describeWarehouse(w)).toEqual({ schemas: ['app', 'gateway', 'sync'], syncTables: SYNC_TABLES });
    const [row] = await w.query<{ v: unknown }>(sql`select '123456789012345678901234.567890123456'::numeric as v`);
    expect(row!.v).toBe('123456789012345678901234.567890123456');
    await w.close();

    const again = await openWarehouse({ dataDir: folder.dir });
    expect((await describeWarehouse(again)).syncTables).toEqual(SYNC_TABLES);
    await again.close();
  });

  it('`tesync migrate` with no DATABASE_URL uses TE_DATA_DIR', async () => {
    const dataDir = path.join(folder.dir, 'cli');
    const r = await runCli(['migrate'], { TE_DATA_DIR: dataDir }, { timeoutMs: 120_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`the embedded Postgres server in ${path.join(dataDir, 'postgres')}`);
    const w = await openWarehouse({ dataDir });
    expect((await describeWarehouse(w)).schemas).toEqual(['app', 'gateway', 'sync']);
    await w.close();
  });
});
