// A small `tesync export` directory, written with DuckDB (@duckdb/node-api) in the layout
// `tesync export` writes (manifest format 2, src/export/manifest.ts), for
// examples/read_export.py: `_manifest.json`, each file with its kind, its own types and the
// instant it was read at; a daily archive Hive-partitioned by snapshot_date whose days were
// written by exports that chose different decimal scales; the current tables; an as-of cut;
// history tables with known_from and known_to; app.metric_history, a current table whose name
// ends in _history, written as text in one file and as DECIMAL in another. Four tokens synced
// at T0, T1, T2: at T1 aurora's 30-day P/FCF is revised and cobalt delisted, at T2 delta's P/FCF
// is revised.
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { FORMAT, type FileKind, type Manifest, type ManifestColumn, type ManifestFile } from '../../src/export/manifest.ts';

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
export const ARCHIVE_DAYS: { day: string; scale: number; rows: Row[]; by: number }[] = [
  { day: '2026-11-26', scale: 9, rows: [screener('aurora', '12.345678901', T0), screener('basalt', '20.500000000', T0)], by: 0 },
  { day: '2026-11-27', scale: 18, rows: [screener('aurora', '25.123456789012345678', T1), screener('basalt', '20.500000000000000000', T0)], by: 1 },
  { day: '2026-11-28', scale: 18, rows: [screener('aurora', '25.123456789012345678', T1), screener('delta', '30.000000000000000001', T2)], by: 2 },
];

/** The three exports into the folder (a day a day): each names its files `part-<id>-<n>.parquet`. */
export const EXPORTS = [
  { id: '5e1a0c3b9d01', knownAt: '2026-11-26T12:00:00.000000Z' },
  { id: '5e1a0c3b9d02', knownAt: '2026-11-27T12:00:00.000000Z' },
  { id: '5e1a0c3b9d03', knownAt: '2026-11-28T12:00:00.000000Z' },
] as const;
export const KNOWN_AT = EXPORTS[2].knownAt;

/** app.metric_history (a current table, not history): its `value` is text in the current file (a NaN) and DECIMAL(38,4) in the as-of cut. */
const metricColumns = (value: string): Column[] => [col('token_slug', 'VARCHAR'), col('stream', 'VARCHAR'), col('metric', 'VARCHAR'), col('ts', 'TIMESTAMPTZ'), col('value', value, true), col('fetched_at', 'TIMESTAMPTZ')];
const metric = (slug: string, value: string, fetchedAt: string): Row => [slug, 'revenue', 'fcf', T0, value, fetchedAt];

const sqlText = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** A manifest entry's columns: a column's types as written in its file. */
function manifestColumns(columns: Column[]): Record<string, ManifestColumn> {
  return Object.fromEntries(
    columns.map((k): [string, ManifestColumn] => {
      const decimal = /^DECIMAL\((\d+),(\d+)\)$/.exec(k.type);
      if (decimal) return [k.name, { sourceType: 'numeric', type: k.type, precision: Number(decimal[1]), scale: Number(decimal[2]), asString: false }];
      if (k.numeric) return [k.name, { sourceType: 'numeric', type: 'VARCHAR', precision: 38, scale: 0, asString: true }];
      return [k.name, { sourceType: k.type.toLowerCase(), type: k.type }];
    }),
  );
}

export interface FixtureOptions {
  /** The history tables also hold the current versions (known_to null), as an export may write them; otherwise only the earlier ones, as the warehouse's `T_history` does. */
  historyHoldsCurrent: boolean;
  /** Only the history tables and the as-of cut of the same tables at K2: no archive, no current table (`tesync export --as-of K2 --tables app.tokens,app.screener_rows,app.tokens_history,app.screener_rows_history`). */
  historyOnly?: boolean;
}

/** Writes the export into `dir`; returns its manifest. */
export async function writeExportFixture(dir: string, o: FixtureOptions): Promise<Manifest> {
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  await c.run(`SET TimeZone = 'UTC'`);
  const files: ManifestFile[] = [];
  const tables: Manifest['tables'] = {};
  const last = EXPORTS[2];

  async function write(table: string, kind: FileKind, columns: Column[], rows: Row[], extra: { partition?: string; asOf?: string; by?: (typeof EXPORTS)[number] } = {}) {
    const by = extra.by ?? last;
    const rel = `${extra.asOf ? `asof=${extra.asOf}/` : ''}${table}/${extra.partition ? `snapshot_date=${extra.partition}/` : ''}part-${by.id}-0.parquet`;
    const file = path.join(dir, ...rel.split('/'));
    await mkdir(path.dirname(file), { recursive: true });
    const values = rows.map((r) => `(${r.map((v) => (v === null ? 'NULL' : sqlText(v))).join(', ')})`).join(', ');
    const names = columns.map((_, i) => `c${i}`);
    const select = columns.map((k, i) => `CAST(c${i} AS ${k.type}) AS "${k.name}"`).join(', ');
    await c.run(`COPY (SELECT ${select} FROM (VALUES ${values}) v(${names.join(', ')})) TO ${sqlText(file)} (FORMAT parquet)`);
    const sha256 = createHash('sha256').update(await readFile(file)).digest('hex');
    files.push({ path: rel, table, kind, partition: extra.partition ?? null, asOf: extra.asOf ?? null, knownAt: by.knownAt, schema: '0042_fixture', rows: rows.length, sha256, columns: manifestColumns(columns) });
    tables[table] = { kind: kind === 'archive' ? 'archive' : kind === 'history' ? 'history' : 'versioned' };
  }

  if (!o.historyOnly) {
    for (const d of ARCHIVE_DAYS) {
      await write('app.screener_daily', 'archive', screenerColumns(d.scale), d.rows, { partition: d.day, by: EXPORTS[d.by] });
    }
    tables['app.screener_daily']!.horizon = '1042:1042:';
  }

  // The current tables, as after T2; app.tokens unchanged since the second export, which wrote it.
  const tokensNow = [token('aurora', null, T0), token('basalt', null, T0), token('cobalt', T1, T1), token('delta', null, T0)];
  const screenerNow = [screener('aurora', PFCF.aurora1, T1), screener('basalt', PFCF.basalt, T0), screener('cobalt', PFCF.cobalt, T0), screener('delta', PFCF.delta2, T2)];
  if (!o.historyOnly) {
    await write('app.tokens', 'current', tokenColumns, tokensNow, { by: EXPORTS[1] });
    await write('app.screener_rows', 'current', screenerColumns(12), screenerNow);
    await write('app.metric_history', 'current', metricColumns('VARCHAR'), [metric('aurora', '1.5', T0), metric('delta', 'NaN', T2)]);
  }

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
  await write('app.tokens_history', 'history', [...tokenColumns, ...versionColumns], tokenVersions);
  await write('app.screener_rows_history', 'history', [...screenerColumns(18), ...versionColumns], screenerVersions);

  // The as-of cut at K2: T_as_of(K2).
  await write('app.tokens', 'asOf', tokenColumns, [token('aurora', null, T0), token('basalt', null, T0), token('cobalt', T1, T1), token('delta', null, T0)], { asOf: K2 });
  await write('app.screener_rows', 'asOf', screenerColumns(18), [
    screener('aurora', PFCF.aurora1, T1),
    screener('basalt', PFCF.basalt, T0),
    screener('cobalt', PFCF.cobalt, T0),
    screener('delta', PFCF.delta0, T0),
  ], { asOf: K2 });
  if (!o.historyOnly) await write('app.metric_history', 'asOf', metricColumns('DECIMAL(38,4)'), [metric('aurora', '1.5000', T0), metric('delta', '2.2500', T0)], { asOf: K2 });
  c.closeSync();
  instance.closeSync();
  const manifest: Manifest = { format: FORMAT, tesync: 'fixture', schema: '0042_fixture', database: 'fixture', knownAt: KNOWN_AT, files, tables };
  await writeFile(path.join(dir, '_manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

