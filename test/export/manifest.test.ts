// Pure: a manifest is understood whole or refused (src/export/manifest.ts): every path one
// tesync writes inside its folder, every entry's parts its path's; format 1 read for its paths.
import { describe, expect, it } from 'vitest';
import { filePath, filePathParts, FORMAT, ManifestError, manifestText, parseManifest, type Manifest, type ManifestFile } from '../../src/export/manifest.ts';

const file = (over: Partial<ManifestFile> = {}): ManifestFile => ({
  path: 'app.screener_daily/snapshot_date=2026-12-01/part-0123456789ab-0.parquet',
  table: 'app.screener_daily',
  kind: 'archive',
  partition: '2026-12-01',
  asOf: null,
  knownAt: '2026-12-07T01:00:00.000000Z',
  schema: '0030_x',
  rows: 3,
  sha256: 'a'.repeat(64),
  columns: { multiple_30d: { sourceType: 'numeric', type: 'DECIMAL(38,12)', precision: 38, scale: 12, asString: false } },
  ...over,
});
const manifest = (files: ManifestFile[]): Manifest => ({ format: FORMAT, tesync: '0.1.0', schema: '0030_x', database: 'db/1', knownAt: '2026-12-07T01:00:00.000000Z', files, tables: { 'app.screener_daily': { kind: 'archive', horizon: '1:2:' } } });
const refusal = (text: string) => {
  try {
    parseManifest(text);
  } catch (err) {
    expect(err).toBeInstanceOf(ManifestError);
    return (err as Error).message;
  }
  throw new Error('understood');
};

describe('parseManifest', () => {
  it('reads back what manifestText wrote', () => {
    const asOf = file({ path: 'asof=2026-12-01T00:00:00.000001Z/app.tokens/part-0123456789ab-0.parquet', table: 'app.tokens', kind: 'asOf', partition: null, asOf: '2026-12-01T00:00:00.000001Z' });
    const m = manifest([file(), asOf]);
    expect(parseManifest(manifestText(m))).toEqual(m);
    expect(manifestText(m).split('\n').filter((l) => l.includes('"sha256"'))).toHaveLength(2);
  });

  it('refuses paths out of the folder, entries unlike their paths, and what is not a manifest', () => {
    expect(refusal('not json{')).toMatch(/not JSON/);
    expect(refusal('null')).toMatch(/not a JSON object/);
    expect(refusal(JSON.stringify({ ...manifest([]), files: null }))).toMatch(/"files" is not a list/);
    expect(refusal(JSON.stringify({ ...manifest([]), tables: null }))).toMatch(/"tables" is not an object/);
    expect(refusal(JSON.stringify({ ...manifest([]), format: 9 }))).toMatch(/format is 9/);
    for (const p of ['../victim/x.parquet', '/etc/x.parquet', 'app.tokens/../../x.parquet', 'app.tokens/./x.parquet', 'app.tokens\\..\\x.parquet', 'app.tokens/x.txt', 'app.screener_daily/snapshot_date=../x.parquet']) {
      expect(refusal(JSON.stringify(manifest([file({ path: p })]))), p).toMatch(/not one an export writes inside its folder/);
    }
    expect(refusal(JSON.stringify(manifest([file({ partition: '../../../../victim' })])))).toMatch(/partition or asOf is not its path's/);
    expect(refusal(JSON.stringify(manifest([file({ table: 'app.tokens' })])))).toMatch(/not its path's/);
    expect(refusal(JSON.stringify(manifest([file({ kind: 'current' })])))).toMatch(/kind "current" is not its path's/);
    expect(refusal(JSON.stringify(manifest([file({ rows: -1 })])))).toMatch(/rows is not a count/);
    expect(refusal(JSON.stringify(manifest([file({ sha256: 'x' })])))).toMatch(/sha256 is not a hash/);
    expect(refusal(JSON.stringify(manifest([file(), file()])))).toMatch(/twice/);
  });

  it('reads a format-1 manifest for the paths it names, each checked alike', () => {
    const old = { format: 1, files: [{ path: 'app.tokens/data_0.parquet', table: 'app.tokens' }] };
    expect(parseManifest(JSON.stringify(old))).toEqual({ format: 1, files: [{ path: 'app.tokens/data_0.parquet' }] });
    expect(refusal(JSON.stringify({ format: 1, files: [{ path: '../../x/data_0.parquet' }] }))).toMatch(/not one an export writes/);
  });

  it('filePath and filePathParts agree', () => {
    for (const f of [{ table: 'app.tokens', partition: null, asOf: null }, { table: 'app.screener_daily', partition: '2026-12-01', asOf: null }, { table: 'app.tokens', partition: null, asOf: '2026-12-01T00:00:00.000000Z' }]) {
      expect(filePathParts(filePath(f, 'part-0123456789ab-0.parquet'))).toEqual({ ...f, name: 'part-0123456789ab-0.parquet' });
    }
  });
});
