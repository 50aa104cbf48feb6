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
import type { Manifest } from '../../src/export/manifest.ts';
import { ARCHIVE_DAYS, EMC, type FixtureOptions, K1, K2, KNOWN_AT, PFCF, WIDE, writeExportFixture } from './export-fixture.ts';
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
  const fixture = async (name: string, o: FixtureOptions) => {
    const dir = path.join(scratch, name);
    return { dir, manifest: await writeExportFixture(dir, o) };
  };
  /** The manifest of `dir`, changed by `change`. */
  const editManifest = async (dir: string, change: (m: Manifest) => void) => {
    const file = path.join(dir, '_manifest.json');
    const m = JSON.parse(await readFile(file, 'utf8')) as Manifest;
    change(m);
    await writeFile(file, JSON.stringify(m));
  };

  it('DuckDB reading the days together would cut digits: the days were written with different scales', async () => {
    // Why the example reads one read_parquet per group of types: DuckDB gives a DECIMAL column
    // read from files of scales 9 and 18 the smaller scale, and cuts the other file's digits silently.
    const { dir } = await fixture('cut-digits', { historyHoldsCurrent: false });
    const instance = await DuckDBInstance.create(':memory:');
    const c = await instance.connect();
    const glob = path.join(dir, 'app.screener_daily', '*', '*.parquet').replaceAll("'", "''");
    const read = await c.runAndReadAll(`select multiple_30d::varchar as v from read_parquet('${glob}', hive_partitioning = true) where snapshot_date = DATE '2026-11-27' and token_slug = 'aurora'`);
    c.closeSync();
    instance.closeSync();
    expect(ARCHIVE_DAYS[1]!.rows[0]![2]).toBe('25.123456789012345678');
    expect(read.getRowsJson()).toEqual([['25.123456789']]);
  });

  /** K1's and K2's picks: the P/FCF as known then, trailing zeros of a file's scale aside. */
  const expectPicks = (stdout: string) => {
    const picks = linesOf(stdout, 'asof').map(([at, rank, slug, pfcf, emc]) => [at, rank, slug, trimmed(pfcf!), emc]);
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
  };

  for (const historyHoldsCurrent of [false, true]) {
    it(`lists it by kind, reads the archive across days, makes text-written numbers Decimal, and picks as of instants from the history tables (history ${historyHoldsCurrent ? 'with' : 'without'} the current versions)`, async () => {
      const { dir } = await fixture(`export-${historyHoldsCurrent}`, { historyHoldsCurrent });
      const out = await readExport(dir, K1, K2);
      expect(out.stderr).toBe('');
      expect(out.code).toBe(0);

      // What the manifest holds, each table by its kind: app.metric_history is a current table.
      const holds = linesOf(out.stdout, 'holds');
      expect(holds).toContainEqual(['app.screener_daily', 'daily archive', '3 files', '6 rows', '2026-11-26..2026-11-28 (3 days)']);
      expect(holds).toContainEqual(['app.tokens', 'table', '1 files', '4 rows']);
      expect(holds).toContainEqual(['app.tokens', `as of ${K2}`, '1 files', '4 rows']);
      expect(holds).toContainEqual(['app.tokens_history', 'history', '1 files', `${historyHoldsCurrent ? 5 : 1} rows`]);
      expect(holds).toContainEqual(['app.metric_history', 'table', '1 files', '2 rows']);
      expect(holds).toContainEqual(['app.metric_history', `as of ${K2}`, '1 files', '2 rows']);
      expect(holds.filter((l) => l[1] === 'history').map((l) => l[0])).toEqual(['app.screener_rows_history', 'app.tokens_history']);
      // Text-written numbers by each file's own types: app.metric_history.value is text in its current file only.
      expect(linesOf(out.stdout, 'string').map((l) => l.slice(0, 3))).toEqual([
        ['app.metric_history.value', 'table', '1 of 1 files'],
        ['app.screener_daily.annualized_revenue', 'daily archive', '3 of 3 files'],
        ['app.screener_rows.annualized_revenue', 'table', '1 of 1 files'],
        ['app.screener_rows.annualized_revenue', `as of ${K2}`, '1 of 1 files'],
        ['app.screener_rows_history.annualized_revenue', 'history', '1 of 1 files'],
      ]);
      expect(linesOf(out.stdout, 'verified')).toEqual([["11 files match the manifest's sha256 and types"]]);

      // The archive across days: every digit of each day's file, whatever its scale; the text-written column as the 43 digits.
      expect(linesOf(out.stdout, 'day')).toEqual(ARCHIVE_DAYS.map((d) => ['app.screener_daily', d.day, `${d.rows.length} rows`]));
      expect(linesOf(out.stdout, 'series')).toEqual([
        ['app.screener_daily', 'token_slug', 'snapshot_date', 'annualized_revenue', 'effective_market_cap', 'multiple_30d'],
        ...ARCHIVE_DAYS.map((d) => ['app.screener_daily', 'aurora', d.day, WIDE, EMC, d.rows.find((r) => r[0] === 'aurora')![2]!]),
      ]);
      expect(linesOf(out.stdout, 'newest')).toEqual(ARCHIVE_DAYS[2]!.rows.map((r) => ['app.screener_daily', '2026-11-28', r[0]!, WIDE, EMC, r[2]!]));
      expect(linesOf(out.stdout, 'polars')).toEqual([['not installed: skipped (pip install polars)']]);

      // K1 from the history (with the current table where the history holds the earlier versions
      // only); K2 from the as-of cut, which the history's rows equal.
      const fromHistory = historyHoldsCurrent ? 'the history' : 'the history and the current table';
      expect(linesOf(out.stdout, 'from')).toEqual([
        [K1, 'app.tokens', fromHistory],
        [K1, 'app.screener_rows', fromHistory],
        [K2, 'app.tokens', 'the as-of cut'],
        [K2, 'app.screener_rows', 'the as-of cut'],
      ]);
      expect(linesOf(out.stdout, 'cut')).toEqual([
        [K2, 'app.tokens', '4 rows by known_from and known_to', 'the as-of cut: 4 rows', 'the same'],
        [K2, 'app.screener_rows', '4 rows by known_from and known_to', 'the as-of cut: 4 rows', 'the same'],
      ]);
      expectPicks(out.stdout);

      // By default: at the export's as-of cuts.
      const byDefault = await readExport(dir);
      expect(byDefault.code, byDefault.stderr).toBe(0);
      expect(linesOf(byDefault.stdout, 'asof').map((l) => [l[0], l[2]])).toEqual([[K2, 'delta'], [K2, 'basalt'], [K2, 'aurora']]);
    });
  }

  it('history tables alone with an as-of cut of the same tables: the cut answers its instant, the earlier versions all in it; another instant exits 1 saying what the export holds', async () => {
    const { dir } = await fixture('history-only', { historyHoldsCurrent: false, historyOnly: true });
    const out = await readExport(dir);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(linesOf(out.stdout, 'archive')).toEqual([['none in this export']]);
    expect(linesOf(out.stdout, 'holds').map((l) => l.slice(0, 2))).toEqual([
      ['app.screener_rows', `as of ${K2}`],
      ['app.screener_rows_history', 'history'],
      ['app.tokens', `as of ${K2}`],
      ['app.tokens_history', 'history'],
    ]);
    expect(linesOf(out.stdout, 'cut')).toEqual([
      [K2, 'app.tokens', '0 earlier versions by known_from and known_to', 'the as-of cut: 4 rows', 'all in it'],
      [K2, 'app.screener_rows', '1 earlier versions by known_from and known_to', 'the as-of cut: 4 rows', 'all in it'],
    ]);
    expect(linesOf(out.stdout, 'asof').map((l) => [l[0], l[2]])).toEqual([[K2, 'delta'], [K2, 'basalt'], [K2, 'aurora']]);

    // K1: no cut there, and the history without the current versions cannot say alone.
    const k1 = await readExport(dir, K1);
    expect(k1.code).toBe(1);
    expect(k1.stderr).not.toContain('Traceback');
    expect(k1.stderr).toContain(`INSTANT ${K1}: the export cannot say app.tokens as of ${K1}: its app.tokens_history holds the earlier versions only`);
    expect(k1.stderr).toContain(`It holds app.tokens (as of ${K2}), app.tokens_history (history)`);
    expect(linesOf(k1.stdout, 'asof')).toEqual([]);
  });

  it('history tables alone holding the current versions answer any instant they cover', async () => {
    const { dir } = await fixture('history-only-open', { historyHoldsCurrent: true, historyOnly: true });
    const out = await readExport(dir, K1, K2);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(linesOf(out.stdout, 'from').filter((l) => l[0] === K1)).toEqual([
      [K1, 'app.tokens', 'the history'],
      [K1, 'app.screener_rows', 'the history'],
    ]);
    expectPicks(out.stdout);
  });

  it('an instant is UTC unless it carries an offset, kept to the microsecond: the same cut by any spelling', async () => {
    const { dir } = await fixture('spellings', { historyHoldsCurrent: false });
    for (const spelling of ['2026-11-28T00:00:00Z', '2026-11-28 00:00:00', '2026-11-28T09:00:00+09:00', '2026-11-27T19:00:00.000000-05:00']) {
      const out = await readExport(dir, spelling);
      expect(out.code, `${spelling}: ${out.stderr}`).toBe(0);
      expect(linesOf(out.stdout, 'from'), spelling).toEqual([
        [K2, 'app.tokens', 'the as-of cut'],
        [K2, 'app.screener_rows', 'the as-of cut'],
      ]);
    }
    // A microsecond after the cut: not the cut, answered from the history.
    const after = await readExport(dir, '2026-11-28T00:00:00.000001Z');
    expect(after.code, after.stderr).toBe(0);
    expect(linesOf(after.stdout, 'from').map((l) => l.slice(0, 1).concat(l.slice(2)))).toEqual([
      ['2026-11-28T00:00:00.000001Z', 'the history and the current table'],
      ['2026-11-28T00:00:00.000001Z', 'the history and the current table'],
    ]);
  });

  it('an instant it cannot answer exits 1 naming it and what the export holds: before the history, after the export, or not an instant', async () => {
    const { dir } = await fixture('unanswerable', { historyHoldsCurrent: false });
    const before = await readExport(dir, '2026-11-01T00:00:00Z');
    expect(before.code).toBe(1);
    expect(before.stderr).toContain('INSTANT 2026-11-01T00:00:00.000000Z: the export cannot say app.tokens as of 2026-11-01T00:00:00.000000Z: it is before the history it holds (from 2026-11-26 10:00:00+00)');
    expect(before.stderr).toContain(`It holds app.tokens (as of ${K2}), app.tokens (table), app.tokens_history (history)`);
    expect(linesOf(before.stdout, 'asof')).toEqual([]);
    const later = await readExport(dir, '2026-12-01T00:00:00Z');
    expect(later.code).toBe(1);
    expect(later.stderr).toContain(`INSTANT 2026-12-01T00:00:00.000000Z: 2026-12-01T00:00:00.000000Z is after the export's knownAt (${KNOWN_AT})`);
    const garbled = await readExport(dir, 'yesterday');
    expect(garbled.code).toBe(1);
    expect(garbled.stderr).toContain("'yesterday' is not an instant");
    const finer = await readExport(dir, '2026-11-28T00:00:00.0000001Z');
    expect(finer.code).toBe(1);
    expect(finer.stderr).toContain('finer than a microsecond');
    for (const out of [before, later, garbled, finer]) expect(out.stderr).not.toContain('Traceback');

    // Neither history nor a cut: exit 1 when asked for an instant, a line saying so when not.
    await editManifest(dir, (m) => {
      m.files = m.files.filter((f) => f.kind !== 'history' && f.kind !== 'asOf');
    });
    const none = await readExport(dir, KNOWN_AT);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`the export cannot say app.tokens as of ${KNOWN_AT}: it holds neither app.tokens_history nor an as-of cut at ${KNOWN_AT}. It holds app.tokens (table)`);
  });

  it('a file that is not the one the manifest lists stops it, naming the file', async () => {
    const { dir, manifest } = await fixture('changed', { historyHoldsCurrent: false });
    const rel = manifest.files.find((f) => f.table === 'app.tokens' && f.kind === 'current')!.path;
    const file = path.join(dir, ...rel.split('/'));
    const bytes = await readFile(file);
    const at = bytes.length - 10;
    bytes[at] = bytes[at]! ^ 0xff;
    await writeFile(file, bytes);
    const out = await readExport(dir);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`${rel}: sha256`);
    expect(out.stdout).not.toMatch(/^asof\t/m);
  });

  it("a manifest whose types are not its files' stops it, naming the file and the column (a scale, or DECIMAL said of a text column)", async () => {
    const { dir, manifest } = await fixture('types', { historyHoldsCurrent: false });
    const day = manifest.files.find((f) => f.partition === '2026-11-26')!;
    await editManifest(dir, (m) => {
      m.files.find((f) => f.path === day.path)!.columns.multiple_30d = { sourceType: 'numeric', type: 'DECIMAL(38,18)', precision: 38, scale: 18, asString: false };
    });
    const scale = await readExport(dir);
    expect(scale.code).toBe(1);
    expect(scale.stderr).toContain(`${day.path}: column multiple_30d is DECIMAL(38,9) in the file, the manifest says DECIMAL(38,18)`);

    const { dir: dir2, manifest: m2 } = await fixture('types-text', { historyHoldsCurrent: false });
    const current = m2.files.find((f) => f.table === 'app.screener_rows' && f.kind === 'current')!;
    await editManifest(dir2, (m) => {
      m.files.find((f) => f.path === current.path)!.columns.annualized_revenue = { sourceType: 'numeric', type: 'DECIMAL(38,0)', precision: 38, scale: 0, asString: false };
    });
    const text = await readExport(dir2);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain(`${current.path}: column annualized_revenue is VARCHAR in the file, the manifest says DECIMAL(38,0)`);
  });

  it('says what it needs: a directory, and a manifest of the format it reads', async () => {
    const none = await py(['examples/read_export.py'], { PYTHONPATH: STAND_IN });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('usage: python3 examples/read_export.py DIR');
    for (const format of [1, 3]) {
      const dir = path.join(scratch, `format-${format}`);
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, '_manifest.json'), JSON.stringify({ format, knownAt: K2, files: [], tables: {} }));
      const other = await readExport(dir);
      expect(other.code).toBe(1);
      expect(other.stderr).toContain(`is of format ${format}`);
      expect(other.stderr).toContain('this notebook reads format 2');
    }
  });
});
