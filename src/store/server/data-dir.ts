// TE_DATA_DIR, readied to hold the embedded server's folder, and what a folder that cannot hold
// it means to the user: a file system error (EROFS, EACCES, ENOTDIR, ...) deep in the start
// becomes one line naming TE_DATA_DIR, the path and the cause, so the fix (another folder, or a
// Postgres of one's own) is plain instead of a stack of Node errors.
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { ConfigError, WarehouseError } from '../../lib/errors.ts';

/** Makes the server's folder `root` and the ones above it: TE_DATA_DIR as any folder (the server's user must pass through it); its own folder private. */
export function prepareDataDir(root: string): void {
  makeFolders(path.dirname(root));
  makeFolders(root, 0o700);
  accessSync(root, constants.W_OK | constants.X_OK);
}

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
export function unusableDataDir(err: unknown, dataDir: string): Error | undefined {
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
