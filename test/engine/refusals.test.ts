// The guards of the one write path, end to end: a response tesync did not understand writes
// nothing, its resource is `invalid` with the body kept, and the run goes on; single
// unreadable cells make a resource `partial`, never `ok`.
import { sql } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { freshWarehouse, useSimulator } from '../helpers/mirror-fixture.ts';
import { createTestLogger, type TestWarehouse } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';

const fx = useSimulator({ tokens: 4, historyDays: 10, chartsPerToken: 1 });
// A warehouse of each case's own.
let tw: TestWarehouse;
beforeEach(async () => {
  tw = await freshWarehouse();
});

const state = async (resource: string) =>
  (await tw.warehouse.query<{ status: string; last_error: string | null; details: Record<string, unknown> | null }>(sql`select status, last_error, details from sync.resource_state where source = 'app' and resource = ${resource}`))[0];
const invalidBodies = (like: string) => tw.warehouse.query<{ body_text: string }>(sql`select body_text from sync.raw_responses where status = 'invalid' and path like ${like}`);
const rows = async (table: string, slug: string) => Number((await tw.warehouse.query<{ n: string }>(sql.raw(`select count(*)::text as n from ${table} where token_slug = '${slug}'`)))[0]!.n);

describe('understood or refused', () => {
  it('a list whose meta.count disagrees with it: nothing written, the body kept', async () => {
    const body = await (await fetch(`${fx.sim.url}/api/v1/screener`)).text();
    const wrong = body.replace(/"count":(\d+)/, (_m, n: string) => `"count":${Number(n) + 1}`);
    expect(wrong).not.toBe(body);
    fx.sim.script('/api/v1/screener', [{ status: 200, headers: { 'content-type': 'application/json' }, body: wrong }]);
    const run = await syncOnce(fx.sim, tw.warehouse, createTestLogger([], 'warn').logger, {}, ['app']);
    expect(run.status).toBe('partial');
    const s = await state('screener');
    expect(s?.status).toBe('invalid');
    expect(s?.last_error).toMatch(/meta\.count says \d+ items, the list has \d+/);
    expect(await invalidBodies('/api/v1/screener%')).toEqual([{ body_text: wrong }]);
    const [n] = await tw.warehouse.query<{ n: string }>(sql`select count(*)::text as n from app.screener_rows`);
    expect(n!.n).toBe('0');
    // The rest of the walk went on.
    const [h] = await tw.warehouse.query<{ n: string }>(sql`select count(*)::text as n from app.metric_history`);
    expect(Number(h!.n)).toBeGreaterThan(0);
  });

  it('a column read as numeric none of whose cells is a number: the history refused, one warning', async () => {
    const slug = fx.sim.data.appTokens().find((t) => t.coverage.metricHistory)!.slug;
    // Every answer, stream=all and stream by stream alike, carries the text column.
    const doc = (stream: string) => ({
      stream,
      interval: '1d',
      columns: [{ key: 'date', kind: 'time' }, { key: 'holderFcf', unit: 'USD', kind: 'rate' }, { key: 'grade', unit: 'x', kind: 'ratio' }],
      rows: [['2026-01-01', '1.5', 'high'], ['2026-01-02', '2.5', 'low']],
    });
    const streams = fx.sim.data.appHistory(slug)!.map((d) => d.stream);
    const all = JSON.stringify({ data: streams.map(doc), meta: { asOf: '2026-01-02T00:00:00Z', count: streams.length } });
    fx.sim.script(`/api/v1/tokens/${slug}/metrics/history?stream=all`, [{ status: 200, headers: { 'content-type': 'application/json' }, body: all }]);
    const one = (s: string) => [{ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: doc(s), meta: { asOf: '2026-01-02T00:00:00Z' } }) }];
    for (const s of streams) fx.sim.script(`/api/v1/tokens/${slug}/metrics/history?stream=${s}`, one(s));
    // Scripts match by prefix, first registered first: the default (no query) goes last.
    fx.sim.script(`/api/v1/tokens/${slug}/metrics/history`, one(streams[0]!));
    const log = createTestLogger([], 'info');
    const run = await syncOnce(fx.sim, tw.warehouse, log.logger, {}, ['app'], { tokens: [slug] });
    expect(run.status).toBe('partial');
    const s = await state(`token/${slug}/history`);
    expect(s?.status).toBe('invalid');
    expect(s?.last_error).toMatch(/"grade" read as numeric, but no cell is a number/);
    expect(await rows('app.metric_history', slug)).toBe(0);
    expect((await invalidBodies(`/api/v1/tokens/${slug}/metrics/history%`)).map((b) => b.body_text)).toContain(all);
    const warnings = log.lines().filter((l) => l.includes('"level":40') && l.includes('grade') && l.includes('read as numeric'));
    expect(warnings.length).toBeGreaterThanOrEqual(1);
  });

  it('a single unreadable cell: the resource partial with the counts, the rest written', async () => {
    const slug = fx.sim.data.appTokens().find((t) => t.coverage.snapshot)!.slug;
    const body = JSON.parse(await (await fetch(`${fx.sim.url}/api/v1/tokens/${slug}`)).text()) as { data: { row: Record<string, unknown> } };
    body.data.row.effectiveMarketCap = { metric: 'effectiveMarketCap', value: 'about a billion', unit: 'USD', kind: 'gauge' };
    fx.sim.script(`/api/v1/tokens/${slug}`, [{ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }]);
    const run = await syncOnce(fx.sim, tw.warehouse, createTestLogger([], 'warn').logger, {}, ['app'], { tokens: [slug] });
    expect(run.stats.failed).toBe(0);
    const s = await state(`token/${slug}/snapshot`);
    expect(s?.status).toBe('partial');
    expect(s?.details).toMatchObject({ unreadableCells: 1, unreadableByColumn: { '(fields)': 1 } });
    const [snap] = await tw.warehouse.query<{ emc: string | null; status: string; arr: string | null }>(
      sql`select effective_market_cap::text as emc, status, annualized_revenue::text as arr from app.token_snapshots where token_slug = ${slug}`,
    );
    expect(snap).toMatchObject({ emc: null, status: 'invalid' });
    expect(snap!.arr).not.toBeNull();
  });
});
