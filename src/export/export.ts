// `tesync export`: the warehouse out as Parquet (contract: "Out of Postgres: Parquet";
// docs/warehouse.md "Export"). Daily archives by day, each day written once and again only
// when its rows changed; the versioned tables as known at one instant (now, or `--as-of`);
// history tables on request; `_manifest.json` beside them. Everything read from one snapshot,
// after the write barrier: every write known before the export's instant is in it.
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import type { Logger } from '../lib/logger.ts';
import { ARCHIVE_DAY_COLUMN } from '../schema/warehouse/columns.ts';
import { DAILY_ARCHIVE_NAMES, VERSIONED } from '../schema/warehouse/history.ts';
import type { Warehouse } from '../store/connection.ts';
import { readJournal } from '../store/schema/migration-state.ts';
import { inTypeWritten, type ExportColumn } from './columns.ts';
import { planDays } from './day-changes.ts';
import { FORMAT, manifestColumns, readManifest, sha256Of, writeManifest, type Manifest } from './manifest.ts';
import { Lanes, LANES, splitDays } from './lanes.ts';
import type { ParquetWriter, WrittenFile } from './parquet.ts';
import { archiveDays, copyCsv, describeRelation, exportColumns, exportSnapshot, snapshotHorizon } from './pg-read.ts';
import { planTables, type TablePlan } from './tables.ts';

export interface ExportRequest {
  /** The export directory (created when missing). */
  to: string;
  /** An instant: the versioned tables as known then, instead of now. */
  asOf?: string;
  /** `schema.table` names: daily archives, versioned tables, `_history` tables. */
  tables?: readonly string[];
  /** The first day of the daily archives to write (YYYY-MM-DD). */
  since?: string;
}

export interface ExportedTable {
  table: string;
  asOf: string | null;
  /** Files written now. */
  files: number;
  rows: number;
  /** Archive days removed (the archive holds none of their rows any more), and left as written. */
  removed: number;
  unchanged: number;
}

export interface ExportSummary {
  dir: string;
  knownAt: string;
  tables: ExportedTable[];
}

/** A bad request (an unknown table, an instant after now): the command's exit code 2. */
export class ExportRequestError extends Error {
  override readonly name = 'ExportRequestError';
}

const nameOf = (t: PgTable) => `${getTableConfig(t).schema}.${getTableConfig(t).name}`;
const ISO = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export async function exportWarehouse(warehouse: Warehouse, logger: Logger, req: ExportRequest): Promise<ExportSummary> {
  const dir = path.resolve(req.to);
  await mkdir(dir, { recursive: true });
  const session = warehouse.session({ name: 'tesync export' });
  const staging = path.join(dir, `.tesync-staging-${process.pid}-${Date.now()}`);
  let lanes: Lanes | undefined;
  try {
    // One export into a directory at a time, whichever machine runs it.
    await session`select pg_advisory_lock(hashtextextended(${`tesync export ${dir}`}, 0))`;
    const [db] = await session<{ id: string }[]>`select current_database() || '/' || (select oid from pg_database where datname = current_database())::text as id`;
    // Every write known before this instant has committed once the barrier is passed.
    const [k] = await session.begin(async (tx) => tx<{ at: string; iso: string }[]>`select at::text, to_char(at at time zone 'UTC', ${ISO}) as iso from (select "sync"."pass_write_barrier"() as at) b`);
    const knownAt = k!.iso;
    const asOf = req.asOf === undefined ? null : await instant(session, req.asOf, k!.at);
    const plans = planTables(
      { archives: DAILY_ARCHIVE_NAMES, versioned: VERSIONED.map(nameOf) },
      { tables: req.tables ?? null, asOf: asOf?.iso ?? null, knownAt },
    );
    if ('error' in plans) throw new ExportRequestError(plans.error);
    const previous = await readManifest(dir, db!.id);
    const manifest: Manifest = previous ?? { format: FORMAT, tesync: VERSION, schema: '', database: db!.id, knownAt, files: [], tables: {} };
    Object.assign(manifest, { tesync: VERSION, schema: readJournal().at(-1)?.tag ?? '', knownAt });
    await mkdir(staging, { recursive: true });
    lanes = await Lanes.open();
    let out: ExportedTable[] = [];
    await session.begin('isolation level repeatable read read only', async (tx) => {
      const snapshot = await exportSnapshot(tx);
      const reads: Reads = { tx, lanes: lanes!, copy: (columns, from, where, file) => copyCsv(() => warehouse.session({ name: 'tesync export copy' }), snapshot, columns, from, where, file) };
      // Tables side by side: while one waits on Postgres, another's rows are being written.
      out = await Promise.all(
        plans.map(async (plan) => {
          const done = plan.kind === 'archive' ? await exportArchive(reads, dir, staging, manifest, plan.table, req.since ?? null, knownAt) : await exportWhole(reads, dir, staging, manifest, plan, knownAt);
          logger.info({ ...done }, 'exported');
          return done;
        }),
      );
    });
    manifest.files.sort((a, b) => a.path.localeCompare(b.path));
    await writeManifest(dir, manifest);
    return { dir, knownAt, tables: out };
  } finally {
    lanes?.close();
    await rm(staging, { recursive: true, force: true });
    await session.end({ timeout: 5 });
  }
}

/** `at` as the server reads it, refused when it is not an instant or lies after the export's. */
async function instant(session: postgres.Sql, at: string, knownAt: string): Promise<{ iso: string }> {
  try {
    const [r] = await session<{ iso: string; after: boolean }[]>`select to_char(${at}::timestamptz at time zone 'UTC', ${ISO}) as iso, ${at}::timestamptz > ${knownAt}::timestamptz as after`;
    if (r!.after) throw new ExportRequestError(`--as-of ${at} is after the warehouse's now (${knownAt}): what is known then is not known yet`);
    return { iso: r!.iso };
  } catch (err) {
    if (err instanceof ExportRequestError) throw err;
    throw new ExportRequestError(`--as-of ${JSON.stringify(at)} is not an instant Postgres reads (e.g. 2026-11-28T12:00:00Z)`);
  }
}

/** The export's snapshot: its queries, its COPYs on connections of their own, and the writers. */
interface Reads {
  tx: postgres.TransactionSql;
  lanes: Lanes;
  copy(columns: readonly ExportColumn[], from: string, where: string | null, file: string): Promise<{ longestLine: number }>;
}

/** A day's rows at least, each, before the days of an archive are split between the lanes. */
const SPLIT_ROWS = 20_000;
const HIVE = ARCHIVE_DAY_COLUMN;

/** Reads `from` into a CSV and writes it through a lane's writer; the CSV is removed after. */
async function transfer({ lanes, copy }: Reads, csv: string, columns: readonly ExportColumn[], from: string, where: string | null, write: (writer: ParquetWriter, csv: string, longestLine: number) => Promise<WrittenFile[]>): Promise<WrittenFile[]> {
  return lanes.run(async (writer) => {
    try {
      const { longestLine } = await copy(columns, from, where, csv);
      return await write(writer, csv, longestLine);
    } finally {
      await rm(csv, { force: true });
    }
  });
}

/** A daily archive: the days new or changed since the last export, each day's partition replaced whole. */
async function exportArchive(reads: Reads, dir: string, staging: string, m: Manifest, table: string, since: string | null, knownAt: string): Promise<ExportedTable> {
  const { tx } = reads;
  const { columns: source, comment } = await describeRelation(tx, table);
  const before = m.tables[table];
  const exported = new Map<string, number>();
  for (const f of m.files) if (f.table === table && f.partition !== null) exported.set(f.partition, (exported.get(f.partition) ?? 0) + f.rows);
  const days = await archiveDays(tx, table, before?.horizon ?? null);
  let plan = planDays(days, exported, since, !before?.horizon);
  const dayList = (write: readonly string[]) => `'{${write.join(',')}}'::date[]`;
  let columns = plan.write.length > 0 ? await exportColumns(tx, `(select * from ${table} where ${HIVE} = any(${dayList(plan.write)})) x`, source) : [];
  // Every day of an archive shares one schema. The days written now go out in the types the
  // earlier days were written in when those hold their values (a decimal of a smaller scale);
  // otherwise the types come from the whole archive, and if those moved, every day is written
  // again.
  if (before) {
    const kept = columns.map((c) => inTypeWritten(c, before.columns[c.name]));
    if (kept.every((c) => c !== null)) columns = kept;
    else {
      columns = await exportColumns(tx, table, source);
      if (columns.some((c) => before.columns[c.name]?.type !== c.type)) plan = planDays(days, exported, since, true);
    }
  }
  const rowsOf = new Map(days.map((d) => [d.day, d.rows]));
  const parts = splitDays(plan.write.map((day) => ({ day, rows: rowsOf.get(day) ?? 0 })), LANES, SPLIT_ROWS);
  const target = { path: path.join(staging, table), partitionBy: HIVE, metadata: metadata(table, comment, columns, knownAt) };
  const written = (
    await Promise.all(parts.map((part, i) => transfer(reads, path.join(staging, `${table}.${i}.csv`), columns, table, `${HIVE} = any(${dayList(part)})`, (w, csv, line) => w.write(csv, columns, line, target))))
  ).flat();
  const files = new Map<string, WrittenFile[]>(plan.write.map((day) => [day, []]));
  for (const f of written) {
    const day = f.path.split(/[\\/]/).find((p) => p.startsWith(`${HIVE}=`))?.slice(HIVE.length + 1);
    if (!day || !files.has(day)) throw new Error(`export of ${table}: DuckDB wrote ${f.path}, a day not asked for`);
    files.get(day)!.push(f);
  }
  // The files came from the snapshot the days were counted in: a day whose files hold another
  // count was not written whole, and nothing of this export is kept.
  for (const [day, fs] of files) {
    const n = fs.reduce((x, f) => x + f.rows, 0);
    if (n !== rowsOf.get(day)) throw new Error(`export of ${table}: ${day} was written with ${n} rows, the archive holds ${rowsOf.get(day) ?? 0}`);
  }

  const touched = new Set([...plan.write, ...plan.remove]);
  const first = !m.files.some((f) => f.table === table && f.partition !== null);
  if (first && plan.write.length > 0) {
    // Nothing of this table was exported here before: its staged folder goes in whole, in one
    // rename, and whatever an export of another database left under its name goes.
    await rm(path.join(dir, table), { recursive: true, force: true });
    await rename(path.join(staging, table), path.join(dir, table));
  } else {
    for (const day of plan.write) {
      const rel = `${table}/${HIVE}=${day}`;
      await rm(path.join(dir, rel), { recursive: true, force: true });
      await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
      await rename(path.join(staging, rel), path.join(dir, rel));
    }
  }
  for (const day of plan.remove) await rm(path.join(dir, `${table}/${HIVE}=${day}`), { recursive: true, force: true });
  const entries = [...files].flatMap(([day, fs]) => fs.map((f) => ({ day, rel: `${table}/${HIVE}=${day}/${path.basename(f.path)}`, rows: f.rows })));
  // Hashed before the manifest is touched: other tables' exports edit it meanwhile.
  const listed = await inBatches(entries, async (e) => ({ path: e.rel, table, partition: e.day, asOf: null, rows: e.rows, sha256: await sha256Of(path.join(dir, e.rel)) }));
  m.files = [...m.files.filter((f) => !(f.table === table && f.partition !== null && touched.has(f.partition))), ...listed];
  m.tables[table] = { columns: plan.write.length > 0 ? manifestColumns(columns) : (before?.columns ?? {}), horizon: await snapshotHorizon(tx) };
  const inPlace = days.filter((d) => since === null || d.day >= since).length - plan.write.length;
  return { table, asOf: null, files: entries.length, rows: written.reduce((n, f) => n + f.rows, 0), removed: plan.remove.length, unchanged: inPlace };
}

/** A table written whole: a versioned table as known at an instant, or a history table. */
async function exportWhole(reads: Reads, dir: string, staging: string, m: Manifest, plan: Exclude<TablePlan, { kind: 'archive' }>, knownAt: string): Promise<ExportedTable> {
  const { columns: source, comment } = await describeRelation(reads.tx, plan.kind === 'history' ? plan.table : plan.base);
  const from = plan.kind === 'history' ? plan.table : `${plan.base}_as_of('${plan.at}'::timestamptz) x`;
  const columns = await exportColumns(reads.tx, from, source);
  const staged = path.join(staging, plan.rel, 'data_0.parquet');
  await mkdir(path.dirname(staged), { recursive: true });
  const target = { path: staged, metadata: metadata(plan.table, comment, columns, plan.asOf ?? knownAt) };
  const written = await transfer(reads, path.join(staging, `${plan.rel.replaceAll('/', '_')}.csv`), columns, from, null, (w, csv, line) => w.write(csv, columns, line, target));
  const rows = written.reduce((n, f) => n + f.rows, 0);
  await rm(path.join(dir, plan.rel), { recursive: true, force: true });
  await mkdir(path.dirname(path.join(dir, plan.rel)), { recursive: true });
  await rename(path.join(staging, plan.rel), path.join(dir, plan.rel));
  const sha256 = await sha256Of(path.join(dir, plan.rel, 'data_0.parquet'));
  m.files = [...m.files.filter((f) => !(f.table === plan.table && f.partition === null && f.asOf === plan.asOf)), { path: `${plan.rel}/data_0.parquet`, table: plan.table, partition: null, asOf: plan.asOf, rows, sha256 }];
  m.tables[plan.table] = { columns: manifestColumns(columns) };
  return { table: plan.table, asOf: plan.asOf, files: 1, rows, removed: 0, unchanged: 0 };
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
