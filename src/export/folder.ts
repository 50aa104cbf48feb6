// The export folder as input: every path `tesync export` writes or removes is checked to lie
// inside it before it is touched, whatever a manifest (anyone's to edit) says. A path is
// understood only in the layout tesync writes (manifest.ts `filePathParts`: relative, no `..`,
// no absolute part), and no folder on the way to it may be a symbolic link, which could lead
// out. Files tesync did not write are never removed: only those a manifest named, those named
// as tesync names its own (`part-<export>-<n>.parquet`) in the folders it writes, and the
// staging a killed export left.
import { lstat, mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { filePathParts, MANIFEST, OWN_FILE } from './manifest.ts';

/** A path the export will not touch: the folder (or a manifest) points it outside. */
export class FolderError extends Error {
  override readonly name = 'FolderError';
}

/** Where an export stages what it writes before moving it in; one per export. */
export const STAGING_PREFIX = '.tesync-staging-';
const MANIFEST_TMP = new RegExp(`^\\.${MANIFEST.replace('.', '\\.')}\\..+\\.tmp$`);

/** Whether `rel` (from the folder, `/`-separated) exists, and every folder on the way to it is a real folder inside `root`. */
async function checkWay(root: string, rel: string): Promise<void> {
  const parts = rel.split('/');
  let at = root;
  for (const [i, p] of parts.entries()) {
    if (p === '' || p === '.' || p === '..' || p.includes('\\') || p.includes('\0')) throw new FolderError(`${rel}: not a path inside the export folder`);
    at = path.join(at, p);
    let s;
    try {
      s = await lstat(at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    if (s.isSymbolicLink()) throw new FolderError(`${rel}: ${parts.slice(0, i + 1).join('/')} is a symbolic link; the export writes and removes only inside its folder`);
    if (i < parts.length - 1 && !s.isDirectory()) throw new FolderError(`${rel}: ${parts.slice(0, i + 1).join('/')} is not a folder`);
  }
}

/** `rel` as an absolute path inside `root`, checked to be a file path tesync writes there. */
export async function insideFile(root: string, rel: string): Promise<string> {
  if (!filePathParts(rel)) throw new FolderError(`${JSON.stringify(rel)}: not a file path an export writes inside its folder`);
  const abs = path.resolve(root, rel);
  if (!abs.startsWith(root + path.sep)) throw new FolderError(`${JSON.stringify(rel)}: outside the export folder`);
  await checkWay(root, rel);
  return abs;
}

/** Moves a staged file to `rel` in `root`, after checking `rel`. It never replaces a file. */
export async function moveIn(root: string, staged: string, rel: string): Promise<void> {
  const abs = await insideFile(root, rel);
  await mkdir(path.dirname(abs), { recursive: true });
  await checkWay(root, rel);
  try {
    await lstat(abs);
    throw new FolderError(`${rel} is there already; an export never writes over a file`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await rename(staged, abs);
}

/** Removes the file `rel` in `root` when it is there, then its folders left empty, up to the table's. */
export async function removeFile(root: string, rel: string): Promise<boolean> {
  const abs = await insideFile(root, rel);
  try {
    const s = await lstat(abs);
    if (!s.isFile()) return false;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  await rm(abs);
  for (let dir = path.dirname(abs); dir.startsWith(root + path.sep); dir = path.dirname(dir)) {
    try {
      await rmdir(dir);
    } catch {
      break; // not empty (a file of someone's, or the table's other days): it stays
    }
  }
  return true;
}

/**
 * The files tesync named as its own under `root` (`part-<export>-<n>.parquet`, in the layout it
 * writes), whether or not a manifest names them: what a killed export moved in before its
 * manifest. Symbolic links are not followed.
 */
export async function ownFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string, depth: number): Promise<void> => {
    if (depth > 3) return;
    let entries;
    try {
      entries = await readdir(rel === '' ? root : path.join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) await walk(r, depth + 1);
      else if (e.isFile() && OWN_FILE.test(e.name) && filePathParts(r)) out.push(r);
    }
  };
  await walk('', 0);
  return out;
}

/** Removes what killed exports left at the top of `root`: staging folders and half-written manifests. */
export async function removeLeftovers(root: string, except: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(root, { withFileTypes: true })) {
    const stale = (e.isDirectory() && e.name.startsWith(STAGING_PREFIX) && e.name !== except) || (e.isFile() && MANIFEST_TMP.test(e.name));
    if (!stale) continue;
    await rm(path.join(root, e.name), { recursive: true, force: true });
    n++;
  }
  return n;
}
