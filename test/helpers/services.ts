// Real services for tests: TEST_DATABASE_URL / TEST_REDIS_URL when set (CI and this
// machine), otherwise containers through testcontainers (a laptop with Docker).
// Each caller gets its own database / key prefix and removes it afterwards.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import postgres from 'postgres';
import { createLogger, type Logger } from '../../src/lib/logger.ts';
import { openWarehouse, type Warehouse } from '../../src/store/connection.ts';

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

/** A new, empty database on the test server; `drop()` removes it. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = await postgresServerUrl();
  const name = uniqueName('tesync_test');
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
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

/** A fresh, migrated Postgres warehouse. */
export async function createTestWarehouse(): Promise<TestWarehouse> {
  const database = await createTestDatabase();
  // Test files run side by side on one Postgres: a smaller pool than a process's default.
  const warehouse = await openWarehouse({ databaseUrl: database.databaseUrl, dataDir: '', maxConnections: 5 });
  await warehouse.migrate();
  return {
    warehouse,
    databaseUrl: database.databaseUrl,
    async cleanup() {
      await warehouse.close();
      await database.drop();
    },
  };
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
