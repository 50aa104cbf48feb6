// Issue 56: every decimal of a synced warehouse, read back from Parquet, equals Postgres's value
// as a decimal, at the scale the manifest names, with no float anywhere. A warehouse synced twice
// across the simulator's revision (the first sync three days behind, so the archives hold days
// and the history tables versions), exported whole, as of an instant between the syncs, and its
// history tables, into one folder. Then for every file the manifest lists (archive days, current
// tables, the as-of cut, history tables) and every numeric column of that file's own entry:
// - DECIMAL(38,s): the Parquet column is that type; Postgres's value equals round(value, s) (the
//   scale holds it exactly), and DuckDB's text of the Parquet value (CAST AS VARCHAR, never a
//   float) equals `value::numeric(38,s)::text`: the same decimal, written at scale s (trailing
//   zeros where the value had fewer places);
// - text (asString): DuckDB's text equals Postgres's `value::text` exactly.
// Values are compared as the multiset of a column's values in the file against the same rows in
// Postgres (the day's rows of an archive, `T_as_of` at the file's instant, the history table).
// No value passes through a JavaScript number: both sides print text.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sql } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportWarehouse } from '../../src/export/export.ts';
import type { Manifest, ManifestFile } from '../../src/export/manifest.ts';
import { VERSIONED } from '../../src/schema/warehouse/history.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import { patience } from '../helpers/patience.ts';
import type { TestLogger } from '../helpers/services.ts';
import { syncedTwice, type SyncedTwice } from './synced-twice.ts';

const NAMES = VERSIONED.map((t) => `${getTableConfig(t).schema}.${getTableConfig(t).name}`);
/** 40 digits: more than DECIMAL(38,s) holds, so its column goes out as text. */
const WIDE = '1234567890123456789012345678901234567890.25';

let fixture: SyncedTwice;
let w: Warehouse;
let log: TestLogger;
let duck: DuckDBConnection;
let dir: string;
let between: string;

beforeAll(async () => {
  fixture = await syncedTwice();
  ({ w, log, duck, between } = fixture);
  // One value too wide for DECIMAL(38,s): its column goes out as text (and its old version to the history).
  await w.query(sql.raw(`update app.metric_history set value = '${WIDE}' where ctid = (select ctid from app.metric_history order by token_slug, stream, metric, ts limit 1)`));
  dir = fixture.newDir();
}, patience(120_000));

afterAll(async () => {
  await fixture?.close();
});

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
const sqlText = (s: string) => `'${s.replaceAll("'", "''")}'`;
/** A column's values as sorted text, null as null: both sides sort alike. */
const sorted = (values: (string | null)[]) => values.map((v) => v ?? '\u0000null').sort();

/** The Postgres rows a file holds, by its kind. */
function sourceOf(f: ManifestFile): string {
  switch (f.kind) {
    case 'archive':
      return `(select * from ${f.table} where snapshot_date = ${sqlText(f.partition!)}) x`;
    case 'current':
      return `${f.table}_as_of(${sqlText(f.knownAt)}::timestamptz) x`;
    case 'asOf':
      return `${f.table}_as_of(${sqlText(f.asOf!)}::timestamptz) x`;
    case 'history':
      return `${f.table} x`;
  }
}

interface Checked {
  files: Set<string>;
  decimalColumns: number;
  textColumns: number;
  values: number;
  /** Values with fewer places than their column's scale: written with trailing zeros, the same decimal. */
  padded: number;
}

/** Every numeric column of file `f`: Parquet against Postgres, as decimals at the manifest's scale. */
async function checkFile(f: ManifestFile, seen: Checked) {
  const numeric = Object.entries(f.columns).filter(([, c]) => c.sourceType.startsWith('numeric'));
  const file = sqlText(path.join(dir, ...f.path.split('/')));
  const [count] = (await duck.runAndReadAll(`select count(*)::VARCHAR as n from read_parquet(${file})`)).getRowObjectsJson();
  expect(Number(count!.n), `${f.path}: the manifest's rows`).toBe(f.rows);
  const [pgCount] = await w.query<{ n: string }>(sql.raw(`select count(*)::text as n from ${sourceOf(f)}`));
  expect(pgCount!.n, `${f.path}: rows against Postgres's`).toBe(String(f.rows));
  for (const [name, c] of numeric) {
    const id = quote(name);
    const [typed] = (await duck.runAndReadAll(`select typeof(${id}) as t from read_parquet(${file}) limit 1`)).getRowObjectsJson();
    if (typed) expect(typed.t, `${f.path} ${name}: the Parquet type is the manifest's`).toBe(c.type);
    const parquet = (await duck.runAndReadAll(`select CAST(${id} AS VARCHAR) as v from read_parquet(${file})`)).getRowObjectsJson().map((r) => r.v as string | null);
    if (c.asString) {
      expect(c.type, `${f.path} ${name}: text`).toBe('VARCHAR');
      const pg = await w.query<{ v: string | null }>(sql.raw(`select ${id}::text as v from ${sourceOf(f)}`));
      expect(sorted(parquet), `${f.path} ${name}: text, Postgres's own digits`).toEqual(sorted(pg.map((r) => r.v)));
      seen.textColumns++;
    } else {
      const s = c.scale!;
      const at = `${f.path} ${name}: DECIMAL(38,${s}), scale ${s} as the manifest names it`;
      expect(c.type, at).toBe(`DECIMAL(38,${s})`);
      const [fits] = await w.query<{ cut: string; padded: string }>(
        sql.raw(`select count(*) filter (where ${id} <> round(${id}, ${s}))::text as cut, count(*) filter (where scale(${id}) < ${s})::text as padded from ${sourceOf(f)}`),
      );
      expect(fits!.cut, `${at}: every Postgres value equals itself rounded to scale ${s}`).toBe('0');
      const pg = await w.query<{ v: string | null }>(sql.raw(`select ${id}::numeric(38,${s})::text as v from ${sourceOf(f)}`));
      expect(sorted(parquet), `${at}: each Parquet value equals Postgres's as a decimal at scale ${s}`).toEqual(sorted(pg.map((r) => r.v)));
      seen.decimalColumns++;
      seen.padded += Number(fits!.padded);
    }
    seen.values += parquet.filter((v) => v !== null).length;
  }
  seen.files.add(f.kind);
}

describe('exported decimals equal Postgres', () => {
  it("every numeric of every file (archive days, current tables, an as-of cut, history tables) is Postgres's value at the scale its manifest entry names, or its text", async () => {
    await exportWarehouse(w, log.logger, { to: dir });
    await exportWarehouse(w, log.logger, { to: dir, asOf: between });
    await exportWarehouse(w, log.logger, { to: dir, tables: NAMES.map((t) => `${t}_history`) });
    const m = JSON.parse(readFileSync(path.join(dir, '_manifest.json'), 'utf8')) as Manifest;
    expect(m.format).toBe(2);

    const seen: Checked = { files: new Set(), decimalColumns: 0, textColumns: 0, values: 0, padded: 0 };
    for (const f of m.files) await checkFile(f, seen);
    expect([...seen.files].sort()).toEqual(['archive', 'asOf', 'current', 'history']);
    expect(seen.decimalColumns).toBeGreaterThan(20);
    expect(seen.values).toBeGreaterThan(1000);
    // The wide value: its current table's column, and its history's, are text.
    expect(seen.textColumns).toBeGreaterThanOrEqual(1);
    // Values with fewer places than their column's scale exist, and read back as the same decimal.
    expect(seen.padded).toBeGreaterThan(0);
    // No float in any file.
    const types = (await duck.runAndReadAll(`select distinct type::VARCHAR as t from parquet_schema([${m.files.map((f) => sqlText(path.join(dir, ...f.path.split('/')))).join(', ')}])`)).getRowObjectsJson();
    expect(types.filter((t) => t.t === 'DOUBLE' || t.t === 'FLOAT')).toEqual([]);
  }, patience(300_000));
});
