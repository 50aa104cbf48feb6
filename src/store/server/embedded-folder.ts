// The embedded server's folder, TE_DATA_DIR/postgres, and how many commands share it: where each
// file lives, the folder lock that makes start and stop safe when commands race, and the `users/`
// files (one per command, named by its pid) by which the last to leave knows to stop the server.
// A lock or user file of a process that died is cleared, so a crash never blocks the next command.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { WarehouseError } from '../../lib/errors.ts';

const LOCK_WAIT_MS = 120_000;

export interface Layout {
  root: string;
  data: string;
  log: string;
  users: string;
  lock: string;
  password: string;
  port: string;
}

export function layoutOf(dataDir: string): Layout {
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

/** The running server as its postmaster.pid describes it. */
export interface ServerState {
  pid: number;
  /** The port it listens on (postmaster.pid's fourth line). */
  port: number | undefined;
  /** `starting`, `ready`, `stopping` or `standby` (the eighth line; '' where it has none). */
  status: string;
}

/** The postmaster as postmaster.pid describes it, when that process is alive. */
export function serverState(l: Layout): ServerState | null {
  try {
    const lines = readFileSync(path.join(l.data, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    if (!(Number.isInteger(pid) && pid > 0 && alive(pid))) return null;
    const port = Number(lines[3]);
    return { pid, port: Number.isInteger(port) && port > 0 ? port : undefined, status: (lines[7] ?? '').trim() };
  } catch {
    return null;
  }
}

/** The postmaster's pid from postmaster.pid, when that process is alive. */
export function serverPid(l: Layout): number | null {
  return serverState(l)?.pid ?? null;
}

export function liveUsers(l: Layout): string[] {
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

/**
 * Runs `fn` holding the folder's lock: a directory made atomically, holding its owner's pid. A
 * lock whose owner died is taken over.
 */
export async function withLock<T>(l: Layout, fn: () => Promise<T>): Promise<T> {
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
