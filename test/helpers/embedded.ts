// Folders for tests of the embedded Postgres server: traversable by the `postgres` system user
// (the server runs as it when tests run as root), and cleaned up with any server a failed test
// left running in them. A test that wants a server ready to use, not to see one made, gets a
// copy of a seed folder: initialised once per code state, with a migrated template database.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { acquireEmbeddedServer, type EmbeddedServer } from '../../src/store/server/embedded-server.ts';
import { patience } from './patience.ts';
import { createDatabaseOn, migrateDatabaseAt, migrationsDigest, TEST_RUN_VARIABLE } from './services.ts';

const run = promisify(execFile);

export interface TempFolder {
  dir: string;
  /** Stops servers left running under it, then removes it. */
  cleanup(): Promise<void>;
}

export async function embeddedFolder(prefix: string): Promise<TempFolder> {
  const dir = await mkdtemp(path.join(tmpdir(), `${prefix}-`));
  await chmod(dir, 0o755);
  return {
    dir,
    async cleanup() {
      for (const pid of await serverPids(dir)) await stopPid(pid);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Postmaster pids of the embedded servers under a folder (postgres/data/postmaster.pid), alive or not. */
export async function serverPids(dir: string, depth = 4): Promise<number[]> {
  const out: number[] = [];
  const walk = async (d: string, left: number): Promise<void> => {
    let entries: { name: string; isDirectory(): boolean }[];
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const full = path.join(d, e.name);
      if (e.name === 'data' && path.basename(d) === 'postgres') {
        const pid = Number((await readFile(path.join(full, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
        if (pid > 0) out.push(pid);
      } else if (left > 0) await walk(full, left - 1);
    }
  };
  await walk(dir, depth);
  return out;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Fast shutdown of a postmaster (SIGINT), waiting up to patience(20 s) for it to go. */
async function stopPid(pid: number): Promise<void> {
  if (!isAlive(pid)) return;
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  const deadline = Date.now() + patience(20_000);
  while (isAlive(pid) && Date.now() < deadline) await delay(100);
}

/** The migrated database in a seeded folder: `CREATE DATABASE ... TEMPLATE` copies it. */
export const SEED_TEMPLATE = 'tesync_template';

const SEED_PREFIX = 'tesync-seed-';

/**
 * An embedded folder (as embeddedFolder makes) holding a stopped server that its first
 * acquireEmbeddedServer starts: initialised, with an empty `tesync` database and the migrated
 * SEED_TEMPLATE. A copy of the seed, which initdb and the migrations made once for the code as
 * it is: a test pays a copy and a start instead (seconds less each time).
 */
export async function seededFolder(prefix: string): Promise<TempFolder> {
  const seed = await ensureSeed();
  const folder = await embeddedFolder(prefix);
  try {
    // -a: as root the server's files belong to the `postgres` system user, and must stay so.
    await run('cp', ['-a', `${seed}/.`, folder.dir]);
  } catch (err) {
    await folder.cleanup();
    throw err;
  }
  return folder;
}

/**
 * Seeds are named by the checkout, the test run (global-setup.ts) and the code state: another
 * checkout's are never touched, and neither are those of another run in the same checkout
 * (people run single files there while a whole suite runs, and each run removes its own).
 */
function seedNames(): { dir: string; ofThisCheckout: string; ofThisRun: string } {
  const checkout = createHash('sha256').update(new URL('../../', import.meta.url).pathname).digest('hex').slice(0, 8);
  const ofThisCheckout = `${SEED_PREFIX}${checkout}-`;
  const ofThisRun = `${ofThisCheckout}${process.env[TEST_RUN_VARIABLE] ?? 'solo'}-`;
  const settings = createHash('sha256').update(SEED_SETTINGS).digest('hex').slice(0, 4);
  return { dir: path.join(tmpdir(), `${ofThisRun}${migrationsDigest()}-${settings}`), ofThisCheckout, ofThisRun };
}

/** Seeds of other runs older than this were left by runs that never reached their teardown. */
const LEFT_BEHIND_MS = 24 * 3600_000;

/**
 * The seed folder, made when missing: by one test process at a time (a lock folder holding its
 * pid; a dead holder's lock is taken over), built aside and renamed into place whole, so that
 * a copy never sees half a seed. Making it removes this run's seeds of earlier code states, and
 * seeds left behind by runs that ended without their teardown.
 */
async function ensureSeed(): Promise<string> {
  const { dir, ofThisCheckout, ofThisRun } = seedNames();
  const lock = `${dir}.lock`;
  const deadline = Date.now() + patience(120_000);
  for (;;) {
    if (existsSync(dir)) return dir;
    try {
      mkdirSync(lock);
    } catch {
      const holder = lockHolder(lock);
      if (holder > 0 && !isAlive(holder)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`the embedded seed ${dir} was not made within ${patience(120_000)} ms (lock ${lock} held by pid ${holder})`);
      await delay(200);
      continue;
    }
    try {
      writeFileSync(path.join(lock, 'pid'), String(process.pid));
      if (existsSync(dir)) return dir;
      for (const old of readdirSync(tmpdir()).filter((n) => n.startsWith(ofThisRun) || (n.startsWith(ofThisCheckout) && leftBehind(n)))) rmSync(path.join(tmpdir(), old), { recursive: true, force: true });
      const building = await embeddedFolder(`${path.basename(dir)}-building`);
      try {
        await makeSeed(building.dir);
        renameSync(building.dir, dir);
      } catch (err) {
        await building.cleanup();
        // Another process took over a lock it found dead and made the seed first.
        if (!existsSync(dir)) throw err;
      }
      return dir;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

/** Removes this run's seeds (the global teardown: a test run leaves no folder behind). */
export function removeSeeds(): void {
  const { ofThisRun } = seedNames();
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(ofThisRun))) rmSync(path.join(tmpdir(), name), { recursive: true, force: true });
}

function leftBehind(name: string): boolean {
  try {
    return Date.now() - statSync(path.join(tmpdir(), name)).mtimeMs > LEFT_BEHIND_MS;
  } catch {
    return false;
  }
}

/** The pid in a seed's lock; 0 while its holder has yet to write it. */
function lockHolder(lock: string): number {
  try {
    return Number(readFileSync(path.join(lock, 'pid'), 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

async function makeSeed(dir: string): Promise<void> {
  const server = await acquireEmbeddedServer(dir);
  try {
    await migrateDatabaseAt(await createDatabaseOn(server.url, SEED_TEMPLATE));
  } finally {
    // The last user: the server stops (a clean shutdown, nothing for a copy to recover).
    await server.release();
  }
  // Its log is of no use to a copy.
  const log = path.join(dir, 'postgres', 'log');
  for (const f of readdirSync(log)) rmSync(path.join(log, f), { force: true });
  // A copy lives for one test file and dies with its folder: nothing it writes has to survive
  // a crash of the machine, so no commit, CREATE DATABASE or checkpoint of it waits for the disk.
  appendFileSync(path.join(dir, 'postgres', 'data', 'postgresql.auto.conf'), SEED_SETTINGS);
}

/** What the seed's servers run with beyond tesync's own settings (the file keeps its owner). */
const SEED_SETTINGS = 'fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n';

/** The database a running embedded server answers a query in: that it answers, and as whom. */
export async function answers(server: EmbeddedServer): Promise<string> {
  const sql = postgres(server.url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ db: string }[]>`select current_database() as db`;
    return row!.db;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
