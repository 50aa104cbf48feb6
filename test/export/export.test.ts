// `tesync export` (issue 46): a warehouse synced twice across the simulator's revision, three
// days apart (the first sync on a server clock three days behind, so the daily archives hold
// four days), exported as Parquet and read back with DuckDB (@duckdb/node-api, as a notebook
// would): every table's rows equal Postgres's, every decimal equals Postgres's at its column's scale,
// no numeric column is a float; `--as-of T` equals `T_as_of(T)` row for row; a second export
// with nothing new rewrites no partition, and a late commit rewrites exactly its day; a value
// wider than 38 digits goes out as a string, flagged in the manifest.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sql } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportWarehouse } from '../../src/export/export.ts';
import type { Manifest } from '../../src/export/manifest.ts';
import { VERSIONED } from '../../src/schema/warehouse/history.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import { runCli } from '../helpers/cli.ts';
import { patience } from '../helpers/patience.ts';
import type { TestLogger, TestWarehouse } from '../helpers/services.ts';
import { syncedTwice, type SyncedTwice } from './synced-twice.ts';

const ARCHIVES = ['app.screener_daily', 'app.token_snapshots_daily', 'gateway.screener_daily'];
const NAMES = VERSIONED.map((t) => `${getTableConfig(t).schema}.${getTableConfig(t).name}`);

let fixture: SyncedTwice;
let tw: TestWarehouse;
let w: Warehouse;
let log: TestLogger;
let duck: DuckDBConnection;
let between: string;
const newDir = () => fixture.newDir();

beforeAll(async () => {
  fixture = await syncedTwice();
  ({ tw, w, log, duck, between } = fixture);
}, patience(120_000));

afterAll(async () => {
  await fixture?.close();
});

const manifestOf = (dir: string) => JSON.parse(readFileSync(path.join(dir, '_manifest.json'), 'utf8')) as Manifest;
const duckRows = async (query: string) => (await duck.runAndReadAll(query)).getRowObjectsJson() as Record<string, unknown>[];
/** The manifest's files of `table` (its as-of cut at `asOf`). */
const entriesOf = (m: Manifest, table: string, asOf: string | null = null) => m.files.filter((f) => f.table === table && f.asOf === asOf);
/** Every file the manifest lists of `table`, read together (a folder may hold files no manifest names). */
const parquetOf = (dir: string, table: string, asOf: string | null = null) =>
  `read_parquet([${entriesOf(manifestOf(dir), table, asOf).map((f) => `'${path.join(dir, f.path)}'`).join(', ')}], hive_partitioning = true)`;
/** A table's columns as its files were written (every file of it alike). */
function columnsOf(m: Manifest, table: string, asOf: string | null = null) {
  const files = entriesOf(m, table, asOf);
  expect(new Set(files.map((f) => JSON.stringify(f.columns))).size, `${table}: every file in one schema`).toBe(1);
  return files[0]!.columns;
}

/** A decimal's digits: no trailing zeros after the point, no trailing point. */
const digits = (v: unknown) => (v === null ? null : String(v).includes('.') ? String(v).replace(/0+$/, '').replace(/\.$/, '') : String(v));

/** Each column's values as text both sides can print alike: arrays as JSON, decimals by their digits. */
function pgText(c: { name: string; sourceType: string }) {
  const id = `"${c.name}"`;
  return c.sourceType.endsWith('[]') ? `array_to_json(${id})::text` : `${id}::text`;
}
function duckText(c: { name: string; sourceType: string; type: string }) {
  const id = `"${c.name}"`;
  return c.type.endsWith('[]') ? `to_json(${id})::VARCHAR` : `${id}::VARCHAR`;
}

/** Rows as sorted lines of normalized values: Postgres's `from` against the Parquet `source`. */
async function sameRows(m: Manifest, table: string, from: string, source: string, asOf: string | null = null) {
  const columns = Object.entries(columnsOf(m, table, asOf)).map(([name, c]) => ({ name, ...c }));
  const norm = (row: Record<string, unknown>) => columns.map((c) => (c.sourceType.startsWith('numeric') ? digits(row[c.name]) : (row[c.name] ?? null))).map((v) => JSON.stringify(v)).join('|');
  const pg = (await w.query<Record<string, unknown>>(sql.raw(`select ${columns.map((c) => `${pgText(c)} as "${c.name}"`).join(', ')} from ${from}`))).map(norm).sort();
  const out = (await duckRows(`select ${columns.map((c) => `${duckText(c)} as "${c.name}"`).join(', ')} from ${source}`)).map(norm).sort();
  expect(out.length, `${table}: rows`).toBe(pg.length);
  expect(out, table).toEqual(pg);
  return pg.length;
}

describe('tesync export', () => {
  let dir: string;
  let first: Awaited<ReturnType<typeof exportWarehouse>>;

  it('writes every archive by day and every versioned table, row for row, every decimal exact at its column scale, no float anywhere', async () => {
    dir = newDir();
    first = await exportWarehouse(w, log.logger, { to: dir });
    const m = manifestOf(dir);
    expect(m.knownAt).toBe(first.knownAt);
    // Four days in each archive: the first sync's and each day since.
    for (const a of ARCHIVES) expect(new Set(m.files.filter((f) => f.table === a).map((f) => f.partition)).size, a).toBe(4);
    let numericColumns = 0;
    for (const table of [...ARCHIVES, ...NAMES]) {
      const rows = await sameRows(m, table, ARCHIVES.includes(table) ? table : `${table}_as_of('${first.knownAt}')`, parquetOf(dir, table));
      const [pgCount] = await w.query<{ n: number }>(sql.raw(`select count(*)::int as n from ${table}`));
      expect(rows, `${table}: as many rows as Postgres holds`).toBe(pgCount!.n);
      expect(m.files.filter((f) => f.table === table).reduce((n, f) => n + f.rows, 0), `${table}: the manifest's rows`).toBe(rows);
      numericColumns += Object.values(columnsOf(m, table)).filter((c) => c.sourceType.startsWith('numeric')).length;
    }
    expect(numericColumns).toBeGreaterThan(20);
    // No float in any file: every numeric column a DECIMAL(38,s).
    const types = await duckRows(`select distinct type::VARCHAR as t, logical_type::VARCHAR as l from parquet_schema('${dir}/**/*.parquet')`);
    expect(types.filter((t) => t.t === 'DOUBLE' || t.t === 'FLOAT')).toEqual([]);
    // A numeric column is DECIMAL(38,s), or text flagged in the manifest where a value does not fit.
    const wide: string[] = [];
    for (const name of new Set(m.files.map((f) => f.table))) {
      for (const [col, c] of Object.entries(columnsOf(m, name))) {
        if (!c.sourceType.startsWith('numeric')) continue;
        if (c.asString) wide.push(`${name}.${col}`);
        else expect(c.type, `${name}.${col}`).toMatch(/^DECIMAL\(38,\d+\)$/);
      }
    }
    for (const col of wide) {
      const [table, c] = [col.slice(0, col.lastIndexOf('.')), col.slice(col.lastIndexOf('.') + 1)];
      const [fits] = await w.query<{ over: boolean }>(
        sql.raw(`select bool_or(${c} in ('NaN', 'Infinity', '-Infinity') or length(trunc(abs(${c}))::text) + scale(${c}) > 38 or max_scale_over) as over from (select ${c}, (max(scale(${c})) over ()) + (max(length(trunc(abs(${c}))::text)) over ()) > 38 as max_scale_over from ${table}) x`),
      );
      expect(fits!.over, `${col} is text because its values do not fit 38 digits`).toBe(true);
    }
    // Each file as the manifest names it, with the warehouse's descriptions in its metadata.
    const kv = await duckRows(`select key::VARCHAR as k from parquet_kv_metadata('${path.join(dir, entriesOf(m, 'app.tokens')[0]!.path)}')`);
    expect(kv.map((r) => r.k)).toEqual(expect.arrayContaining(['tesync.table', 'tesync.known_at', 'tesync.comment', 'tesync.column.slug']));
  }, patience(120_000));

  it('a second export with nothing new rewrites no file; a late commit rewrites exactly its day', async () => {
    const before = manifestOf(dir);
    const every = new Map(before.files.map((f) => [f.path, statSync(path.join(dir, f.path)).mtimeMs]));
    const again = await exportWarehouse(w, log.logger, { to: dir });
    for (const t of again.tables.filter((x) => ARCHIVES.includes(x.table))) expect(t, t.table).toMatchObject({ files: 0, unchanged: 4 });
    for (const t of again.tables.filter((x) => !ARCHIVES.includes(x.table))) expect(t, t.table).toMatchObject({ files: 0, unchanged: 1 });
    expect(again.removedFiles).toBe(0);
    for (const [p, mtime] of every) expect(statSync(path.join(dir, p)).mtimeMs, p).toBe(mtime);
    expect(manifestOf(dir).files).toEqual(before.files);
    const files = before.files.filter((f) => f.partition !== null);
    const mtimes = new Map(files.map((f) => [f.path, statSync(path.join(dir, f.path)).mtimeMs]));

    // A late commit: one row of a past day rewritten in the archive.
    const [{ day }] = (await w.query<{ day: string }>(sql`select min(snapshot_date)::text as day from app.screener_daily`)) as [{ day: string }];
    await w.query(sql.raw(`update app.screener_daily set effective_ratio = coalesce(effective_ratio, 0) + 1 where snapshot_date = '${day}' and token_slug = (select min(token_slug) from app.screener_daily where snapshot_date = '${day}')`));
    const late = await exportWarehouse(w, log.logger, { to: dir });
    expect(late.tables.find((t) => t.table === 'app.screener_daily')).toMatchObject({ files: 1, unchanged: 3 });
    const after = manifestOf(dir).files.filter((f) => f.partition !== null);
    const changed = after.filter((f) => !files.some((g) => g.path === f.path));
    expect(changed.map((f) => [f.table, f.partition])).toEqual([['app.screener_daily', day]]);
    // The day's file is a new one; the one it replaces is gone.
    expect(late.removedFiles).toBe(1);
    const old = files.find((f) => f.table === 'app.screener_daily' && f.partition === day)!;
    expect(existsSync(path.join(dir, old.path))).toBe(false);
    for (const f of after.filter((x) => !(x.table === 'app.screener_daily' && x.partition === day))) expect(statSync(path.join(dir, f.path)).mtimeMs, f.path).toBe(mtimes.get(f.path));
    await sameRows(manifestOf(dir), 'app.screener_daily', 'app.screener_daily', parquetOf(dir, 'app.screener_daily'));
  }, patience(120_000));

  it('values of megabytes, with line breaks and quotes, go out whole: one day is one file, its rows counted by DuckDB', async () => {
    // One value with no line break, longer than DuckDB's default line (2 MiB); one whose lines
    // are each shorter than that but whose row is not (the reader is asked again, for room).
    const long = 'a'.repeat(3 * 1024 * 1024);
    const broken = `${'b'.repeat(1536 * 1024)}\n"quoted, with ""quotes"""\r\n${'c'.repeat(1536 * 1024)}`;
    const [{ day }] = (await w.query<{ day: string }>(sql`select max(snapshot_date)::text as day from app.screener_daily`)) as [{ day: string }];
    const slugs = (await w.query<{ slug: string }>(sql.raw(`select token_slug as slug from app.screener_daily where snapshot_date = '${day}' order by 1 limit 2`))).map((r) => r.slug);
    const d = newDir();
    await w.query(sql`update app.screener_daily set display_name = ${broken} where snapshot_date = ${day}::date and token_slug = ${slugs[1]!}`);
    await exportWarehouse(w, log.logger, { to: d, tables: ['app.screener_daily'] });
    await w.query(sql`update app.screener_daily set display_name = ${long} where snapshot_date = ${day}::date and token_slug = ${slugs[0]!}`);
    expect((await exportWarehouse(w, log.logger, { to: d, tables: ['app.screener_daily'] })).tables[0]).toMatchObject({ files: 1 });
    const m = manifestOf(d);
    // One file a day, and the manifest's rows are each file's own.
    const days = m.files.filter((f) => f.kind === 'archive').map((f) => f.partition);
    expect(new Set(days).size).toBe(days.length);
    await sameRows(m, 'app.screener_daily', 'app.screener_daily', parquetOf(d, 'app.screener_daily'));
    const back = await duckRows(`select token_slug, md5(display_name) as h, length(display_name) as n from ${parquetOf(d, 'app.screener_daily')} where snapshot_date = '${day}' and token_slug in ('${slugs.join("','")}') order by 1`);
    const pg = await w.query<{ token_slug: string; h: string; n: number }>(sql.raw(`select token_slug, md5(display_name) as h, length(display_name) as n from app.screener_daily where snapshot_date = '${day}' and token_slug in ('${slugs.join("','")}') order by 1`));
    expect(back.map((r) => [r.token_slug, r.h, Number(r.n)])).toEqual(pg.map((r) => [r.token_slug, r.h, r.n]));
  }, patience(120_000));

  it('--as-of T: every versioned table equals T_as_of(T) row for row', async () => {
    const asOfDir = newDir();
    const r = await exportWarehouse(w, log.logger, { to: asOfDir, asOf: between });
    const m = manifestOf(asOfDir);
    const iso = r.tables[0]!.asOf!;
    expect(r.tables.map((t) => t.table).sort()).toEqual([...NAMES].sort());
    let differs = 0;
    for (const table of NAMES) {
      await sameRows(m, table, `${table}_as_of('${between}')`, parquetOf(asOfDir, table, iso), iso);
      const [d] = await w.query<{ n: number }>(sql.raw(`select count(*)::int as n from (select * from ${table}_as_of('${between}') except all select * from ${table}) x`));
      differs += d!.n;
    }
    // The instant lies between the two syncs: what it shows is not what is current.
    expect(differs).toBeGreaterThan(0);
  }, patience(120_000));

  it('a value wider than 38 digits goes out as a string, flagged in the manifest; history tables on request', async () => {
    const wide = '12345678901234567890123456789012345.123456789';
    await w.query(sql.raw(`update app.metric_history set value = '${wide}' where (token_slug, ts) = (select token_slug, ts from app.metric_history order by token_slug, ts limit 1) and stream = (select min(stream) from app.metric_history)`));
    const d = newDir();
    await exportWarehouse(w, log.logger, { to: d, tables: ['app.metric_history', 'app.metric_history_history'] });
    const m = manifestOf(d);
    expect(columnsOf(m, 'app.metric_history').value).toMatchObject({ type: 'VARCHAR', asString: true });
    const back = await duckRows(`select value from ${parquetOf(d, 'app.metric_history')} where value = '${wide}'`);
    expect(back.length).toBeGreaterThan(0);
    await sameRows(m, 'app.metric_history', `app.metric_history_as_of('${m.knownAt}')`, parquetOf(d, 'app.metric_history'));
    const h = columnsOf(m, 'app.metric_history_history');
    expect(Object.keys(h)).toEqual(expect.arrayContaining(['known_from', 'known_to']));
    await sameRows(m, 'app.metric_history_history', 'app.metric_history_history', parquetOf(d, 'app.metric_history_history'));
  }, patience(120_000));

  it('the command: an unknown table or an instant after now is a usage error (exit 2), nothing written', async () => {
    const d = newDir();
    const env = { DATABASE_URL: tw.databaseUrl, LOG_LEVEL: 'warn' };
    const unknown = await runCli(['export', '--to', d, '--tables', 'app.nope'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no such table to export: app\.nope/);
    const future = await runCli(['export', '--to', d, '--as-of', '2999-01-01T00:00:00Z'], env);
    expect(future.code).toBe(2);
    expect(future.stderr).toMatch(/after the warehouse's now/);
    const ok = await runCli(['export', '--to', d, '--tables', 'app.tokens', '--json'], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect((JSON.parse(ok.stdout) as { tables: { table: string; rows: number }[] }).tables).toEqual([expect.objectContaining({ table: 'app.tokens', rows: 5 })]);
  }, patience(120_000));
});
