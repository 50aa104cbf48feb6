// `_manifest.json`: what an export directory holds, for the notebook that reads it and for the
// next export, which writes only what changed. It names only files already in place, each with
// its own rows, sha256 and types; it is written to a temporary file and renamed over the old
// one, so a reader (or a kill) never meets a manifest half written or naming a file not there.
//
// The manifest is also input: the next export reads it back, and a folder is anyone's to edit.
// It is understood or refused whole (`parseManifest`): every entry's path must be one tesync
// writes (relative, inside the folder, in the layout below), and a manifest that is not is
// reported, never guessed at.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { ExportColumn } from './columns.ts';

export const MANIFEST = '_manifest.json';
/**
 * The layout's version. 2: each file names its own types and kind, files are named by the
 * export that wrote them (`part-<export>-<n>.parquet`). A manifest of format 1 is read only for
 * the files it names, which the next export replaces.
 */
export const FORMAT = 2;

/**
 * What a file holds: a daily archive's day; a versioned table as known at the export's instant
 * (`current`) or at an `--as-of` instant (`asOf`); a history table's versions.
 */
export type FileKind = 'archive' | 'current' | 'asOf' | 'history';

export interface ManifestColumn {
  sourceType: string;
  type: string;
  precision?: number;
  scale?: number;
  /** A numeric column written as text: some value does not fit DECIMAL(38,s), or is NaN or infinite. */
  asString?: boolean;
}

export interface ManifestFile {
  /** Relative to the export directory, with `/`. */
  path: string;
  table: string;
  kind: FileKind;
  /** A daily archive's day (YYYY-MM-DD); null for a table written whole. */
  partition: string | null;
  /** The instant an as-of cut was read at; null for every other kind. */
  asOf: string | null;
  /** The known-time instant the file's rows were read as known at (the export that wrote it). */
  knownAt: string;
  /** The newest migration of the warehouse's schema when the file was written. */
  schema: string;
  rows: number;
  sha256: string;
  /** The file's columns, as written in it. */
  columns: Record<string, ManifestColumn>;
}

export interface ManifestTable {
  kind: 'archive' | 'versioned' | 'history';
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
  /** The known-time instant of the last export: every write known before it is in what it lists. */
  knownAt: string;
  files: ManifestFile[];
  tables: Record<string, ManifestTable>;
}

const TABLE = '[a-z][a-z0-9_]*\\.[a-z][a-z0-9_]*';
const DAY = '\\d{4}-\\d{2}-\\d{2}';
const INSTANT = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z';
/** Every file path tesync writes: `[asof=<instant>/]<schema.table>/[snapshot_date=<day>/]<name>.parquet`. */
const FILE_PATH = new RegExp(`^(?:asof=(${INSTANT})/)?(${TABLE})/(?:snapshot_date=(${DAY})/)?([A-Za-z0-9_-]+(?:\\.[A-Za-z0-9_-]+)*\\.parquet)$`);
/** The name this version of tesync gives the files it writes. */
export const OWN_FILE = /^part-[0-9a-f]{12}-\d+\.parquet$/;

/** Pure: the parts of a file path tesync writes, or null when `rel` is not one. */
export function filePathParts(rel: string): { asOf: string | null; table: string; partition: string | null; name: string } | null {
  const m = FILE_PATH.exec(rel);
  if (!m) return null;
  return { asOf: m[1] ?? null, table: m[2]!, partition: m[3] ?? null, name: m[4]! };
}

/** Pure: where a file of `table` goes, named `name`. */
export function filePath(f: { table: string; partition: string | null; asOf: string | null }, name: string): string {
  return `${f.asOf ? `asof=${f.asOf}/` : ''}${f.table}/${f.partition ? `snapshot_date=${f.partition}/` : ''}${name}`;
}

/** A manifest tesync could not read: what is wrong with it, for the message that says what to do. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
}

/**
 * Pure: `text` read as a manifest. Returns the manifest (its files all in the layout above) or
 * throws `ManifestError` naming the first thing not understood. A manifest of format 1 comes
 * back as `{ format: 1, files }` with the paths it names (each checked the same way), for the
 * export that replaces them.
 */
export function parseManifest(text: string): Manifest | { format: 1; files: { path: string }[] } {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch (err) {
    throw new ManifestError(`it is not JSON (${(err as Error).message})`);
  }
  if (!isObject(m)) throw new ManifestError('it is not a JSON object');
  if (!Array.isArray(m.files)) throw new ManifestError('"files" is not a list');
  const files = m.files.map((f, i) => checkFile(f, i, m.format === 1));
  if (m.format === 1) return { format: 1, files: files.map((f) => ({ path: f.path })) };
  if (m.format !== FORMAT) throw new ManifestError(`its format is ${JSON.stringify(m.format)}; this tesync writes ${FORMAT}`);
  for (const k of ['tesync', 'schema', 'database', 'knownAt'] as const) if (typeof m[k] !== 'string') throw new ManifestError(`"${k}" is not a string`);
  if (!isObject(m.tables)) throw new ManifestError('"tables" is not an object');
  const tables: Record<string, ManifestTable> = {};
  for (const [name, t] of Object.entries(m.tables)) {
    if (!new RegExp(`^${TABLE}$`).test(name) || !isObject(t) || !['archive', 'versioned', 'history'].includes(t.kind as string) || (t.horizon !== undefined && typeof t.horizon !== 'string')) {
      throw new ManifestError(`its table ${JSON.stringify(name)} is not one tesync describes`);
    }
    tables[name] = { kind: t.kind as ManifestTable['kind'], ...(t.horizon !== undefined ? { horizon: t.horizon as string } : {}) };
  }
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new ManifestError(`it names ${f.path} twice`);
    seen.add(f.path);
  }
  return { format: FORMAT, tesync: m.tesync as string, schema: m.schema as string, database: m.database as string, knownAt: m.knownAt as string, files: files as ManifestFile[], tables };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const KINDS: readonly FileKind[] = ['archive', 'current', 'asOf', 'history'];

/** Pure: entry `i`, understood whole (only its path, for a manifest of format 1), or a `ManifestError`. */
function checkFile(f: unknown, i: number, pathOnly: boolean): ManifestFile {
  const refuse = (what: string) => new ManifestError(`its file ${i + 1} ${what}`);
  if (!isObject(f) || typeof f.path !== 'string') throw refuse('has no path');
  const parts = filePathParts(f.path);
  if (!parts) throw refuse(`has the path ${JSON.stringify(f.path)}, not one an export writes inside its folder`);
  if (pathOnly) return f as unknown as ManifestFile;
  if (f.table !== parts.table || f.partition !== parts.partition || f.asOf !== parts.asOf) throw refuse(`(${f.path}): its table, partition or asOf is not its path's`);
  const kindFits =
    (f.kind === 'archive' && parts.partition !== null) ||
    (f.kind === 'asOf' && parts.asOf !== null) ||
    ((f.kind === 'current' || f.kind === 'history') && parts.partition === null && parts.asOf === null);
  if (!KINDS.includes(f.kind as FileKind) || !kindFits) throw refuse(`(${f.path}): its kind ${JSON.stringify(f.kind)} is not its path's`);
  if (typeof f.knownAt !== 'string' || typeof f.schema !== 'string') throw refuse(`(${f.path}): knownAt or schema is not a string`);
  if (!Number.isSafeInteger(f.rows) || (f.rows as number) < 0) throw refuse(`(${f.path}): rows is not a count`);
  if (typeof f.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(f.sha256)) throw refuse(`(${f.path}): sha256 is not a hash`);
  if (!isObject(f.columns) || !Object.values(f.columns).every((c) => isObject(c) && typeof c.sourceType === 'string' && typeof c.type === 'string')) {
    throw refuse(`(${f.path}): its columns are not described`);
  }
  return f as unknown as ManifestFile;
}

/** Pure: the manifest's text: the top level spread out, one line per file (a reader's diff stays readable). */
export function manifestText(m: Manifest): string {
  const { files, ...top } = m;
  const head = JSON.stringify({ ...top, files: [] }, null, 2);
  const list = files.map((f) => `    ${JSON.stringify(f)}`).join(',\n');
  return `${head.replace(/"files": \[\]/, files.length > 0 ? `"files": [\n${list}\n  ]` : '"files": []')}\n`;
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
