// Volatile fields make no version (contract: time and history): a full resync of responses
// that differ from the last ones only in `servedAt`, `asOf` and `generatedAt` (the simulator's
// recomputations) adds no row to any `T_history` and rewrites no row of `T`, on both sources;
// the newest `asOf` is in sync.resource_state. A real change under moved instants still makes
// its versions. On Postgres and on the embedded server.
import { sql } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { VERSIONED } from '../../src/schema/warehouse/history.ts';
import { openWarehouse } from '../../src/store/connection.ts';
import { canaryKey, createTestLogger, type TestWarehouse } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';
import { useSimAndWarehouseOn } from '../helpers/mirror-fixture.ts';
import { BOTH_SERVERS } from '../helpers/servers.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const testLog = createTestLogger([appKey, gatewayKey]);

/** Every history table, from the declarations. */
const HISTORY_TABLES = VERSIONED.map((t) => {
  const c = getTableConfig(t);
  return `${c.schema}.${c.name}_history`;
});

/** Rows of every app and gateway table written by a transaction that began after `since` (none: `{}`). */
async function rowsWrittenSince(tw: TestWarehouse, since: bigint): Promise<Record<string, number>> {
  const tables = await tw.warehouse.query<{ t: string }>(
    sql`select quote_ident(table_schema) || '.' || quote_ident(table_name) as t from information_schema.tables where table_schema in ('app', 'gateway') and table_type = 'BASE TABLE' order by 1`,
  );
  const out: Record<string, number> = {};
  for (const { t } of tables) {
    // A fresh test database is far from xid wraparound: xmin compares as a plain number.
    const [row] = await tw.warehouse.query<{ n: number }>(sql.raw(`select count(*)::int as n from ${t} where xmin::text::bigint >= ${since}`));
    if (row!.n > 0) out[t] = row!.n;
  }
  return out;
}

async function historyCounts(tw: TestWarehouse): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of HISTORY_TABLES) out[t] = (await tw.warehouse.query<{ n: number }>(sql.raw(`select count(*)::int as n from ${t}`)))[0]!.n;
  return out;
}

/** The tables whose count grew, and by how much. */
function grown(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).flatMap(([t, n]) => (n !== before[t] ? [[t, n - (before[t] ?? 0)]] : [])));
}

describe.each(BOTH_SERVERS)('volatile fields on %s', (_label, start) => {
  const fx = useSimAndWarehouseOn(start, { tokens: 6, historyDays: 8, chartsPerToken: 2, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });

  const sync = async (full: boolean) => {
    const w = await openWarehouse({ databaseUrl: fx.databaseUrl, dataDir: '' });
    try {
      const run = await syncOnce(fx.sim, w, testLog.logger, { appKey, gatewayKey }, ['app', 'gateway'], { full });
      expect(run.status).toBe('succeeded');
      return run;
    } finally {
      await w.close();
    }
  };
  const xid = async () => BigInt((await fx.warehouse.query<{ x: string }>(sql`select txid_current()::text as x`))[0]!.x);
  const stateAsOf = async (source: string, resource: string) =>
    (await fx.warehouse.query<{ a: string | null }>(sql`select to_char(as_of at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') as a from sync.resource_state where source = ${source} and resource = ${resource}`))[0]?.a;

  it('lists every versioned table', () => {
    expect(HISTORY_TABLES.length).toBeGreaterThan(20);
  });

  it('responses that differ only in servedAt, asOf and generatedAt make 0 versions and rewrite no row', async () => {
    await sync(false);
    const base = await historyCounts(fx.tw);
    const asOf0 = await stateAsOf('app', 'tokens');
    expect(asOf0).toMatch(/T00:00:00$/);

    // Recomputation 1: every asOf and generatedAt a minute later; then one per response.
    for (const r of [1, 'eachResponse'] as const) {
      fx.sim.setRecomputation(r);
      const since = await xid();
      const run = await sync(true);
      // Everything was received again (--full); nothing was written.
      expect(run.stats.done).toBeGreaterThan(50);
      expect(run.stats.rows).toBe(0);
      expect(grown(base, await historyCounts(fx.tw))).toEqual({});
      expect(await rowsWrittenSince(fx.tw, since)).toEqual({});
    }
    // The instants did move: the newest is the resource's state, not the rows'.
    expect(await stateAsOf('app', 'tokens')).not.toBe(asOf0);
    const [row] = await fx.warehouse.query<{ a: string; p: string }>(
      sql`select to_char(as_of at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') as a, payload->'row'->'effectiveMarketCap'->>'asOf' as p from app.token_snapshots order by token_slug limit 1`,
    );
    expect(row!.a).toBe(asOf0);
    expect(row!.p?.startsWith(asOf0!.slice(0, 10)) ?? true).toBe(true);
  });

  it('a real change under moved instants still makes its versions', async () => {
    const before = await historyCounts(fx.tw);
    // Upstream adds a field to every token list item, recomputed again: each token is a new version.
    fx.sim.setForms({ addedFields: { 'app.tokens': 'extra' } });
    fx.sim.setRecomputation(7);
    const since = await xid();
    await sync(true);
    const tokens = (await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from app.tokens where delisted_at is null`))[0]!.n;
    expect(tokens).toBeGreaterThan(0);
    expect(grown(before, await historyCounts(fx.tw))).toEqual({ 'app.tokens_history': tokens });
    expect(await rowsWrittenSince(fx.tw, since)).toEqual({ 'app.tokens': tokens, 'app.tokens_history': tokens });

    // A verdict is not volatile: a stored snapshot whose freshness status differs is written again.
    fx.sim.setForms({ addedFields: {} });
    await sync(true);
    await fx.warehouse.query(sql`update app.token_snapshots set payload = jsonb_set(payload, '{freshness,status}', '"stale"') where token_slug = (select min(token_slug) from app.token_snapshots)`);
    const mid = await historyCounts(fx.tw);
    const since2 = await xid();
    fx.sim.setRecomputation(8);
    await sync(true);
    // The day's archive follows the row it archives.
    expect(await rowsWrittenSince(fx.tw, since2)).toEqual({ 'app.token_snapshots': 1, 'app.token_snapshots_daily': 1, 'app.token_snapshots_history': 1 });
    expect(grown(mid, await historyCounts(fx.tw))).toEqual({ 'app.token_snapshots_history': 1 });
  });
});
