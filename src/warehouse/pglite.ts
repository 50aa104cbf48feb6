// The embedded backend: PGlite in a folder under TE_DATA_DIR, loaded by openWarehouse only
// when no DATABASE_URL is set. It runs on a thread of its own (pglite-client.ts) unless the
// caller needs the PGlite object itself (`tesync sql` hands it to the socket server).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { SQL } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import * as schema from '../../schema/warehouse/index.ts';
import { WarehouseError } from '../errors.ts';
import { MIGRATIONS_FOLDER, reason, rowsOf, type Db, type Warehouse } from './connection.ts';
import { PgliteThreadClient } from './pglite-client.ts';

export async function openPglite(dataDir: string, inProcess: boolean): Promise<Warehouse> {
  const folder = path.resolve(dataDir, 'warehouse');
  const location = `embedded PGlite warehouse in ${folder}`;
  let client: PGlite;
  let embedded: PGlite | undefined;
  try {
    mkdirSync(folder, { recursive: true });
    if (inProcess) client = embedded = await PGlite.create(folder);
    else client = (await PgliteThreadClient.open(folder)).asPglite();
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
    migrate: () => migratePglite(drizzlePglite({ client }), { migrationsFolder: MIGRATIONS_FOLDER }),
    close: () => client.close(),
  };
}

