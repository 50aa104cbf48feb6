// The query shapes docs/warehouse.md documents ("Query shapes the indexes serve", and the as-of
// reads of "Time and history") use an index, on Postgres and on the embedded server, over a
// history large enough that a planner would rather scan if no index served: read as they are,
// and through the as-of functions, with the instant a literal, a lateral column or a parameter.
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/store/connection.ts';
import { patience } from '../helpers/patience.ts';
import { useTestWarehouse } from '../helpers/mirror-fixture.ts';
import { BOTH_SERVERS } from '../helpers/servers.ts';
import { docExample, withDecisions } from '../docs/doc-examples.ts';

const doc = readFileSync(new URL('../../docs/warehouse.md', import.meta.url), 'utf8');
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
  // The universe, its screener and its streams: 60 tokens, each with a version a day for 120 days.
  await w.query(sql`
    insert into app.tokens (slug, payload, coverage_metric_history, fetched_at)
    select case when t = 0 then 'aurora' else 'token-' || t end, '{}', true, timestamptz '2026-05-01T00:00:00Z' from generate_series(0, 59) t`);
  await w.query(sql`
    insert into app.screener_rows (token_slug, multiple_30d, payload, fetched_at)
    select slug, 10 + length(slug), '{}', fetched_at from app.tokens`);
  await w.query(sql`
    insert into app.token_streams (token_slug, stream_key, payload, fetched_at)
    select slug, s, '{}', fetched_at from app.tokens, unnest(array['fees', 'buybacks']) s`);
  for (const table of ['tokens', 'screener_rows', 'token_streams']) {
    const [c] = await w.query<{ cols: string }>(
      sql`select string_agg(quote_ident(attname), ', ' order by attnum) as cols from pg_attribute where attrelid = ${`app.${table}`}::regclass and attnum > 0 and not attisdropped`,
    );
    await w.query(sql.raw(`
      insert into app.${table}_history (${c!.cols}, known_from, known_to)
      select ${c!.cols.replace('"fetched_at"', "fetched_at - d * interval '1 day'")}, fetched_at - d * interval '1 day', fetched_at - (d - 1) * interval '1 day'
      from app.${table}, generate_series(1, 120) d`));
  }
  await w.query(sql`insert into sync.runs (id, trigger, status, started_at, finished_at) values (gen_random_uuid(), 'test', 'succeeded', timestamptz '2026-05-02T00:00:00Z', timestamptz '2026-05-02T00:10:00Z')`);
  await w.query(sql`analyze`);
}

/** The docs' backtest `name` at 30 daily instants in the versions' span. */
function atThirtyInstants(name: string): string {
  const decisions = "  select timestamptz '2026-04-05T00:00:00Z' + i * interval '1 day' as at from generate_series(1, 30) i";
  return withDecisions(docExample(name, doc), decisions).replace(/;\s*$/, '');
}

async function plan(w: Warehouse, query: string): Promise<string> {
  const rows = await w.query<{ 'QUERY PLAN': string }>(sql.raw(`explain ${query}`));
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

describe.each(BOTH_SERVERS)('documented query shapes on %s', (_label, start) => {
  const w = useTestWarehouse({ on: start });
  beforeAll(async () => {
    await fill(w);
  }, patience(120_000));

  it('the docs document both shapes', () => {
    expect([...shapes.keys()].sort()).toEqual(['as-of-after-last-run', 'metric-across-tokens', 'token-series']);
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

  it('a whole table as of an instant finds the versions holding then through the period index, not a scan', async () => {
    for (const table of ['tokens', 'screener_rows']) {
      const p = await plan(w, `select * from app.${table}_as_of('2026-03-01T00:00:00Z')`);
      expect(p).toMatch(new RegExp(`(on|using) ${table}_history_no_overlap`));
      expect(p).not.toMatch(new RegExp(`Seq Scan on ${table}_history`));
    }
    const [n] = await w.query<{ n: number }>(sql`select count(*)::int as n from app.screener_rows_as_of('2026-03-01T00:00:00Z')`);
    expect(n!.n).toBe(60);
  });

  it("the instant as a lateral column costs what a literal costs: one token's series through the key", async () => {
    const q = shapes.get('as-of-after-last-run')!;
    const [rows] = await w.query<{ n: number }>(sql.raw(`select count(*)::int as n from (${q}) x`));
    expect(rows!.n).toBe(120);
    const p = await plan(w, q);
    expect(p).toMatch(/metric_history_token_slug_stream_metric_ts_pk/);
    expect(p).toMatch(/(on|using) metric_history_history_\w+/);
    expect(p).not.toMatch(/Seq Scan on metric_history|Function Scan/);
    // And as a parameter, as a driver binds it: the generic plan a prepared statement keeps.
    const generic = await w.db.transaction(async (tx) => {
      await tx.execute(sql`set local plan_cache_mode = force_generic_plan`);
      await tx.execute(sql.raw(`prepare as_of_param(timestamptz) as select m.ts, m.value from app.metric_history_as_of($1) m where m.token_slug = 'aurora' and m.stream = 'aggregate' and m.metric = 'erm30d'`));
      const rows = (await tx.execute(sql.raw(`explain execute as_of_param('2026-05-02T00:10:00Z')`))) as unknown as { 'QUERY PLAN': string }[];
      await tx.execute(sql`deallocate as_of_param`);
      return [...rows].map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(generic).toMatch(/metric_history_token_slug_stream_metric_ts_pk/);
    expect(generic).not.toMatch(/Seq Scan on metric_history|Function Scan/);
  });

  it('the form the docs warn against is what they say: a sub-select in the call is not inlined', async () => {
    const p = await plan(w, "select m.ts from app.metric_history_as_of((select max(finished_at) from sync.runs)) m where m.token_slug = 'aurora'");
    expect(p).toMatch(/Function Scan on metric_history_as_of/);
  });

  it("the docs' backtests at 30 instants read every table through its indexes", async () => {
    for (const name of ['backtest-no-look-ahead', 'backtest-history']) {
      const q = atThirtyInstants(name);
      const p = await plan(w, q);
      expect(p, name).not.toMatch(/Seq Scan on \w+_history|Function Scan on \w+_as_of/);
      expect(p, name).toMatch(/(on|using) tokens_history_no_overlap/);
      const rows = await w.query<{ at: string }>(sql.raw(q));
      expect(new Set(rows.map((r) => String(r.at))).size, name).toBe(30);
      expect(rows.length, name).toBe(90);
    }
    const history = await plan(w, atThirtyInstants('backtest-history'));
    expect(history).toMatch(/Index Scan Backward using metric_history_token_slug_stream_metric_ts_pk/);
  });

  it('the wide daily view reads one token through the key', async () => {
    const p = await plan(w, `select * from analytics.app_pfcf_daily where token_slug = 'aurora' and stream = 'aggregate' and day between '2026-01-01' and '2026-03-01'`);
    expect(p).toMatch(/metric_history_token_slug_stream_metric_ts_pk/);
    expect(p).not.toMatch(/Seq Scan/);
  });
});
