// The export's rows out (src/export/transfer.ts): rows streamed from a COPY through a FIFO into
// DuckDB, read back from the Parquet. Text holding the CSV's own delimiter and quote bytes,
// quotes, commas and line breaks goes out whole; a row longer than the reader's line limit
// is read again through a file; a COPY that fails midway fails the transfer (the reader saw
// an end that was not the rows'), and a reader that fails stops the COPY, without a hang.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportColumn, type ExportColumn } from '../../src/export/columns.ts';
import { Lanes } from '../../src/export/lanes.ts';
import { exportSnapshot } from '../../src/export/pg-read.ts';
import { transfer, type Reads } from '../../src/export/transfer.ts';
import { useTestDatabase } from '../helpers/mirror-fixture.ts';

// Empty: the table read is the file's own.
const db = useTestDatabase();
let sql: postgres.Sql;
let lanes: Lanes;
let duck: DuckDBConnection;
let dir: string;

const TEXTS = ['plain', '', 'a,b', 'say "hi"', 'two\nlines', 'cr\r\nlf', '\x01quote\x01', 'delim\x02here', '\x01\x02\x01\x01', '{"a": [1, "x,y"]}', 'é ü 中文'];

beforeAll(async () => {
  sql = postgres(db.databaseUrl, { max: 4, onnotice: () => {} });
  await sql`create table t (day date not null, n integer not null, s text, v numeric)`;
  await sql`insert into t select date '2026-01-01' + (i % 3), i, (${TEXTS}::text[])[1 + i % ${TEXTS.length}], (i::numeric / 8) from generate_series(0, 2999) i`;
  await sql`insert into t values (date '2026-01-02', -1, null, null)`;
  lanes = await Lanes.open(2);
  duck = await (await DuckDBInstance.create(':memory:')).connect();
  dir = await mkdtemp(path.join(tmpdir(), 'tesync-transfer-'));
});

afterAll(async () => {
  lanes?.close();
  duck?.closeSync();
  await sql?.end({ timeout: 5 });
  await rm(dir, { recursive: true, force: true });
});

const columns = (): ExportColumn[] =>
  [
    { name: 'day', type: 'date' },
    { name: 'n', type: 'integer' },
    { name: 's', type: 'text' },
    { name: 'v', type: 'numeric' },
  ].map((c) => exportColumn({ ...c, comment: null }, c.type === 'numeric' ? { maxScale: 3, maxIntegerDigits: 3, special: 0 } : undefined));

/** `run` inside a repeatable-read transaction whose snapshot the transfer's COPY reads in. */
async function inSnapshot<T>(run: (reads: Reads) => Promise<T>): Promise<T> {
  let out: T;
  await sql.begin('isolation level repeatable read read only', async (tx) => {
    const reads: Reads = { tx, snapshot: await exportSnapshot(tx), open: () => postgres(db.databaseUrl, { max: 1, onnotice: () => {} }), lanes };
    out = await run(reads);
  });
  return out!;
}

const rowsOf = async (glob: string) =>
  (await duck.runAndReadAll(`select day::text as day, n, s, v::text as v from read_parquet('${glob}', hive_partitioning = true) order by n`)).getRowObjectsJson();

describe('transfer', () => {
  it('streams every row into one file a day; text with the CSV bytes, quotes and line breaks comes back whole', async () => {
    const target = { path: path.join(dir, 'days'), partitionBy: 'day', metadata: { 'tesync.table': 't' } };
    const written = await inSnapshot((reads) => transfer(reads, { columns: columns(), from: 't', where: null, target, scratch: path.join(dir, 'days.fifo') }));
    expect(written.map((f) => path.relative(target.path, f.path)).sort()).toEqual(['day=2026-01-01/data_0.parquet', 'day=2026-01-02/data_0.parquet', 'day=2026-01-03/data_0.parquet']);
    expect(written.reduce((n, f) => n + f.rows, 0)).toBe(3001);
    const back = await rowsOf(path.join(target.path, '*/*.parquet'));
    const want = await sql<{ day: string; n: number; s: string | null; v: string | null }[]>`select day::text as day, n, s, v::text as v from t order by n`;
    expect(back.map((r) => [r.day, r.n, r.s, r.v === null ? null : String(r.v).replace(/0+$/, '').replace(/\.$/, '')])).toEqual(
      want.map((r) => [r.day, r.n, r.s, r.v === null ? null : r.v.includes('.') ? r.v.replace(/0+$/, '').replace(/\.$/, '') : r.v]),
    );
    // The FIFO is gone.
    expect((await readdir(dir)).filter((f) => f.endsWith('.fifo'))).toEqual([]);
  });

  it('reads a row longer than the line limit again through a file', async () => {
    await sql`insert into t values (date '2026-01-03', 100000, repeat(${'x,"\n'}, 1000000), 1)`;
    try {
      const target = { path: path.join(dir, 'long.parquet'), metadata: {} };
      const written = await inSnapshot((reads) => transfer(reads, { columns: columns(), from: 't', where: 'n = 100000', target, scratch: path.join(dir, 'long.csv') }));
      expect(written).toEqual([{ path: target.path, rows: 1 }]);
      const [row] = await rowsOf(target.path);
      expect(String(row!.s)).toBe('x,"\n'.repeat(1_000_000));
    } finally {
      await sql`delete from t where n = 100000`;
    }
  });

  it('fails when the COPY fails midway, and when the writer fails, and stops either way', async () => {
    const target = { path: path.join(dir, 'broken.parquet'), metadata: {} };
    // Postgres fails on the row n = 2500, after it printed the ones before.
    const failing = columns().map((c) => (c.name === 'n' ? { ...c, read: '(1 / (2500 - n) * 0 + n)::text' } : c));
    await expect(inSnapshot((reads) => transfer(reads, { columns: failing, from: 't', where: 'n >= 0', target, scratch: path.join(dir, 'broken.fifo') }))).rejects.toThrow(/division by zero/);
    // DuckDB fails on the first value it cannot cast.
    const uncastable = columns().map((c) => (c.name === 'n' ? { ...c, read: `'not a number'` } : c));
    await expect(inSnapshot((reads) => transfer(reads, { columns: uncastable, from: 't', where: null, target, scratch: path.join(dir, 'broken.fifo') }))).rejects.toThrow(/not a number|convert/i);
    // Both lanes are free again.
    const again = await inSnapshot((reads) => Promise.all([0, 1].map((i) => transfer(reads, { columns: columns(), from: 't', where: 'n < 10', target: { path: path.join(dir, `again${i}.parquet`), metadata: {} }, scratch: path.join(dir, `again${i}.fifo`) }))));
    expect(again.map((w) => w[0]!.rows)).toEqual([11, 11]);
  });
});
