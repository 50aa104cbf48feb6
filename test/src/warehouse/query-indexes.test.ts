// The query shapes docs/warehouse.md documents ("Query shapes the indexes serve") use an index,
// on Postgres and on the embedded server, over a history large enough that a planner would
// rather scan if no index served: read as they are, and through the as-of functions.
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse, type Warehouse } from '../../../src/warehouse/connection.ts';
import { startOwnPostgres, type OwnPostgres } from '../../helpers/own-servers.ts';
import { createTestWarehouse, type TestWarehouse } from '../../helpers/services.ts';

const doc = readFileSync(new URL('../../../docs/warehouse.md', import.meta.url), 'utf8');
const shapes = new Map([...doc.matchAll(/```sql\n-- shape: ([\w-]+)\n([\s\S]*?)```/g)].map((m) => [m[1]!, m[2]!.replace(/^--.*\n/gm, '').trim().replace(/;$/, '')]));

/** 60 tokens x 3 streams x 7 metrics x 120 days of history, and every token's last 30 days revised once. */
async function fill(w: Warehouse): Promise<void> {
  await w.query(sql`
    insert into app.metric_history (token_slug, stream, metric, ts, interval, value, fetched_at)
    select case when t = 0 then 'aurora' else 'token-' || t end, s, m, timestamptz '2026-01-01T00:00:00Z' + d * interval '1 day', '1d', (t * 1000 + d)::numeric / 7, timestamptz '2026-05-01T00:00:00Z'
    from generate_series(0, 59) t, unnest(array['aggregate', 'fees', 'buybacks']) s,
         unnest(array['holderFcf', 'effectiveMarketCap', 'erm7d', 'erm30d', 'erm90d', 'erm180d', 'erm365d']) m, generate_series(0, 119) d`);
  await w.query(sql`
    insert into app.metric_history_history (token_slug, stream, metric, ts, interval, value, status, fetched_at, known_from, known_to)
    select token_slug, stream, metric, ts, interval, value - 1, status, fetched_at - interval '30 days', fetched_at - interval '30 days', fetched_at
    from app.metric_history where ts >= timestamptz '2026-03-31T00:00:00Z'`);
  await w.query(sql`analyze app.metric_history`);
  await w.query(sql`analyze app.metric_history_history`);
}

async function plan(w: Warehouse, query: string): Promise<string> {
  const rows = await w.query<{ 'QUERY PLAN': string }>(sql.raw(`explain ${query}`));
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

describe.each([
  ['Postgres', 'postgres'],
  ['the embedded server', 'embedded'],
] as const)('documented query shapes on %s', (_label, kind) => {
  let w: Warehouse;
  let tw: TestWarehouse | undefined;
  let own: OwnPostgres | undefined;
  beforeAll(async () => {
    if (kind === 'postgres') {
      tw = await createTestWarehouse();
      w = tw.warehouse;
    } else {
      own = await startOwnPostgres('tesync-shapes');
      w = await openWarehouse({ databaseUrl: own.url, dataDir: '' });
      await w.migrate();
    }
    await fill(w);
  }, 120_000);
  afterAll(async () => {
    if (tw) await tw.cleanup();
    else await w?.close();
    await own?.cleanup();
  });

  it('the docs document both shapes', () => {
    expect([...shapes.keys()].sort()).toEqual(['metric-across-tokens', 'token-series']);
  });

  it('one metric across tokens on a day uses (metric, ts), on the table and through its as-of function', async () => {
    const q = shapes.get('metric-across-tokens')!;
    const [rows] = await w.query<{ n: number }>(sql.raw(`select count(*)::int as n from (${q}) x`));
    expect(rows!.n).toBe(180);
    expect(await plan(w, q)).toMatch(/Index (Only )?Scan using metric_history_metric_ts_idx|Bitmap Index Scan on metric_history_metric_ts_idx/);
    const asOf = await plan(w, q.replace('from app.metric_history', "from app.metric_history_as_of('2026-04-15T00:00:00Z')"));
    expect(asOf).toMatch(/on metric_history_metric_ts_idx|using metric_history_metric_ts_idx/);
    // The versions: by (metric, ts), through its btree or the no-overlap constraint's GiST
    // index, which holds the key and the range (the planner picks the cheaper).
    expect(asOf).toMatch(/(on|using) metric_history_history_(metric_ts_idx|no_overlap)/);
    expect(asOf).not.toMatch(/Seq Scan/);
  });

  it("one token's series over a range uses the key, on the table and through its as-of function", async () => {
    const q = shapes.get('token-series')!;
    const [rows] = await w.query<{ n: number }>(sql.raw(`select count(*)::int as n from (${q}) x`));
    expect(rows!.n).toBe(60);
    expect(await plan(w, q)).toMatch(/metric_history_token_slug_stream_metric_ts_pk/);
    const asOf = await plan(w, q.replace('from app.metric_history', "from app.metric_history_as_of('2026-04-15T00:00:00Z')"));
    expect(asOf).toMatch(/metric_history_token_slug_stream_metric_ts_pk/);
    // Whichever of its indexes the planner prefers for the versions.
    expect(asOf).toMatch(/Index (Only )?Scan using metric_history_history_\w+|Bitmap Index Scan on metric_history_history_\w+/);
    expect(asOf).not.toMatch(/Seq Scan/);
  });

  it('the wide daily view reads one token through the key', async () => {
    const p = await plan(w, `select * from analytics.app_pfcf_daily where token_slug = 'aurora' and stream = 'aggregate' and day between '2026-01-01' and '2026-03-01'`);
    expect(p).toMatch(/metric_history_token_slug_stream_metric_ts_pk/);
    expect(p).not.toMatch(/Seq Scan/);
  });
});
