// The export leg of `npm run bench` (issue 46), on the as-of leg's deep warehouse (depth.ts,
// its daily archives filled): the newest day of every daily archive taken out, every archive
// exported into an empty folder, exported again with nothing new, the newest day filled back
// as the daily fill does, and exported again: that day alone is written. Beside them two
// floors: the archives' rows COPYed out of Postgres as CSV (two connections at once, as the
// export reads them), and the exported rows written again into the same partitions by two
// DuckDB writers on one thread each, from memory (what the export's writes cost without the
// reading and the casting). The first export is held to the sum of the two floors (issue 56:
// rows read once and written once, while Postgres still prints), one new day to 1 s and
// nothing new to 300 ms; beyond any of them the leg fails, and with it the bench's exit code.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import postgres from 'postgres';
import { exportWarehouse, type ExportSummary } from '../../src/export/export.ts';
import { DAILY_ARCHIVE_NAMES } from '../../src/schema/warehouse/history.ts';
import { fillDailyArchives } from '../../src/store/write/daily-archive.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { addCpu, cpuSeconds, formatCpu, type CpuSeconds } from './cpu-seconds.ts';

export interface ExportLegResult {
  archives: { table: string; rows: number; days: number }[];
  /** Every archive's every day but the newest, into an empty folder. */
  first: { ms: number; rows: number; files: number; bytes: number };
  /** Again, nothing new. */
  unchangedMs: number;
  /** The newest day filled back, then exported. */
  newDay: { ms: number; rows: number; files: number; rewritten: number };
  floors: { copyMs: number; parquetMs: number };
  /** CPU seconds of the first export and of each floor (cpu-seconds.ts): on busy cores, wall time follows them. */
  cpu: { first: CpuSeconds; copy: CpuSeconds; parquet: CpuSeconds };
  /** first.ms / (COPY floor + Parquet floor): at most 1 (issue 56). */
  overFloors: number;
  /** The leg's limits it went beyond, in words (empty: it passed). */
  failures: string[];
}

/** The leg's limits (issue 56): the first export within its floors, one new day, nothing new. */
export const EXPORT_LIMITS = { overFloors: 1.0, newDayMs: 1000, unchangedMs: 300 };

/** Pure: the limits `r` goes beyond. */
export function exportFailures(r: Pick<ExportLegResult, 'overFloors' | 'unchangedMs' | 'newDay'>): string[] {
  const out: string[] = [];
  if (!(r.overFloors <= EXPORT_LIMITS.overFloors)) out.push(`first export / (COPY floor + Parquet floor) ${r.overFloors.toFixed(2)} > ${EXPORT_LIMITS.overFloors}`);
  if (!(r.newDay.ms <= EXPORT_LIMITS.newDayMs)) out.push(`one new day ${r.newDay.ms.toFixed(0)} ms > ${EXPORT_LIMITS.newDayMs} ms`);
  if (r.newDay.rewritten !== 0) out.push(`one new day rewrote ${r.newDay.rewritten} other files`);
  if (!(r.unchangedMs <= EXPORT_LIMITS.unchangedMs)) out.push(`nothing new ${r.unchangedMs.toFixed(0)} ms > ${EXPORT_LIMITS.unchangedMs} ms`);
  return out;
}

const summed = (s: ExportSummary) => ({ rows: s.tables.reduce((n, t) => n + t.rows, 0), files: s.tables.reduce((n, t) => n + t.files, 0) });

export async function runExportLeg(o: { databaseUrl: string; warehouse: Warehouse; log: (line: string) => void }): Promise<ExportLegResult> {
  const db = postgres(o.databaseUrl, { max: 2, onnotice: () => {} });
  // Reads the backends' CPU on a connection of its own: the floor's COPYs hold both of db's.
  const watcher = postgres(o.databaseUrl, { max: 1, onnotice: () => {} });
  const dir = await mkdtemp(path.join(tmpdir(), 'tesync-bench-export-'));
  const logger = createLogger({ level: 'warn', secrets: [] });
  try {
    for (const table of DAILY_ARCHIVE_NAMES) await db.unsafe(`delete from ${table} where snapshot_date = (select max(snapshot_date) from ${table})`);
    await db.unsafe(`vacuum analyze ${DAILY_ARCHIVE_NAMES.join(', ')}`);
    const archives: ExportLegResult['archives'] = [];
    for (const table of DAILY_ARCHIVE_NAMES) {
      const [r] = await db.unsafe<{ rows: string; days: string }[]>(`select count(*)::text as rows, count(distinct snapshot_date)::text as days from ${table}`);
      archives.push({ table, rows: Number(r!.rows), days: Number(r!.days) });
    }
    const tables = [...DAILY_ARCHIVE_NAMES];
    o.log(`export: ${archives.map((a) => `${a.table} ${a.rows} rows in ${a.days} days`).join(', ')}`);

    let t0 = performance.now();
    const { value: first, cpu: firstCpu } = await cpuSeconds(watcher, () => exportWarehouse(o.warehouse, logger, { to: dir, tables }));
    const firstMs = performance.now() - t0;
    const bytes = await folderBytes(dir);
    o.log(`export: first ${(firstMs / 1000).toFixed(2)} s, ${summed(first).rows} rows into ${summed(first).files} files, ${(bytes / 2 ** 20).toFixed(0)} MB`);

    t0 = performance.now();
    const again = await exportWarehouse(o.warehouse, logger, { to: dir, tables });
    const unchangedMs = performance.now() - t0;
    if (summed(again).files !== 0) throw new Error(`export leg: an export with nothing new wrote ${summed(again).files} files`);

    await fillDailyArchives(o.warehouse.db);
    t0 = performance.now();
    const next = await exportWarehouse(o.warehouse, logger, { to: dir, tables });
    const newDayMs = performance.now() - t0;
    const newDay = { ms: newDayMs, ...summed(next), rewritten: next.tables.reduce((n, t) => n + t.files, 0) - tables.length };
    o.log(`export: unchanged ${unchangedMs.toFixed(0)} ms; one new day ${newDayMs.toFixed(0)} ms (${newDay.rows} rows, ${newDay.files} files)`);

    const { value: copyMs, cpu: copyCpu } = await cpuSeconds(watcher, () => copyFloor(db, tables));
    const { ms: parquetMs, cpu: parquetCpu } = await parquetFloor(watcher, dir, tables);
    o.log(`export: floors: COPY out ${(copyMs / 1000).toFixed(2)} s, Parquet written again ${(parquetMs / 1000).toFixed(2)} s`);
    const cpu = { first: firstCpu, copy: copyCpu, parquet: parquetCpu };
    o.log(`export: CPU: first ${formatCpu(firstCpu)}; floors ${formatCpu(addCpu(copyCpu, parquetCpu))} (COPY ${formatCpu(copyCpu)}, Parquet ${formatCpu(parquetCpu)})`);
    const overFloors = firstMs / (copyMs + parquetMs);
    const failures = exportFailures({ overFloors, unchangedMs, newDay });
    o.log(`export: first / (COPY floor + Parquet floor) = ${(firstMs / 1000).toFixed(2)} / (${(copyMs / 1000).toFixed(2)} + ${(parquetMs / 1000).toFixed(2)}) = ${overFloors.toFixed(2)}`);
    o.log(failures.length === 0 ? 'export: leg passed' : `export: leg FAILED: ${failures.join('; ')}`);
    return { archives, first: { ms: firstMs, ...summed(first), bytes }, unchangedMs, newDay, floors: { copyMs, parquetMs }, cpu, overFloors, failures };
  } finally {
    await rm(dir, { recursive: true, force: true });
    await db.end({ timeout: 5 });
    await watcher.end({ timeout: 5 });
  }
}

/** Every archive's rows as CSV, thrown away, on two connections at once (each takes the next table). */
async function copyFloor(db: postgres.Sql, tables: readonly string[]): Promise<number> {
  const queue = [...tables];
  const t0 = performance.now();
  await Promise.all(
    [0, 1].map(async () => {
      for (let table = queue.shift(); table; table = queue.shift()) {
        const stream = await db.unsafe(`copy (select * from ${table}) to stdout (format csv)`).readable();
        await pipeline(stream, new Writable({ write: (_chunk, _enc, done) => done() }));
      }
    }),
  );
  return performance.now() - t0;
}

/** The exported rows, loaded into two one-thread DuckDB instances, written again by day (only the writing timed). */
async function parquetFloor(db: postgres.Sql, dir: string, tables: readonly string[]): Promise<{ ms: number; cpu: CpuSeconds }> {
  const out = await mkdtemp(path.join(tmpdir(), 'tesync-bench-parquet-'));
  const lanes = await Promise.all([0, 1].map(async () => (await DuckDBInstance.create(':memory:', { threads: '1' })).connect()));
  try {
    for (const [i, table] of tables.entries()) {
      await lanes[i % 2]!.run(`create table t${i} as select * from read_parquet('${path.join(dir, table)}/**/*.parquet', hive_partitioning = true) order by snapshot_date`);
    }
    const queue = tables.map((table, i) => ({ table, i }));
    const t0 = performance.now();
    const { cpu } = await cpuSeconds(db, () => Promise.all(
      lanes.map(async (lane, l) => {
        for (const { table, i } of queue.filter((q) => q.i % 2 === l)) {
          await lane.run(`copy t${i} to '${path.join(out, table)}' (format parquet, compression zstd, partition_by (snapshot_date))`);
        }
      }),
    ));
    return { ms: performance.now() - t0, cpu };
  } finally {
    for (const lane of lanes) lane.closeSync();
    await rm(out, { recursive: true, force: true });
  }
}

async function folderBytes(dir: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) if (e.isFile()) n += (await stat(path.join(e.parentPath ?? e.path, e.name))).size;
  return n;
}
