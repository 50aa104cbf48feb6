// Writes change only what changed: a resync that receives the same values rewrites no row of
// any mirrored table (no new fetch time, no new run id, no dead tuple), on both sources, and a
// changed value is rewritten.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { openWarehouse } from '../../src/store/connection.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger, type TestWarehouse } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const testLog = createTestLogger([appKey, gatewayKey]);

/** Rows of every app and gateway table written by a transaction that began after `since`. */
async function rowsWrittenSince(tw: TestWarehouse, since: bigint): Promise<Record<string, number>> {
  const tables = await tw.warehouse.query<{ t: string }>(
    sql`select quote_ident(table_schema) || '.' || quote_ident(table_name) as t from information_schema.tables where table_schema in ('app', 'gateway') and table_type = 'BASE TABLE' order by 1`,
  );
  expect(tables.length).toBeGreaterThan(20);
  const out: Record<string, number> = {};
  for (const { t } of tables) {
    // A fresh test database is far from xid wraparound: xmin compares as a plain number.
    const [row] = await tw.warehouse.query<{ n: number }>(sql.raw(`select count(*)::int as n from ${t} where xmin::text::bigint >= ${since}`));
    if (row!.n > 0) out[t] = row!.n;
  }
  return out;
}

/** Rows inserted, updated and deleted in app and gateway tables, as pg_stat_user_tables counts them (once they stop moving). */
async function tupleCounts(tw: TestWarehouse): Promise<{ ins: string; upd: string; del: string }> {
  const read = async () =>
    (await tw.warehouse.query<{ ins: string; upd: string; del: string }>(
      sql`select sum(n_tup_ins)::text as ins, sum(n_tup_upd)::text as upd, sum(n_tup_del)::text as del from pg_stat_user_tables where schemaname in ('app', 'gateway')`,
    ))[0]!;
  let last = await read();
  for (let i = 0; i < 50; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = await read();
    if (JSON.stringify(now) === JSON.stringify(last) && Number(now.ins) > 0) return now;
    last = now;
  }
  return last;
}

describe('an unchanged resync', () => {
  const fx = useSimAndWarehouse({ tokens: 6, historyDays: 30, chartsPerToken: 2, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });

  // Every sync on connections of its own, closed after it: a backend that exits has reported
  // its row counts to pg_stat_user_tables (an idle one reports them only seconds later).
  const syncAlone = async (full = false) => {
    const w = await openWarehouse({ databaseUrl: fx.databaseUrl, dataDir: '' });
    try {
      return await syncOnce(fx.sim, w, testLog.logger, { appKey, gatewayKey }, ['app', 'gateway'], { full });
    } finally {
      await w.close();
    }
  };

  it('asks only for the lists and what their markers say changed', async () => {
    const first = await syncAlone();
    expect(first.status).toBe('succeeded');
    fx.sim.resetRequests();
    const again = await syncAlone();
    expect(again.status).toBe('succeeded');
    // Catalogs and lists (app: metrics, tokens, screener; gateway: tokens, screener, openapi); nothing per token.
    expect(fx.sim.requests.map((r) => r.path.split('?')[0]).sort()).toEqual(['/api/v1/metrics', '/api/v1/screener', '/api/v1/tokens', '/openapi-product.json', '/v1/screener', '/v1/tokens']);
  });

  it('rewrites no row of any app or gateway table, even with --full; a revised value is rewritten', async () => {
    const first = await syncAlone();
    expect(first.status).toBe('succeeded');
    const tuplesBefore = await tupleCounts(fx.tw);
    const [{ xid }] = (await fx.warehouse.query<{ xid: string }>(sql`select txid_current()::text as xid`)) as [{ xid: string }];
    const again = await syncAlone(true);
    expect(again.status).toBe('succeeded');
    // Everything was received again; nothing was written.
    expect(again.stats.done).toBeGreaterThan(50);
    expect(again.stats.rows).toBe(0);
    expect(await rowsWrittenSince(fx.tw, BigInt(xid))).toEqual({});
    expect(await tupleCounts(fx.tw)).toEqual(tuplesBefore);

    // One value revised in place: that row, and only that row, is written again.
    await fx.warehouse.query(sql`update app.metric_history set value = value + 1 where (token_slug, stream, metric, ts) = (select token_slug, stream, metric, ts from app.metric_history order by 1, 2, 3, 4 limit 1)`);
    const [{ xid: before }] = (await fx.warehouse.query<{ xid: string }>(sql`select txid_current()::text as xid`)) as [{ xid: string }];
    const third = await fx.sync(testLog.logger, { appKey, gatewayKey }, ['app'], { full: true });
    expect(third.status).toBe('succeeded');
    expect(await rowsWrittenSince(fx.tw, BigInt(before))).toEqual({ 'app.metric_history': 1, 'app.metric_history_history': 1 });
  });
});
