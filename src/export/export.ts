// `tesync export`: the warehouse out as Parquet (contract: "Out of Postgres: Parquet";
// docs/warehouse.md "Export"). Daily archives by day, each day written once and again only
// when its rows changed; the versioned tables as known at one instant (now, or `--as-of`),
// again only when their rows changed; history tables on request; `_manifest.json` beside them.
// Everything read from one snapshot, after the write barrier: every write known before the
// export's instant is in it.
//
// The folder never lies: whatever kills the export, the manifest matches the files. Files are
// written into a staging folder, moved in under names no earlier export used (never over a
// file), the manifest is renamed over the old one, and only then are the files it no longer
// names removed. A killed export's staging and files no manifest names are removed by the next.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, realpath, rename, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import type { Logger } from '../lib/logger.ts';
import { ARCHIVE_DAY_COLUMN } from '../schema/warehouse/columns.ts';
import { DAILY_ARCHIVE_NAMES, VERSIONED } from '../schema/warehouse/history.ts';
import type { Warehouse } from '../store/connection.ts';
import { readJournal } from '../store/schema/migration-state.ts';
import { inTypeWritten, quoteIdent, type ExportColumn } from './columns.ts';
import { daysToWrite } from './day-changes.ts';
import { FolderError, moveIn, ownFiles, removeFile, removeLeftovers, STAGING_PREFIX } from './folder.ts';
import { readInstant } from './instants.ts';
import { Lanes, LANES, splitDays } from './lanes.ts';
import { filePath, FORMAT, MANIFEST, ManifestError, manifestColumns, manifestText, parseManifest, sha256Of } from './manifest.ts';
import type { FileKind, Manifest, ManifestColumn, ManifestFile, ManifestTable } from './manifest.ts';
import type { WrittenFile } from './parquet.ts';
import { archiveColumns, archiveDays, describeRelation, exportColumns, exportSnapshot, snapshotHorizon } from './pg-read.ts';
import { chooseTables, type TableChoice } from './tables.ts';
import { transfer, type Reads } from './transfer.ts';

export interface ExportRequest {
  /** The export directory (created when missing). */
  to: string;
  /** An instant: the versioned tables as known then, instead of now. */
  asOf?: string;
  /** `schema.table` names: daily archives, versioned tables, `_history` tables. */
  tables?: readonly string[];
  /** The first day of the daily archives to write (YYYY-MM-DD). */
  since?: string;
  /** Write the folder anew from the warehouse, whatever its manifest says (files tesync did not write stay). */
  rebuild?: boolean;
  /** Told each step that changes the folder, as it is taken (progress; a test's kill points). */
  onStep?: (step: string) => void | Promise<void>;
}

export interface ExportedTable {
  table: string;
  kind: FileKind;
  asOf: string | null;
  /** Files written now. */
  files: number;
  rows: number;
  /** Archive days removed (the archive holds none of their rows any more). */
  removed: number;
  /** Archive days, or a whole table, left as written: their rows did not change. */
  unchanged: number;
}

export interface ExportSummary {
  dir: string;
  knownAt: string;
  tables: ExportedTable[];
  /** Files removed: no longer named by the manifest, or left by a killed export. */
  removedFiles: number;
}

/** A bad request (an unknown table, an instant after now, a manifest not understood): the command's exit code 2. */
export class ExportRequestError extends Error {
  override readonly name = 'ExportRequestError';
}

const nameOf = (t: PgTable) => `${getTableConfig(t).schema}.${getTableConfig(t).name}`;
const ISO = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const HIVE = ARCHIVE_DAY_COLUMN;
/** A day's rows at least, each, before the days of an archive are split between the lanes. */
const SPLIT_ROWS = 20_000;

/** What one table's export leaves: its files (kept and new), the new ones' staged copies, its summary. */
interface TableResult {
  summary: ExportedTable;
  files: ManifestFile[];
  staged: { from: string; rel: string }[];
  table: [string, ManifestTable];
  /** Whether an earlier entry is this table's, and so replaced by `files`. */
  covers: (f: ManifestFile) => boolean;
}

/** What the export knows of the folder before it writes: the manifest it can build on, and the files earlier exports wrote. */
interface Before {
  manifest: Manifest | null;
  /** Paths a manifest there names: tesync's to remove once no manifest names them. */
  named: string[];
}

export async function exportWarehouse(warehouse: Warehouse, logger: Logger, req: ExportRequest): Promise<ExportSummary> {
  await mkdir(req.to, { recursive: true });
  const root = await realpath(req.to);
  const step = async (s: string) => {
    await req.onStep?.(s);
  };
  const session = warehouse.session({ name: 'tesync export' });
  const id = randomBytes(6).toString('hex');
  const staging = path.join(root, `${STAGING_PREFIX}${id}`);
  let lanes: Lanes | undefined;
  /** Set while the folder is being changed (files moved in, the manifest replaced, files removed). */
  let changing = false;
  try {
    // One export into a directory at a time, whichever machine runs it.
    await session`select pg_advisory_lock(hashtextextended(${`tesync export ${root}`}, 0))`;
    const [db] = await session<{ id: string }[]>`select current_database() || '/' || (select oid from pg_database where datname = current_database())::text as id`;
    // Every write known before this instant has committed once the barrier is passed.
    const [k] = await session.begin(async (tx) => tx<{ iso: string }[]>`select to_char(at at time zone 'UTC', ${ISO}) as iso from (select "sync"."pass_write_barrier"() as at) b`);
    const knownAt = k!.iso;
    const asOf = req.asOf === undefined ? null : await instant(session, req.asOf, knownAt);
    const choices = chooseTables({ archives: DAILY_ARCHIVE_NAMES, versioned: VERSIONED.map(nameOf) }, { tables: req.tables ?? null, asOf, knownAt });
    if ('error' in choices) throw new ExportRequestError(choices.error);
    const schema = readJournal().at(-1)?.tag ?? '';
    const before = await readBefore(root, db!.id, req.rebuild === true);

    // What killed exports left: their staging, and (when there was such a kill, or the
    // manifest is not trusted) the files they moved in that no manifest names.
    const killed = (await removeLeftovers(root, path.basename(staging))) > 0;
    const strays = killed || before.manifest === null ? await ownFiles(root) : [];
    await mkdir(staging, { recursive: true });
    lanes = await Lanes.open();
    let results: TableResult[] = [];
    await session.begin('isolation level repeatable read read only', async (tx) => {
      const reads: Reads = { tx, snapshot: await exportSnapshot(tx), open: () => warehouse.session({ name: 'tesync export copy' }), lanes: lanes! };
      const ctx: TableContext = { reads, staging, id, knownAt, schema, step };
      const prev = before.manifest;
      // Tables side by side: while one waits on Postgres, another's rows are being written.
      results = await Promise.all(
        choices.map(async (choice) => {
          const done = choice.kind === 'archive' ? await exportArchive(ctx, choice.table, prev, req.since ?? null) : await exportWhole(ctx, choice, prev);
          logger.info({ ...done.summary }, 'exported');
          return done;
        }),
      );
    });

    // In place: the new files, then the manifest naming them, then the removals.
    changing = true;
    for (const s of results.flatMap((r) => r.staged).sort((a, b) => a.rel.localeCompare(b.rel))) {
      await moveIn(root, s.from, s.rel);
      await step(`moved ${s.rel}`);
    }
    const manifest = nextManifest(before.manifest, results, { database: db!.id, knownAt, schema });
    await writeManifest(root, id, manifest, step);
    const listed = new Set(manifest.files.map((f) => f.path));
    let removedFiles = 0;
    for (const rel of [...new Set([...before.named, ...strays])].sort()) {
      if (listed.has(rel)) continue;
      if (await removeFile(root, rel)) removedFiles++;
      await step(`removed ${rel}`);
    }
    changing = false;
    return { dir: root, knownAt, tables: results.map((r) => r.summary), removedFiles };
  } catch (err) {
    if (err instanceof FolderError) throw new ExportRequestError(`${err.message} (in ${root})`);
    throw err;
  } finally {
    lanes?.close();
    await rm(staging, { recursive: true, force: true });
    // A failed export may leave files no manifest names: its staging stays, empty, so that the
    // next export looks for them as after a kill.
    if (changing) await mkdir(staging).catch(() => {});
    await session.end({ timeout: 5 });
  }
}

/** `at` read as an instant (UTC unless it says otherwise), refused when after the export's instant or before anything was synced. */
async function instant(session: postgres.Sql, at: string, knownAt: string): Promise<string> {
  const read = readInstant(at);
  if ('error' in read) throw new ExportRequestError(`--as-of ${JSON.stringify(at)}: ${read.error}`);
  const [r] = await session<{ after: boolean; first: string | null; before: boolean | null }[]>`
    select ${read.iso}::timestamptz > ${knownAt}::timestamptz as after,
           to_char(f.first at time zone 'UTC', ${ISO}) as first, ${read.iso}::timestamptz < f.first as before
      from (select min(started_at) as first from sync.runs) f`;
  if (r!.after) throw new ExportRequestError(`--as-of ${read.iso} is after the warehouse's now (${knownAt}): what is known then is not known yet`);
  if (r!.first === null) throw new ExportRequestError(`--as-of ${read.iso}: nothing has been synced into this warehouse yet`);
  if (r!.before) throw new ExportRequestError(`--as-of ${read.iso} is before the first sync (${r!.first}): nothing was known then`);
  return read.iso;
}

/** The folder's manifest: the one to build on, or none (another database's, another layout's, or `--rebuild`); refused when not understood. */
async function readBefore(root: string, database: string, rebuild: boolean): Promise<Before> {
  let text: string;
  try {
    text = await readFile(path.join(root, MANIFEST), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { manifest: null, named: [] };
    throw err;
  }
  let m: ReturnType<typeof parseManifest>;
  try {
    m = parseManifest(text);
  } catch (err) {
    if (!(err instanceof ManifestError)) throw err;
    if (rebuild) return { manifest: null, named: [] };
    throw new ExportRequestError(
      `${path.join(root, MANIFEST)} cannot be read: ${err.message}. Nothing was written. \`tesync export --rebuild\` writes the folder anew from the warehouse, replaces the manifest and leaves files tesync did not write alone.`,
    );
  }
  const named = m.files.map((f) => f.path);
  if (rebuild || m.format !== FORMAT || (m as Manifest).database !== database) return { manifest: null, named };
  return { manifest: m as Manifest, named };
}

/** Pure: the manifest after this export: what it wrote or kept of each table it exported, and the rest as it was. */
function nextManifest(prev: Manifest | null, results: readonly TableResult[], at: { database: string; knownAt: string; schema: string }): Manifest {
  const covered = (f: ManifestFile) => results.some((r) => r.covers(f));
  const files = [...(prev?.files.filter((f) => !covered(f)) ?? []), ...results.flatMap((r) => r.files)].sort((a, b) => a.path.localeCompare(b.path));
  const tables = { ...(prev?.tables ?? {}), ...Object.fromEntries(results.map((r) => r.table)) };
  return { format: FORMAT, tesync: VERSION, schema: at.schema, database: at.database, knownAt: at.knownAt, files, tables };
}

/** The manifest written beside the old one and renamed over it. */
async function writeManifest(root: string, id: string, m: Manifest, step: (s: string) => Promise<void>): Promise<void> {
  const tmp = path.join(root, `.${MANIFEST}.${id}.tmp`);
  const text = Buffer.from(manifestText(m));
  const fh = await open(tmp, 'w');
  try {
    const half = Math.floor(text.length / 2);
    await fh.write(text.subarray(0, half));
    await step('manifest half written');
    await fh.write(text.subarray(half));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await step('manifest written');
  await rename(tmp, path.join(root, MANIFEST));
  await step('manifest in place');
}

/** What every table's export shares. */
interface TableContext {
  reads: Reads;
  staging: string;
  /** This export's name for its files (`part-<id>-<n>.parquet`). */
  id: string;
  knownAt: string;
  schema: string;
  step: (s: string) => Promise<void>;
}

/** A staged file's entry: hashed in staging, named for where it goes. */
async function stagedEntry(ctx: TableContext, from: string, e: Omit<ManifestFile, 'path' | 'sha256' | 'knownAt' | 'schema'>, n: number): Promise<{ entry: ManifestFile; staged: { from: string; rel: string } }> {
  const rel = filePath(e, `part-${ctx.id}-${n}.parquet`);
  const entry: ManifestFile = { path: rel, table: e.table, kind: e.kind, partition: e.partition, asOf: e.asOf, knownAt: ctx.knownAt, schema: ctx.schema, rows: e.rows, sha256: await sha256Of(from), columns: e.columns };
  return { entry, staged: { from, rel } };
}

/** Pure: the types every file of an archive was written in, or null when they differ (then every day is written again). */
function sharedTypes(files: readonly ManifestFile[]): Record<string, ManifestColumn> | null {
  const text = new Set(files.map((f) => JSON.stringify(f.columns)));
  return text.size === 1 ? files[0]!.columns : null;
}

/** A daily archive: the days new or changed since the last export, each day's file replaced. */
async function exportArchive(ctx: TableContext, table: string, m: Manifest | null, since: string | null): Promise<TableResult> {
  const { tx } = ctx.reads;
  const mine = (f: ManifestFile) => f.table === table && f.kind === 'archive';
  const prev = m?.files.filter(mine) ?? [];
  const horizon = (prev.length > 0 && m?.tables[table]?.horizon) || null;
  const { columns: source, comment } = await describeRelation(tx, table);
  const exported = new Map<string, number>();
  for (const f of prev) exported.set(f.partition!, (exported.get(f.partition!) ?? 0) + f.rows);
  const days = await archiveDays(tx, table, horizon);
  let toWrite = daysToWrite(days, exported, since, horizon === null);
  let columns = toWrite.write.length > 0 ? await archiveColumns(tx, table, toWrite.write, source) : [];
  // Every day of an archive shares one schema. The days written now go out in the types the
  // earlier days were written in when those hold their values (a decimal of a smaller scale);
  // otherwise the types come from the whole archive, and if those moved, every day is written
  // again.
  const types = prev.length > 0 ? sharedTypes(prev) : null;
  if (prev.length > 0 && toWrite.write.length > 0) {
    const kept = types ? columns.map((c) => inTypeWritten(c, types[c.name])) : [null];
    if (kept.every((c) => c !== null)) columns = kept as ExportColumn[];
    else {
      columns = await archiveColumns(tx, table, null, source);
      if (!types || columns.some((c) => types[c.name]?.type !== c.type)) toWrite = daysToWrite(days, exported, since, true);
    }
  } else if (prev.length > 0 && !types) {
    columns = await archiveColumns(tx, table, null, source);
    toWrite = daysToWrite(days, exported, since, true);
  }
  const rowsOf = new Map(days.map((d) => [d.day, d.rows]));
  const parts = splitDays(toWrite.write.map((day) => ({ day, rows: rowsOf.get(day) ?? 0 })), LANES, SPLIT_ROWS);
  const target = { path: path.join(ctx.staging, table), partitionBy: HIVE, metadata: metadata(table, comment, columns, ctx.knownAt) };
  const written = (
    await Promise.all(
      parts.map((part, i) =>
        transfer(ctx.reads, { columns, from: table, where: `${quoteIdent(HIVE)} = any('{${part.join(',')}}'::date[])`, target, scratch: path.join(ctx.staging, `${table}.${i}.csv`) }),
      ),
    )
  ).flat();
  const byDay = new Map<string, WrittenFile[]>(toWrite.write.map((day) => [day, []]));
  for (const f of written) {
    const day = f.path.split(/[\\/]/).find((p) => p.startsWith(`${HIVE}=`))?.slice(HIVE.length + 1);
    if (!day || !byDay.has(day)) throw new Error(`export of ${table}: DuckDB wrote ${f.path}, a day not asked for`);
    byDay.get(day)!.push(f);
  }
  // The files came from the snapshot the days were counted in: a day whose files hold another
  // count was not written whole, and nothing of this export is kept.
  for (const [day, fs] of byDay) {
    const n = fs.reduce((x, f) => x + f.rows, 0);
    if (n !== rowsOf.get(day)) throw new Error(`export of ${table}: ${day} was written with ${n} rows, the archive holds ${rowsOf.get(day) ?? 0}`);
  }
  const typesNow = manifestColumns(columns);
  const made = await inBatches(
    [...byDay].flatMap(([day, fs]) => fs.map((f, n) => ({ day, f, n }))),
    ({ day, f, n }) => stagedEntry(ctx, f.path, { table, kind: 'archive', partition: day, asOf: null, rows: f.rows, columns: typesNow }, n),
  );
  await ctx.step(`staged ${table}`);
  const touched = new Set([...toWrite.write, ...toWrite.remove]);
  const kept = prev.filter((f) => !touched.has(f.partition!));
  const inPlace = days.filter((d) => since === null || d.day >= since).length - toWrite.write.length;
  return {
    summary: { table, kind: 'archive', asOf: null, files: made.length, rows: written.reduce((n, f) => n + f.rows, 0), removed: toWrite.remove.length, unchanged: inPlace },
    files: [...kept, ...made.map((x) => x.entry)],
    staged: made.map((x) => x.staged),
    table: [table, { kind: 'archive', horizon: await snapshotHorizon(tx) }],
    covers: mine,
  };
}

/** A table written whole: a versioned table as known at an instant, or a history table; not again while its rows stay as they are. */
async function exportWhole(ctx: TableContext, choice: Exclude<TableChoice, { kind: 'archive' }>, m: Manifest | null): Promise<TableResult> {
  const { tx } = ctx.reads;
  const kind: FileKind = choice.kind === 'history' ? 'history' : choice.asOf === null ? 'current' : 'asOf';
  const mine = (f: ManifestFile) => f.table === choice.table && f.kind === kind && f.asOf === choice.asOf;
  const prev = m?.files.filter(mine) ?? [];
  const info: [string, ManifestTable] = [choice.table, { kind: choice.kind === 'history' ? 'history' : 'versioned' }];
  if (prev.length === 1 && prev[0]!.schema === ctx.schema && (await unchangedSince(tx, choice, prev[0]!))) {
    return { summary: { table: choice.table, kind, asOf: choice.asOf, files: 0, rows: 0, removed: 0, unchanged: 1 }, files: prev, staged: [], table: info, covers: mine };
  }
  const { columns: source, comment } = await describeRelation(tx, choice.kind === 'history' ? choice.table : choice.base);
  const from = choice.kind === 'history' ? choice.table : `${choice.base}_as_of('${choice.at}'::timestamptz) x`;
  const columns = await exportColumns(tx, from, source);
  const at = path.join(ctx.staging, choice.rel, 'data_0.parquet');
  await mkdir(path.dirname(at), { recursive: true });
  const target = { path: at, metadata: metadata(choice.table, comment, columns, choice.asOf ?? ctx.knownAt) };
  const written = await transfer(ctx.reads, { columns, from, where: null, target, scratch: path.join(ctx.staging, `${choice.rel.replaceAll('/', '_')}.csv`) });
  const rows = written.reduce((n, f) => n + f.rows, 0);
  const made = await stagedEntry(ctx, at, { table: choice.table, kind, partition: null, asOf: choice.asOf, rows, columns: manifestColumns(columns) }, 0);
  await ctx.step(`staged ${choice.rel}`);
  return { summary: { table: choice.table, kind, asOf: choice.asOf, files: 1, rows, removed: 0, unchanged: 0 }, files: [made.entry], staged: [made.staged], table: info, covers: mine };
}

/**
 * Whether a whole table's rows are still those of `prev`. Every write is known after the
 * export that read before it committed (the write barrier), and stamps what it changes with
 * that known time: a current row's `fetched_at`, a closed version's `known_to`. So the current
 * table is unchanged when no row or version is stamped after `prev.knownAt` and it holds as
 * many rows; a history table likewise. An as-of cut at an instant before `prev` was written
 * can only lose rows (history pruned, the warehouse reset), which its count shows.
 */
async function unchangedSince(tx: postgres.TransactionSql, choice: Exclude<TableChoice, { kind: 'archive' }>, prev: ManifestFile): Promise<boolean> {
  const k = prev.knownAt;
  const history = choice.kind === 'history' ? choice.table : `${choice.base}_history`;
  const closedSince = `exists (select from ${history} where tstzrange(known_from, known_to) && tstzrange($1::timestamptz, null))`;
  let query: string;
  if (choice.kind === 'history') query = `select (select count(*) from ${history})::text as n, ${closedSince} as changed`;
  else if (choice.asOf !== null) query = `select (select count(*) from ${choice.base}_as_of('${choice.at}'::timestamptz))::text as n, false as changed`;
  else query = `select (select count(*) from ${choice.base})::text as n, exists (select from ${choice.base} where fetched_at > $1::timestamptz) or ${closedSince} as changed`;
  const [r] = await tx.unsafe<{ n: string; changed: boolean }[]>(query, choice.kind === 'asOf' && choice.asOf !== null ? [] : [k]);
  return !r!.changed && Number(r!.n) === prev.rows;
}

/** `each` over `items`, a few at a time (file reads: the thread pool has four). */
async function inBatches<T, R>(items: readonly T[], each: (item: T) => Promise<R>, size = 8): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(each))));
  return out;
}

/** Pure: the key-value metadata of a table's files: what it is, when it was known, and its columns' descriptions. */
function metadata(table: string, comment: string | null, columns: readonly ExportColumn[], knownAt: string): Record<string, string> {
  const out: Record<string, string> = { 'tesync.table': table, 'tesync.version': VERSION, 'tesync.known_at': knownAt };
  if (comment) out['tesync.comment'] = comment;
  for (const c of columns) if (c.comment) out[`tesync.column.${c.name}`] = c.comment;
  return out;
}
