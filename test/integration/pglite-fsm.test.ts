// The empty free-space maps written beside an embedded warehouse's indexes: every index gets
// one when the warehouse is migrated, none is overwritten, and Postgres takes them as its
// own: bulk writes that split index pages, deletes and VACUUM (which records the freed index
// pages in the maps), after which amcheck finds every index sound and the rows all there.
import { amcheck } from '@electric-sql/pglite/contrib/amcheck';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricHistory } from '../../schema/warehouse/app.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { addFreeSpaceMaps, INDEX_FILES_SQL } from '../../src/warehouse/pglite-fsm.ts';
import { upsertRows } from '../../src/warehouse/upsert.ts';

let dir: string;
let folder: string;
let w: Warehouse | undefined;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tesync-fsm-'));
  folder = path.join(dir, 'warehouse');
  w = await openWarehouse({ dataDir: dir });
  await w.migrate();
});
afterAll(async () => {
  await w?.close();
  rmSync(dir, { recursive: true, force: true });
});

const indexFiles = async () => (await w!.query<{ path: string }>(sql.raw(INDEX_FILES_SQL))).map((r) => path.join(folder, r.path));

describe('free-space maps for the embedded warehouse indexes', () => {
  it('gives every index an empty one-page map when the warehouse is migrated', async () => {
    const files = await indexFiles();
    // The contract's tables each have a primary key, and TOAST tables an index of their own.
    expect(files.length).toBeGreaterThan(20);
    for (const f of files) {
      const map = readFileSync(`${f}_fsm`);
      expect(map.byteLength).toBe(8192);
      expect(map.every((b) => b === 0)).toBe(true);
    }
  });

  it('never overwrites a map that exists, and skips an index without a file', async () => {
    const [first] = await indexFiles();
    writeFileSync(`${first}_fsm`, Buffer.alloc(8192, 1));
    const written = addFreeSpaceMaps(folder, [{ path: path.relative(folder, first!) }, { path: 'base/1/999999999' }], 8192);
    expect(written).toBe(0);
    expect(readFileSync(`${first}_fsm`)[0]).toBe(1);
    writeFileSync(`${first}_fsm`, Buffer.alloc(8192));
  });

  it('is taken by Postgres as its own: writes, deletes and VACUUM leave sound indexes and every row', async () => {
    const target = [metricHistory.tokenSlug, metricHistory.stream, metricHistory.metric, metricHistory.ts];
    const meta = { fetchedAt: new Date(), asOf: null, freshness: null, runId: null, status: 'ok' };
    // Two tokens of 40 000 rows, written interleaved: many page splits in the middle of the index.
    const write = async (tokens: string[]) => {
      for (let part = 0; part < 4; part++) {
        for (const token of tokens) {
          const rows = Array.from({ length: 10_000 }, (_, i) => ({ tokenSlug: token, stream: 'all', metric: `metric-${i % 40}`, ts: new Date(Date.UTC(2020, 0, 1) + (part * 250 + Math.floor(i / 40)) * 86_400_000), interval: '1d', value: `${part}.${i}`, unit: 'usd', kind: null, ...meta }));
          await upsertRows(w!.db, metricHistory, rows, { target });
        }
      }
    };
    await write(['b', 'a']);
    // Deleting a token empties index pages, which VACUUM records in the map.
    const [pk] = await indexFiles().then((fs) => fs.filter((f) => statSync(f).size > 1_000_000));
    expect(pk).toBeDefined();
    const sizeBefore = statSync(pk!).size;
    await w!.query(sql`delete from app.metric_history where token_slug = 'b'`);
    await w!.query(sql`vacuum app.metric_history`);
    // Pages deleted by one VACUUM are recycled by a later one, once no transaction can see them.
    await w!.query(sql`insert into app.metric_history (token_slug, stream, metric, ts, fetched_at) values ('c', 'all', 'm', now(), now())`);
    await w!.query(sql`vacuum app.metric_history`);
    expect(statSync(`${pk}_fsm`).size).toBeGreaterThan(8192);
    // The token written again takes the recycled pages from the map: the index hardly grows.
    await write(['b']);
    expect(statSync(pk!).size).toBeLessThan(sizeBefore * 1.1);
    const [count] = await w!.query<{ n: string }>(sql`select count(*)::text as n from app.metric_history where token_slug in ('a', 'b')`);
    expect(count!.n).toBe('80000');
    await w!.close();
    w = undefined;

    const pg = await PGlite.create(folder, { extensions: { amcheck } });
    try {
      await pg.exec('create extension if not exists amcheck');
      const checked = await pg.query<{ n: number }>(`select count(*)::int as n from (select bt_index_check(c.oid, true) from pg_class c join pg_am am on am.oid = c.relam where c.relkind = 'i' and am.amname = 'btree' and c.oid >= 16384) s`);
      expect(checked.rows[0]!.n).toBeGreaterThan(20);
      const rows = await pg.query<{ n: number }>(`select count(*)::int as n from app.metric_history`);
      expect(rows.rows[0]!.n).toBe(80_001);
    } finally {
      await pg.close();
    }
  });
});
