// Folders for tests of the embedded Postgres server: traversable by the `postgres` system user
// (the server runs as it when tests run as root), and cleaned up with any server a failed test
// left running in them.
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

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

/** Fast shutdown of a postmaster (SIGINT), waiting up to 20 s for it to go. */
async function stopPid(pid: number): Promise<void> {
  if (!isAlive(pid)) return;
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  for (let i = 0; i < 200 && isAlive(pid); i++) await delay(100);
}
