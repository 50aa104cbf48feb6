// Real services for tests: TEST_DATABASE_URL / TEST_REDIS_URL when set (CI and this
// machine), otherwise containers through testcontainers (a laptop with Docker).
// Each caller gets its own database / key prefix and removes it afterwards.
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import postgres from 'postgres';
import { createLogger, type Logger } from '../../src/lib/logger.ts';
import { openWarehouse, type Warehouse } from '../../src/store/connection.ts';
import { claimSpare, handBack, keeperRuns, settleDatabase } from './spare-databases.ts';

const PG_IMAGE = 'postgres:15-alpine';
const REDIS_IMAGE = 'redis:7-alpine';

let containerPg: Promise<string> | undefined;
let containerRedis: Promise<string> | undefined;

/** The admin URL of a Postgres server the tests may create databases on. */
async function postgresServerUrl(): Promise<string> {
  const fromEnv = process.env.TEST_DATABASE_URL;
  if (fromEnv) return fromEnv;
  containerPg ??= (async () => {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const c = await new PostgreSqlContainer(PG_IMAGE).start();
    return c.getConnectionUri();
  })();
  return containerPg;
}

export async function redisServerUrl(): Promise<string> {
  const fromEnv = process.env.TEST_REDIS_URL;
  if (fromEnv) return fromEnv;
  containerRedis ??= (async () => {
    const { RedisContainer } = await import('@testcontainers/redis');
    const c = await new RedisContainer(REDIS_IMAGE).start();
    return c.getConnectionUrl();
  })();
  return containerRedis;
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export interface TestDatabase {
  databaseUrl: string;
  name: string;
  drop(): Promise<void>;
}

/** The databases copied from a migrated template start with this (global-setup.ts drops the templates). */
export const TEMPLATE_PREFIX = 'tesync_tpl_';

// Any fixed 64-bit number: the test processes making the template take it in turn.
const TEMPLATE_LOCK = 7_281_190_437_355_299n;

/** Every file under `dir`, recursively, in a stable order. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f)) : [join(dir, f)]));
}

/**
 * What a migration reads (migrations, SQL files, declarations), as 16 hex digits: what names a
 * migrated template for the code as it is (here, and the embedded server's in embedded.ts).
 */
export function migrationsDigest(): string {
  const root = new URL('../../', import.meta.url).pathname;
  const hash = createHash('sha256');
  for (const dir of ['drizzle', 'src/store/sql', 'src/schema/warehouse']) for (const f of filesUnder(join(root, dir))) hash.update(f).update(readFileSync(f));
  return hash.digest('hex').slice(0, 16);
}

/**
 * The template for the code as it is, of this test run: two suites on one server (a developer's
 * and CI's) each make and drop their own, never the other's. global-setup.ts names the run.
 */
function templateName(): string {
  return `${TEMPLATE_PREFIX}${migrationsDigest()}_${process.env[TEST_RUN_VARIABLE] ?? 'solo'}`;
}

/** Names the test run whose templates a database was copied from (set by global-setup.ts). */
export const TEST_RUN_VARIABLE = 'TESYNC_TEST_RUN';

const isCode = (err: unknown, code: string) => (err as { code?: string }).code === code;

/** The URL of database `name` on the server at `serverUrl`. */
export function databaseUrlOn(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Creates database `name` on the server at `serverUrl` (a copy of `template` when given); returns its URL. */
export async function createDatabaseOn(serverUrl: string, name: string, template?: string): Promise<string> {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"${template ? ` template "${template}"` : ''}`);
  } finally {
    await admin.end();
  }
  return databaseUrlOn(serverUrl, name);
}

/** Migrates the database at `databaseUrl` as tesync does, and closes it. */
export async function migrateDatabaseAt(databaseUrl: string): Promise<void> {
  const warehouse = await openWarehouse({ databaseUrl, dataDir: '', maxConnections: 2 });
  try {
    await warehouse.migrate();
  } finally {
    await warehouse.close();
  }
}

/**
 * Makes the migrated template once per code state, for every test process (the first one
 * to take the lock migrates it; the others find it). Migrating a database costs about a
 * second; copying the template a tenth of that.
 */
async function ensureTemplate(serverUrl: string, name: string): Promise<void> {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin`select pg_advisory_lock(${TEMPLATE_LOCK.toString()}::bigint)`;
    const [exists] = await admin`select 1 from pg_database where datname = ${name}`;
    if (exists) return;
    await admin.unsafe(`create database "${name}"`);
    await migrateDatabaseAt(databaseUrlOn(serverUrl, name));
  } finally {
    await admin`select pg_advisory_unlock(${TEMPLATE_LOCK.toString()}::bigint)`.catch(() => {});
    await admin.end();
  }
}

/** Makes sure the migrated template of this run exists on the server at `serverUrl`; returns its name. */
export async function migratedTemplate(serverUrl: string): Promise<string> {
  const name = templateName();
  await ensureTemplate(serverUrl, name);
  return name;
}

/**
 * A new database on the test server; `drop()` removes it. Empty, or (`migrated`) a copy of
 * a database tesync has migrated, as `migrate()` leaves it. Under vitest it is a spare the
 * global setup's keeper made ahead, and `drop()` hands it back to the keeper
 * (spare-databases.ts): the waits on the disk happen beside the tests, not in them.
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const serverUrl = await postgresServerUrl();
  const name = uniqueName('tesync_test');
  const run = process.env[TEST_RUN_VARIABLE] ?? 'solo';
  const kept = keeperRuns(serverUrl);
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    if (kept && (await claimSpare(admin, run, options.migrated ? 'migrated' : 'empty', name))) {
      // Claimed: made and settled by the keeper.
    } else if (!options.migrated) {
      await admin.unsafe(`create database "${name}"`);
      await settleDatabase(admin, name);
    } else {
      const template = templateName();
      for (let attempt = 1; ; attempt++) {
        try {
          await ensureTemplate(serverUrl, template);
          await admin.unsafe(`create database "${name}" template "${template}"`);
          break;
        } catch (err) {
          // The template's maker has not quite left it (55006), or another run dropped it (3D000).
          if (attempt >= 20 || !(isCode(err, '55006') || isCode(err, '3D000'))) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await settleDatabase(admin, name);
    }
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    databaseUrl: url.toString(),
    name,
    async drop() {
      const a = postgres(serverUrl, { max: 1, onnotice: () => {} });
      try {
        // A session still open on it (a child process on its way out): dropped here, with force.
        if (kept && (await handBack(a, run, name))) return;
        await a.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await a.end();
      }
    },
  };
}

export interface TestWarehouse {
  warehouse: Warehouse;
  databaseUrl: string;
  cleanup(): Promise<void>;
}

/**
 * The URL of a connection to the same database whose server clock reads `offset` (an SQL
 * interval, e.g. '-3 days') away from the real one: known time, on that connection, as a
 * server whose clock is off would give it (src/store/sql/history.sql). For syncs days apart.
 */
export function withServerClockOffset(databaseUrl: string, offset: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('tesync.clock_offset', offset);
  return url.toString();
}

/** A fresh, migrated Postgres warehouse (a copy of the template; `migrate()` finds it in step). */
export async function createTestWarehouse(): Promise<TestWarehouse> {
  return warehouseIn(await createTestDatabase({ migrated: true }));
}

/**
 * A warehouse opened in `db` and migrated (`migrate: false`: left as it is), dropped with it
 * afterwards, or at once when that fails. Test files run side by side on one Postgres: a pool
 * of 5 connections unless `maxConnections` says otherwise, smaller than a process's default.
 */
export async function warehouseIn(db: TestDatabase, options: { migrate?: boolean; maxConnections?: number } = {}): Promise<TestWarehouse> {
  try {
    const warehouse = await openWarehouse({ databaseUrl: db.databaseUrl, dataDir: '', maxConnections: options.maxConnections ?? 5 });
    if (options.migrate !== false) await warehouse.migrate();
    return {
      warehouse,
      databaseUrl: db.databaseUrl,
      async cleanup() {
        await warehouse.close();
        await db.drop();
      },
    };
  } catch (err) {
    await db.drop().catch(() => {});
    throw err;
  }
}

export interface TestLogger {
  logger: Logger;
  /** Every line written so far, as written (after redaction). */
  lines(): string[];
}

/** A logger that keeps every line, so tests can grep what would have been logged. */
export function createTestLogger(secrets: readonly string[] = [], level = 'debug'): TestLogger {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString('utf8'));
      cb();
    },
  });
  const logger = createLogger({ level, secrets, destination });
  return { logger, lines: () => chunks.join('').split('\n').filter(Boolean) };
}

/** A canary key: if it shows up anywhere it should not, a test greps it out. */
export function canaryKey(label: string): string {
  return `te_canary_${label}_${randomBytes(12).toString('hex')}`;
}
