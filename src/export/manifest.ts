// `_manifest.json`: what an export directory holds, for the notebook that reads it and for the
// next export, which writes only what changed. Written whole, after the files it lists, and
// replaced in one rename: a reader never sees a manifest naming a file not yet in place.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ExportColumn } from './columns.ts';

export const MANIFEST = '_manifest.json';
/** The layout's version: an export of another writes everything again. */
export const FORMAT = 1;

export interface ManifestFile {
  /** Relative to the export directory, with `/`. */
  path: string;
  table: string;
  /** A daily archive's day (YYYY-MM-DD); null for a table written whole. */
  partition: string | null;
  /** The instant an as-of cut was read at; null for the current tables and the archives. */
  asOf: string | null;
  rows: number;
  sha256: string;
}

export interface ManifestColumn {
  sourceType: string;
  type: string;
  precision?: number;
  scale?: number;
  /** A numeric column written as text: some value does not fit DECIMAL(38,s), or is NaN or infinite. */
  asString?: boolean;
}

export interface ManifestTable {
  columns: Record<string, ManifestColumn>;
  /** Daily archives: the snapshot the export that last read it read in (`pg_current_snapshot()`). */
  horizon?: string;
}

export interface Manifest {
  format: number;
  tesync: string;
  /** The newest migration of the warehouse's schema. */
  schema: string;
  /** Which database the files came from: an export into a directory of another writes everything again. */
  database: string;
  /** The known-time instant of the last export: every write known before it is in what it wrote. */
  knownAt: string;
  files: ManifestFile[];
  tables: Record<string, ManifestTable>;
}

/** The manifest in `dir`, or null when there is none (or one of another layout or database). */
export async function readManifest(dir: string, database: string): Promise<Manifest | null> {
  let text: string;
  try {
    text = await readFile(path.join(dir, MANIFEST), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const m = JSON.parse(text) as Manifest;
  return m.format === FORMAT && m.database === database && Array.isArray(m.files) ? m : null;
}

export async function writeManifest(dir: string, m: Manifest): Promise<void> {
  const tmp = path.join(dir, `.${MANIFEST}.${process.pid}.tmp`);
  await writeFile(tmp, `${JSON.stringify(m, null, 2)}\n`);
  await rename(tmp, path.join(dir, MANIFEST));
}

/** Pure: a table's columns as the manifest lists them. */
export function manifestColumns(columns: readonly ExportColumn[]): Record<string, ManifestColumn> {
  return Object.fromEntries(
    columns.map((c) => [c.name, { sourceType: c.sourceType, type: c.type, ...(c.numeric ? { precision: c.numeric.precision, scale: c.numeric.scale, asString: c.numeric.asString } : {}) }]),
  );
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
