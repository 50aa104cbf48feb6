// A small `tesync export` directory, written with DuckDB (@duckdb/node-api) in the layout
// `tesync export` writes (contract.md, "Out of Postgres: Parquet"; src/export/manifest.ts), for
// examples/read_export.py: `_manifest.json`; a daily archive Hive-partitioned by snapshot_date
// whose days were written by exports that chose different decimal scales; the current tables;
// an as-of cut; history tables with known_from and known_to. Four tokens synced at T0, T1, T2:
// at T1 aurora's 30-day P/FCF is revised and cobalt delisted, at T2 delta's P/FCF is revised.
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { FORMAT, type Manifest, type ManifestColumn, type ManifestFile } from '../../src/export/manifest.ts';

export const T0 = '2026-11-26T10:00:00.000000Z';
export const T1 = '2026-11-27T10:00:00.000000Z';
export const T2 = '2026-11-28T10:00:00.000000Z';
/** Between T0 and T1, and between T1 and T2: the as-of cut is at K2. */
export const K1 = '2026-11-27T00:00:00.000000Z';
export const K2 = '2026-11-28T00:00:00.000000Z';

/** 43 digits: more than DECIMAL(38,s) holds, so the export writes it as a string. */
export const WIDE = '123456789012345678901234567890123456789012.5';
/** 36 digits: DECIMAL(38,2). */
export const EMC = '1234567890123456789012345678901234.56';

interface Column {
  name: string;
  /** DuckDB's type written; a numeric written as a string is `VARCHAR` with `numeric: true`. */
  type: string;
  numeric?: boolean;
}

type Row = (string | null)[];

const col = (name: string, type: string, numeric = false): Column => ({ name, type, numeric: numeric || type.startsWith('DECIMAL') });

const screenerColumns = (scale: number): Column[] => [
  col('token_slug', 'VARCHAR'),
  col('effective_market_cap', 'DECIMAL(38,2)'),
  col('multiple_30d', `DECIMAL(38,${scale})`),
  col('annualized_revenue', 'VARCHAR', true),
  col('payload', 'VARCHAR'),
  col('fetched_at', 'TIMESTAMPTZ'),
];
const tokenColumns: Column[] = [col('slug', 'VARCHAR'), col('coverage_metric_history', 'BOOLEAN'), col('delisted_at', 'TIMESTAMPTZ'), col('fetched_at', 'TIMESTAMPTZ')];
const versionColumns: Column[] = [col('known_from', 'TIMESTAMPTZ'), col('known_to', 'TIMESTAMPTZ'), col('closing_raw_response_id', 'BIGINT')];

/** A screener row: token, P/FCF, fetched_at. */
const screener = (slug: string, pfcf: string, fetchedAt: string): Row => [slug, EMC, pfcf, WIDE, `{"slug":"${slug}"}`, fetchedAt];
const token = (slug: string, delistedAt: string | null, fetchedAt: string): Row => [slug, 'true', delistedAt, fetchedAt];

/** The P/FCF of each version. */
export const PFCF = {
  aurora0: '12.345678901234567891',
  aurora1: '25.123456789012',
  basalt: '20.500000000000',
  cobalt: '8.000000000001',
  delta0: '15.100000000000000009',
  delta2: '30.000000000001',
};

/** The daily archive: each day's rows, and the scale of multiple_30d in its file. */
export const ARCHIVE_DAYS: { day: string; scale: number; rows: Row[] }[] = [
  { day: '2026-11-26', scale: 9, rows: [screener('aurora', '12.345678901', T0), screener('basalt', '20.500000000', T0)] },
  { day: '2026-11-27', scale: 18, rows: [screener('aurora', '25.123456789012345678', T1), screener('basalt', '20.500000000000000000', T0)] },
  { day: '2026-11-28', scale: 18, rows: [screener('aurora', '25.123456789012345678', T1), screener('delta', '30.000000000000000001', T2)] },
];

const sqlText = (s: string) => `'${s.replaceAll("'", "''")}'`;

/**
 * Writes the export into `dir`. `historyHoldsCurrent`: the history tables also hold the current
 * versions (known_to null), as an export may write them; otherwise only the earlier ones, as the
 * warehouse's `T_history` does.
 */
export async function writeExportFixture(dir: string, o: { historyHoldsCurrent: boolean }): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  await c.run(`SET TimeZone = 'UTC'`);
  const files: ManifestFile[] = [];
  const tables: Manifest['tables'] = {};

  async function write(rel: string, table: string, columns: Column[], rows: Row[], extra: { partition?: string; asOf?: string } = {}) {
    const file = path.join(dir, ...rel.split('/'));
    await mkdir(path.dirname(file), { recursive: true });
    const values = rows.map((r) => `(${r.map((v) => (v === null ? 'NULL' : sqlText(v))).join(', ')})`).join(', ');
    const names = columns.map((_, i) => `c${i}`);
    const select = columns.map((k, i) => `CAST(c${i} AS ${k.type}) AS "${k.name}"`).join(', ');
    await c.run(`COPY (SELECT ${select} FROM (VALUES ${values}) v(${names.join(', ')})) TO ${sqlText(file)} (FORMAT parquet)`);
    const sha256 = createHash('sha256').update(await readFile(file)).digest('hex');
    files.push({ path: rel, table, partition: extra.partition ?? null, asOf: extra.asOf ?? null, rows: rows.length, sha256 });
    tables[table] = {
      columns: Object.fromEntries(
        columns.map((k): [string, ManifestColumn] => {
          const decimal = /^DECIMAL\((\d+),(\d+)\)$/.exec(k.type);
          if (decimal) return [k.name, { sourceType: 'numeric', type: k.type, precision: Number(decimal[1]), scale: Number(decimal[2]), asString: false }];
          if (k.numeric) return [k.name, { sourceType: 'numeric', type: 'VARCHAR', precision: 38, scale: 0, asString: true }];
          return [k.name, { sourceType: k.type.toLowerCase(), type: k.type }];
        }),
      ),
    };
  }

  for (const d of ARCHIVE_DAYS) {
    await write(`app.screener_daily/snapshot_date=${d.day}/data_0.parquet`, 'app.screener_daily', screenerColumns(d.scale), d.rows, { partition: d.day });
  }

  // The current tables, as after T2.
  const tokensNow = [token('aurora', null, T0), token('basalt', null, T0), token('cobalt', T1, T1), token('delta', null, T0)];
  const screenerNow = [screener('aurora', PFCF.aurora1, T1), screener('basalt', PFCF.basalt, T0), screener('cobalt', PFCF.cobalt, T0), screener('delta', PFCF.delta2, T2)];
  await write('app.tokens/data_0.parquet', 'app.tokens', tokenColumns, tokensNow);
  await write('app.screener_rows/data_0.parquet', 'app.screener_rows', screenerColumns(12), screenerNow);

  // The earlier versions, [known_from, known_to), closed by response 7 and 9; with the current
  // ones (known_to null) when the export writes them too. The history's scale (18) is not the
  // current table's (12).
  const closed = (row: Row, from: string, to: string, closing: string): Row => [...row, from, to, closing];
  const open = (row: Row): Row => [...row, row.at(-1)!, null, null];
  const tokenVersions = [closed(token('cobalt', null, T0), T0, T1, '7')];
  const screenerVersions = [closed(screener('aurora', PFCF.aurora0, T0), T0, T1, '7'), closed(screener('delta', PFCF.delta0, T0), T0, T2, '9')];
  if (o.historyHoldsCurrent) {
    tokenVersions.push(...tokensNow.map(open));
    screenerVersions.push(...screenerNow.map(open));
  }
  await write('app.tokens_history/data_0.parquet', 'app.tokens_history', [...tokenColumns, ...versionColumns], tokenVersions);
  await write('app.screener_rows_history/data_0.parquet', 'app.screener_rows_history', [...screenerColumns(18), ...versionColumns], screenerVersions);

  // The as-of cut at K2: T_as_of(K2) of both tables.
  const cut = `asof=${K2}`;
  await write(`${cut}/app.tokens/data_0.parquet`, 'app.tokens', tokenColumns, [token('aurora', null, T0), token('basalt', null, T0), token('cobalt', T1, T1), token('delta', null, T0)], { asOf: K2 });
  await write(`${cut}/app.screener_rows/data_0.parquet`, 'app.screener_rows', screenerColumns(18), [
    screener('aurora', PFCF.aurora1, T1),
    screener('basalt', PFCF.basalt, T0),
    screener('cobalt', PFCF.cobalt, T0),
    screener('delta', PFCF.delta0, T0),
  ], { asOf: K2 });
  c.closeSync();
  const manifest: Manifest = { format: FORMAT, tesync: 'fixture', schema: 'fixture', database: 'fixture', knownAt: '2026-11-28T12:00:00.000000Z', files, tables };
  await writeFile(path.join(dir, '_manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}
