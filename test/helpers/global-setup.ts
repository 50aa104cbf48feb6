// Runs once around the test files: fail fast, with a clear message, when a required service is
// missing, instead of letting every file time out; and at the end, fail the run if the
// machine's Postgres or Redis was stopped, restarted or flushed while it ran. Tests that need a
// server to fail start their own (test/helpers/own-servers.ts); nothing in `npm test` may
// touch the ones it was given.
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { randomBytes } from 'node:crypto';
import { compiledBin } from './compiled-bin.ts';
import { removeSeeds } from './embedded.ts';
import { migratedTemplate, TEMPLATE_PREFIX, TEST_RUN_VARIABLE } from './services.ts';
import { KEEPER_VARIABLE, startKeeper } from './spare-databases.ts';

interface Servers {
  /** pg_postmaster_start_time(): changes when the server restarts. */
  postgres?: string;
  /** Redis `run_id`: a new one at every start; and its keys' count in db 0 is not checked (tests add and remove their own). */
  redis?: string;
}

async function postgresStart(url: string): Promise<string> {
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    const [row] = await sql<{ t: string }[]>`select pg_postmaster_start_time()::text as t`;
    return row!.t;
  } catch (err) {
    throw new Error(`TEST_DATABASE_URL is set but Postgres cannot be reached: ${(err as Error).message}`);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function redisRunId(url: string): Promise<string> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000, retryStrategy: () => null });
  try {
    await redis.connect();
    const info = await redis.info('server');
    const id = /^run_id:(\S+)/m.exec(info)?.[1];
    if (!id) throw new Error('INFO server has no run_id');
    return id;
  } catch (err) {
    throw new Error(`TEST_REDIS_URL is set but Redis cannot be reached: ${(err as Error).message}`);
  } finally {
    redis.disconnect();
  }
}

async function servers(): Promise<Servers> {
  const out: Servers = {};
  // Unset: testcontainers starts servers of the suite's own, which are no one else's.
  if (process.env.TEST_DATABASE_URL) out.postgres = await postgresStart(process.env.TEST_DATABASE_URL);
  if (process.env.TEST_REDIS_URL) out.redis = await redisRunId(process.env.TEST_REDIS_URL);
  return out;
}

/** Drops the migrated templates this run's test databases were copied from (services.ts). */
async function dropTemplates(url: string, run: string): Promise<void> {
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    const templates = await sql<{ datname: string }[]>`select datname from pg_database where datname like ${`${TEMPLATE_PREFIX}%_${run}`}`;
    for (const t of templates) await sql.unsafe(`drop database if exists "${t.datname}" with (force)`);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export default async function setup(): Promise<() => Promise<void>> {
  const before = await servers();
  // The `tesync` the tests start, compiled once here rather than by the first files at once.
  compiledBin();
  // The test processes inherit it: the templates they make are this run's alone.
  const run = (process.env[TEST_RUN_VARIABLE] ??= randomBytes(4).toString('hex'));
  // Test databases made and dropped beside the tests (spare-databases.ts); the test processes
  // inherit the variable that says so.
  const serverUrl = process.env.TEST_DATABASE_URL;
  const keeper = serverUrl ? startKeeper(serverUrl, run, () => migratedTemplate(serverUrl)) : undefined;
  if (serverUrl) process.env[KEEPER_VARIABLE] = serverUrl;
  return async () => {
    await keeper?.stop();
    if (serverUrl) await dropTemplates(serverUrl, run);
    removeSeeds();
    const after = await servers();
    const changed: string[] = [];
    if (before.postgres !== after.postgres) changed.push(`Postgres at TEST_DATABASE_URL restarted (started ${before.postgres}, now ${after.postgres})`);
    if (before.redis !== after.redis) changed.push(`Redis at TEST_REDIS_URL restarted (run_id ${before.redis}, now ${after.redis})`);
    if (changed.length === 0) return;
    // Vitest reports an error thrown here but still exits 0: fail the run ourselves.
    console.error(`npm test must leave the machine's servers untouched: ${changed.join('; ')}`);
    process.exitCode = 1;
    throw new Error(`npm test must leave the machine's servers untouched: ${changed.join('; ')}`);
  };
}
