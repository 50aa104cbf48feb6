// The embedded backend: PGlite in a folder under TE_DATA_DIR, loaded by openWarehouse only
// when no DATABASE_URL is set. It runs on a thread of its own (pglite-client.ts) unless the
// caller needs the PGlite object itself (`tesync sql` hands it to the socket server).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql, type SQL } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import * as schema from '../../schema/warehouse/index.ts';
import { WarehouseError } from '../errors.ts';
import { MIGRATIONS_FOLDER, reason, rowsOf, type Db, type Warehouse } from './connection.ts';
import { PgliteThreadClient } from './pglite-client.ts';
import { addFreeSpaceMaps, INDEX_FILES_SQL, type IndexFile } from './pglite-fsm.ts';

/**
 * PGlite's own start parameters, and settings for a warehouse that takes large bulk writes.
 * PGlite runs Postgres in single-user mode, where the backend that writes also zero-fills
 * each new 16 MB WAL segment and runs every checkpoint itself, in the middle of a write;
 * all of it goes through WebAssembly's file layer, one system call per 8 kB page.
 * - wal_init_zero=off: a new segment is created at its size but not written with zeros
 *   (a 100-token first sync made ~65 of them: 1 GB of zeros).
 * - max_wal_size=2GB: half as many checkpoints, so fewer full-page images in the WAL and
 *   fewer pages written twice. Up to that much WAL can sit in pg_wal between checkpoints.
 * docs/performance.md has the figures.
 */
const PGLITE_START_PARAMS: readonly string[] = [...PGlite.defaultStartParams, '-c', 'wal_init_zero=off', '-c', 'max_wal_size=2GB'];

export async function openPglite(dataDir: string, inProcess: boolean): Promise<Warehouse> {
  const folder = path.resolve(dataDir, 'warehouse');
  const location = `embedded PGlite warehouse in ${folder}`;
  let client: PGlite;
  let embedded: PGlite | undefined;
  try {
    mkdirSync(folder, { recursive: true });
    if (inProcess) client = embedded = await PGlite.create(folder, { startParams: [...PGLITE_START_PARAMS] });
    else client = (await PgliteThreadClient.open(folder, PGLITE_START_PARAMS)).asPglite();
  } catch (err) {
    throw new WarehouseError(`cannot open ${location}: ${reason(err)}`);
  }
  const db = drizzlePglite({ client, schema }) as unknown as Db;
  return {
    kind: 'pglite',
    location,
    db,
    ...(embedded ? { embedded } : {}),
    query: async <T>(statement: SQL) => rowsOf<T>(await db.execute(statement)),
    // One process owns a PGlite folder, so no lock is needed.
    async migrate() {
      await migratePglite(drizzlePglite({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
      const indexes = rowsOf<IndexFile>(await db.execute(sql.raw(INDEX_FILES_SQL)));
      const [size] = rowsOf<{ n: string }>(await db.execute(sql`select current_setting('block_size') as n`));
      addFreeSpaceMaps(folder, indexes, Number(size!.n));
    },
    close: () => client.close(),
  };
}

