// A PgBouncer of the test's own (Debian's `pgbouncer`), in front of the tests' Postgres
// (TEST_DATABASE_URL): a child process on a free port, its configuration in a temporary folder,
// in the pool mode the test asks for. PgBouncer refuses to run as root: as root it runs as the
// `postgres` system user (`-u postgres`), which reads its folder (mode 755, files 644). It logs
// to stderr, kept for a failure's message. Missing, it fails the test with what to install.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import postgres from 'postgres';
import { freePort } from './own-servers.ts';
import { patience } from './patience.ts';

export type PoolMode = 'session' | 'transaction';

export interface OwnPgbouncer {
  readonly mode: PoolMode;
  readonly port: number;
  /** The URL of database `name` through this PgBouncer (no password: it logs in to Postgres itself). */
  urlOf(name: string): string;
  /** What it logged (its last 8 KB). */
  output(): string;
  /** Stops it and removes its folder; safe to call more than once. */
  cleanup(): Promise<void>;
}

/** pgbouncer on PATH, or in /usr/sbin (Debian's, off a non-root PATH). */
function pgbouncerBinary(): string {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin']) {
    if (!dir) continue;
    const file = path.join(dir, 'pgbouncer');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  throw new Error("this test needs `pgbouncer`, which is not installed: install Debian's pgbouncer (apt-get install pgbouncer), which .ci/run installs when it is missing");
}

/** A value of pgbouncer.ini's connection strings, quoted when it needs to be. */
const iniValue = (v: string) => (/^[\w.-]*$/.exec(v) !== null ? v : `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);

/** Starts a PgBouncer in `mode` in front of the server of `serverUrl` (every database on it). */
export async function startOwnPgbouncer(mode: PoolMode, serverUrl: string): Promise<OwnPgbouncer> {
  const bin = pgbouncerBinary();
  const server = new URL(serverUrl);
  const dir = mkdtempSync(path.join(tmpdir(), `tesync-pgbouncer-${mode}-`));
  chmodSync(dir, 0o755);
  const port = await freePort();
  // auth_type = any: clients log in as anyone, without a password; PgBouncer logs in to
  // Postgres as the test server's own user.
  const login = [`user=${iniValue(decodeURIComponent(server.username || 'postgres'))}`, ...(server.password ? [`password=${iniValue(decodeURIComponent(server.password))}`] : [])];
  const ini = [
    '[databases]',
    `* = host=${server.hostname} port=${server.port || '5432'} ${login.join(' ')}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = any',
    `pool_mode = ${mode}`,
    // Every tesync process of a test beside the workers' pools: room for all, as in production.
    'max_client_conn = 400',
    'default_pool_size = 40',
    '',
  ].join('\n');
  const file = path.join(dir, 'pgbouncer.ini');
  writeFileSync(file, ini, { mode: 0o644 });
  const args = [...(userInfo().uid === 0 ? ['-u', 'postgres'] : []), file];
  let output = '';
  const child: ChildProcess = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (d: Buffer) => (output = (output + d.toString()).slice(-8000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const killOnExit = () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', killOnExit);
  const cleanup = async () => {
    if (alive()) child.kill('SIGTERM');
    const gone = await Promise.race([exited.then(() => true), delay(patience(5000)).then(() => false)]);
    if (!gone) {
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
    process.removeListener('exit', killOnExit);
  };
  const urlOf = (name: string) => `postgres://tesync@127.0.0.1:${port}/${encodeURIComponent(name)}`;
  // Ready when a query goes through it to Postgres.
  const deadline = Date.now() + patience(10_000);
  for (;;) {
    if (!alive()) {
      await cleanup();
      throw new Error(`pgbouncer (${mode} mode) on port ${port} exited before it answered:\n${output}`);
    }
    const probe = postgres(urlOf(decodeURIComponent(server.pathname.slice(1)) || 'postgres'), { max: 1, onnotice: () => {}, connect_timeout: 2, prepare: false });
    try {
      await probe`select 1`;
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        await cleanup();
        throw new Error(`pgbouncer (${mode} mode) on port ${port} did not pass a query within ${patience(10_000)} ms (${(err as Error).message}):\n${output}`);
      }
      await delay(50);
    } finally {
      await probe.end({ timeout: 1 }).catch(() => {});
    }
  }
  return { mode, port, urlOf, output: () => output, cleanup };
}
