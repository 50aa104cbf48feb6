// The Python examples without a warehouse: examples/tesync_db.py names the driver a plain
// postgres:// URL leaves out (psycopg when this SQLAlchemy can use it, else psycopg2, else a
// message saying what to install, never the password); every example compiles; and
// examples/read_export.py reads a `tesync export` directory exactly. This machine has no duckdb
// or polars Python package, so read_export.py runs on a stand-in for DuckDB's Python package
// that runs its SQL in DuckDB itself (@duckdb/node-api: test/docs/duckdb-stand-in/), against an
// export written in the export's layout by test/docs/export-fixture.ts.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARCHIVE_DAYS, EMC, K1, K2, PFCF, WIDE, writeExportFixture } from './export-fixture.ts';
import { pythonWithModules, ROOT, run } from './python.ts';

const EXAMPLES = path.join(ROOT, 'examples');
const STAND_IN = path.join(ROOT, 'test', 'docs', 'duckdb-stand-in');

let python: string;
let scratch: string;

beforeAll(async () => {
  python = await pythonWithModules('examples/*.py');
  scratch = await mkdtemp(path.join(tmpdir(), 'tesync-py-examples-'));
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** A folder holding Python packages of these names, each `__init__.py` with this body. */
async function packages(name: string, modules: Record<string, string>): Promise<string> {
  const dir = path.join(scratch, name);
  for (const [module, body] of Object.entries(modules)) {
    await mkdir(path.join(dir, module), { recursive: true });
    await writeFile(path.join(dir, module, '__init__.py'), body);
  }
  return dir;
}

/** Runs `python -B` (no __pycache__ left in the repository) with this environment added. */
const py = (args: string[], extraEnv: Record<string, string> = {}) => run(python, ['-B', ...args], { extraEnv });

describe('examples/tesync_db.py: the driver a DATABASE_URL leaves out', () => {
  it('names psycopg or psycopg2, keeps a driver the URL names and the rest of the URL, and says what to install (test/docs/check_tesync_db.py)', async () => {
    const out = await py(['test/docs/check_tesync_db.py']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^ok \d+$/m);
    expect(Number(/^ok (\d+)$/m.exec(out.stdout)![1])).toBeGreaterThan(30);
  });

  it('picks psycopg only where this SQLAlchemy has its dialect (2.0 and later): a psycopg that imports is not enough', async () => {
    const version = await run(python, ['-c', 'import sqlalchemy; print(sqlalchemy.__version__)']);
    expect(version.code).toBe(0);
    const expected = Number(version.stdout.split('.')[0]) >= 2 ? 'psycopg' : 'psycopg2';
    const psycopg = await packages('psycopg-stand-in', { psycopg: '' });
    const out = await py(['test/docs/check_tesync_db.py'], { PYTHONPATH: psycopg, EXPECT_DRIVER: expected });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`ok this python picks ${expected}`);
  });

  it('backtest.py and history.py without a driver: exit 1 with what to install, no traceback, never the password', async () => {
    const hidden = await packages('no-drivers', {
      psycopg: 'raise ImportError("psycopg hidden by the test")',
      psycopg2: 'raise ImportError("psycopg2 hidden by the test")',
    });
    for (const script of ['examples/backtest.py', 'examples/history.py']) {
      const out = await py([script], { PYTHONPATH: hidden, DATABASE_URL: 'postgres://analyst:s3cr3t-pw@127.0.0.1:1/tesync?sslmode=disable' });
      expect(out.code, `${script}: ${out.stderr}`).toBe(1);
      expect(out.stdout).toBe('');
      expect(out.stderr).toContain('pip install "psycopg[binary]"');
      expect(out.stderr).toContain('psycopg2-binary');
      expect(out.stderr).toContain('postgres://analyst:***@127.0.0.1:1/tesync');
      expect(out.stderr).not.toContain('s3cr3t-pw');
      expect(out.stderr).not.toContain('Traceback');
    }
  });
});

describe('examples/*.py compile', () => {
  it('py_compile accepts every example, read_export.py included (its duckdb and polars are not installed here)', async () => {
    const scripts = (await readdir(EXAMPLES)).filter((f) => f.endsWith('.py'));
    expect(scripts).toEqual(expect.arrayContaining(['backtest.py', 'history.py', 'read_export.py', 'tesync_db.py']));
    // PYTHONPYCACHEPREFIX: the compiled files go to the scratch folder, not examples/__pycache__.
    const out = await run(python, ['-m', 'py_compile', ...scripts.map((f) => path.join(EXAMPLES, f))], { extraEnv: { PYTHONPYCACHEPREFIX: path.join(scratch, 'pycache') } });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
  });
});

/** Printed lines of one kind, without the kind. */
const linesOf = (stdout: string, kind: string) =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith(`${kind}\t`))
    .map((l) => l.split('\t').slice(1));

/** A decimal's digits without the zeros its scale adds: files of different scales print 20.500000000000 or 20.500000000000000000. */
const trimmed = (s: string) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);

describe('examples/read_export.py reads a `tesync export` directory exactly (DuckDB stand-in)', () => {
  const readExport = (dir: string, ...instants: string[]) =>
    py(['examples/read_export.py', dir, ...instants], { PYTHONPATH: STAND_IN, NODE: process.execPath });

  it('DuckDB reading the days together would cut digits: the days were written with different scales', async () => {
    // Why the example reads one read_parquet per schema: DuckDB gives a DECIMAL column read from
    // files of scales 9 and 18 the smaller scale, and cuts the other file's digits silently.
    const dir = path.join(scratch, 'cut-digits');
    await writeExportFixture(dir, { historyHoldsCurrent: false });
    const instance = await DuckDBInstance.create(':memory:');
    const c = await instance.connect();
    const glob = path.join(dir, 'app.screener_daily', '*', '*.parquet').replaceAll("'", "''");
    const read = await c.runAndReadAll(`select multiple_30d::varchar as v from read_parquet('${glob}', hive_partitioning = true) where snapshot_date = DATE '2026-11-27' and token_slug = 'aurora'`);
    c.closeSync();
    expect(ARCHIVE_DAYS[1]!.rows[0]![2]).toBe('25.123456789012345678');
    expect(read.getRowsJson()).toEqual([['25.123456789']]);
  });

  for (const historyHoldsCurrent of [false, true]) {
    it(`lists it, reads the archive across days, makes string-flagged numbers Decimal, and picks as of instants from the history tables (history ${historyHoldsCurrent ? 'with' : 'without'} the current versions)`, async () => {
      const dir = path.join(scratch, `export-${historyHoldsCurrent}`);
      await writeExportFixture(dir, { historyHoldsCurrent });
      const out = await readExport(dir, K1, K2);
      expect(out.stderr).toBe('');
      expect(out.code).toBe(0);

      // What the manifest holds.
      expect(linesOf(out.stdout, 'holds')).toContainEqual(['app.screener_daily', 'daily archive', '3 files', '6 rows', '2026-11-26..2026-11-28 (3 days)']);
      expect(linesOf(out.stdout, 'holds')).toContainEqual(['app.tokens', `as of ${K2}`, '1 files', '4 rows']);
      expect(linesOf(out.stdout, 'string').map((l) => l[0])).toContain('app.screener_daily.annualized_revenue');
      expect(linesOf(out.stdout, 'verified')).toEqual([["9 files match the manifest's sha256"]]);

      // The archive across days: every digit of each day's file, whatever its scale; the string-flagged column as the 43 digits.
      expect(linesOf(out.stdout, 'day')).toEqual(ARCHIVE_DAYS.map((d) => ['app.screener_daily', d.day, `${d.rows.length} rows`]));
      expect(linesOf(out.stdout, 'series')).toEqual([
        ['app.screener_daily', 'token_slug', 'snapshot_date', 'annualized_revenue', 'effective_market_cap', 'multiple_30d'],
        ...ARCHIVE_DAYS.map((d) => ['app.screener_daily', 'aurora', d.day, WIDE, EMC, d.rows.find((r) => r[0] === 'aurora')![2]!]),
      ]);
      expect(linesOf(out.stdout, 'newest')).toEqual(ARCHIVE_DAYS[2]!.rows.map((r) => ['app.screener_daily', '2026-11-28', r[0]!, WIDE, EMC, r[2]!]));
      expect(linesOf(out.stdout, 'polars')).toEqual([['not installed: skipped (pip install polars)']]);

      // As of K2 the history's rows are the export's as-of cut; the picks are what was known then.
      expect(linesOf(out.stdout, 'cut')).toEqual([
        [K2, 'app.tokens', '4 rows by known_from and known_to', 'the as-of cut: 4 rows', 'the same'],
        [K2, 'app.screener_rows', '4 rows by known_from and known_to', 'the as-of cut: 4 rows', 'the same'],
      ]);
      const picks = linesOf(out.stdout, 'asof').map(([at, rank, slug, pfcf, emc]) => [at, rank, slug, trimmed(pfcf!), emc]);
      expect(picks).toEqual([
        // K1: cobalt still listed, aurora and delta before their revisions (18 decimals, from the history).
        [K1, '1', 'cobalt', PFCF.cobalt, EMC],
        [K1, '2', 'aurora', PFCF.aurora0, EMC],
        [K1, '3', 'delta', PFCF.delta0, EMC],
        // K2: cobalt delisted, aurora revised, delta not yet.
        [K2, '1', 'delta', PFCF.delta0, EMC],
        [K2, '2', 'basalt', trimmed(PFCF.basalt), EMC],
        [K2, '3', 'aurora', PFCF.aurora1, EMC],
      ]);

      // By default: at the export's as-of cuts.
      const byDefault = await readExport(dir);
      expect(byDefault.code, byDefault.stderr).toBe(0);
      expect(linesOf(byDefault.stdout, 'asof').map((l) => [l[0], l[2]])).toEqual([[K2, 'delta'], [K2, 'basalt'], [K2, 'aurora']]);
    });
  }

  it('a file that is not the one the manifest lists stops it, naming the file', async () => {
    const dir = path.join(scratch, 'changed');
    await writeExportFixture(dir, { historyHoldsCurrent: false });
    const file = path.join(dir, 'app.tokens', 'data_0.parquet');
    const bytes = await readFile(file);
    const at = bytes.length - 10;
    bytes[at] = bytes[at]! ^ 0xff;
    await writeFile(file, bytes);
    const out = await readExport(dir);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('app.tokens/data_0.parquet: sha256');
    expect(out.stdout).not.toMatch(/^asof\t/m);
  });

  it('says what it needs: a directory, and a manifest of the format it reads', async () => {
    const none = await py(['examples/read_export.py'], { PYTHONPATH: STAND_IN });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('usage: python3 examples/read_export.py DIR');
    const dir = path.join(scratch, 'format-2');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, '_manifest.json'), JSON.stringify({ format: 2, knownAt: K2, files: [], tables: {} }));
    const other = await readExport(dir);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('is of format 2; this notebook reads format 1');
  });
});
