// App history end to end in every form of `stream=all` the contract lists, and mixtures of
// them across tokens and seeds: after one sync app.metric_history is the simulator's dataset,
// exactly. The streams state different intervals, units and kinds (the simulator's
// historyStreams 'distinct'), so every row must carry its own stream's, not another's.
// A response whose streams cannot be told apart is refused (body kept `invalid`,
// nothing of it written) and the streams are fetched one by one instead, then straight away.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { AppHistory, Simulator } from '../../../sim/index.ts';
import type { SimForms } from '../../../sim/types.ts';
import { HISTORY_METRICS } from '../../../sim/metrics-catalog.ts';
import { freshSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { createTestLogger, type TestWarehouse } from '../../helpers/services.ts';
import { syncOnce } from '../../helpers/sync.ts';

/** A simulator in these forms and a warehouse, the case's own. */
const setUp = (seed: number, forms: Partial<SimForms>) => freshSimAndWarehouse({ seed, tokens: 8, historyDays: 20, chartsPerToken: 1, forms, historyStreams: 'distinct' });

/** Every stored history value, `slug|stream|metric|day` → `value|interval|unit|kind`. */
async function stored(tw: TestWarehouse): Promise<Map<string, string | null>> {
  const rows = await tw.warehouse.query<{ k: string; v: string | null }>(
    sql`select token_slug || '|' || stream || '|' || metric || '|' || to_char(ts at time zone 'UTC', 'YYYY-MM-DD') as k,
               concat_ws('|', coalesce(value::text, 'null'), coalesce(interval, 'null'), coalesce(unit, 'null'), coalesce(kind, 'null')) as v
        from app.metric_history`,
  );
  return new Map(rows.map((r) => [r.k, r.v]));
}

/** The dataset's, each value with its own stream's interval and its column's unit and kind. */
function truth(sim: Simulator): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const t of sim.data.appTokens()) {
    for (const doc of sim.data.appHistory(t.slug) ?? []) {
      for (const row of doc.rows) {
        for (const [metric, value] of Object.entries(row.values)) {
          const col = doc.columns.find((c) => c.key === metric);
          out.set(`${t.slug}|${doc.stream}|${metric}|${row.date}`, [value ?? 'null', doc.interval, col?.unit ?? 'null', col?.kind ?? 'null'].join('|'));
        }
      }
    }
  }
  return out;
}

/** What a stream states of itself, as `stored` and `truth` write it after the value. */
const metaOf = (doc: AppHistory, metric: string) => {
  const col = doc.columns.find((c) => c.key === metric);
  return [doc.interval, col?.unit ?? 'null', col?.kind ?? 'null'].join('|');
};
const historied = (sim: Simulator) => sim.data.appTokens().filter((t) => t.coverage.metricHistory).map((t) => t.slug);
/** The tokens whose streams state different intervals, units or kinds. */
const differing = (sim: Simulator) =>
  historied(sim).filter((slug) => new Set((sim.data.appHistory(slug) ?? []).map((d) => JSON.stringify([d.interval, d.columns]))).size > 1);

/**
 * Every stored row's interval, unit and kind are its own stream's, and for a token whose
 * streams differ, no row has another stream's where they differ (the dataset's are not one value).
 */
async function expectOwnStreamMeta(sim: Simulator, tw: TestWarehouse): Promise<void> {
  const rows = await tw.warehouse.query<{ slug: string; stream: string; metric: string; meta: string; n: string }>(
    sql`select token_slug as slug, stream, metric, concat_ws('|', coalesce(interval, 'null'), coalesce(unit, 'null'), coalesce(kind, 'null')) as meta, count(*)::text as n
        from app.metric_history group by 1, 2, 3, 4`,
  );
  const wrong: string[] = [];
  for (const r of rows) {
    const doc = sim.data.appHistory(r.slug)?.find((d) => d.stream === r.stream);
    if (!doc || metaOf(doc, r.metric) !== r.meta) wrong.push(`${r.slug}|${r.stream}|${r.metric}: ${r.n} rows ${r.meta}, the stream says ${doc ? metaOf(doc, r.metric) : 'nothing'}`);
  }
  expect(wrong).toEqual([]);
  const metas = new Set(rows.map((r) => r.meta));
  expect(metas.size, [...metas].join(', ')).toBeGreaterThanOrEqual(3);
  expect([...metas].some((m) => m.startsWith('1w|'))).toBe(true);
  expect([...metas].some((m) => m.startsWith('1d|'))).toBe(true);
}

async function expectExactHistory(sim: Simulator, tw: TestWarehouse): Promise<void> {
  const got = await stored(tw);
  const want = truth(sim);
  expect(want.size).toBeGreaterThan(0);
  const streams = new Set([...got.keys()].map((k) => k.split('|')[1]));
  const metrics = new Set([...got.keys()].map((k) => k.split('|')[2]));
  expect(streams.has('all')).toBe(false);
  expect([...metrics].every((m) => (HISTORY_METRICS as readonly string[]).includes(m!)), [...metrics].join()).toBe(true);
  const missing = [...want.keys()].filter((k) => !got.has(k));
  const extra = [...got.keys()].filter((k) => !want.has(k));
  const wrong = [...want].filter(([k, v]) => got.has(k) && got.get(k) !== v);
  expect({ missing: missing.slice(0, 5), extra: extra.slice(0, 5), wrong: wrong.slice(0, 5) }).toEqual({ missing: [], extra: [], wrong: [] });
  await expectOwnStreamMeta(sim, tw);
}

const historyState = (tw: TestWarehouse) =>
  tw.warehouse.query<{ resource: string; status: string; form: string | null; refused: string | null }>(
    sql`select resource, status, details->>'form' as form, details->>'refusedAll' as refused from sync.resource_state where source = 'app' and kind = 'history' order by resource`,
  );

describe('app history: every form of stream=all', () => {
  for (const form of ['list', 'column', 'columnUntyped', 'nested', 'keyed'] as const) {
    it(`${form}: one sync mirrors every stream, metric and day exactly`, async () => {
      const { sim, tw } = await setUp(7, { historyAll: form, historyRows: 'mixed', historyTime: 'mixed' });
      const log = createTestLogger([], 'info');
      const run = await syncOnce(sim, tw.warehouse, log.logger, {}, ['app']);
      expect(run.stats.failed).toBe(0);
      await expectExactHistory(sim, tw);
      const states = await historyState(tw);
      expect(states.length).toBeGreaterThan(0);
      expect(states.every((s) => s.status === 'ok'), JSON.stringify(states)).toBe(true);
      // The answers that carried the streams that differ were in this form. The column forms
      // cannot hold streams that differ: the simulator lists those; tokens whose streams agree,
      // some '1d' and some '1w', come in one MetricHistory. An untyped stream column is tied to
      // the streams only through the keys tesync already knows, which a first sync may not:
      // then that answer is refused and the streams read one by one ('per-stream').
      const formOf = new Map(states.map((s) => [s.resource.split('/')[1], s.form]));
      const apart = differing(sim);
      expect(apart.length).toBeGreaterThan(0);
      const oneTable = form === 'column' || form === 'columnUntyped';
      for (const slug of apart) expect(formOf.get(slug), slug).toBe(oneTable ? 'list' : form);
      if (oneTable) {
        const agreeing = historied(sim).filter((slug) => !apart.includes(slug));
        for (const slug of agreeing) expect(form === 'column' ? ['column'] : ['column', 'per-stream'], slug).toContain(formOf.get(slug));
        expect(new Set(agreeing.map((slug) => sim.data.appHistory(slug)![0]!.interval))).toEqual(new Set(['1d', '1w']));
      }
    });
  }

  it('a mixture across tokens, over several seeds and random row and time forms', async () => {
    const seen = new Set<string>();
    for (const seed of [3, 11, 29]) {
      const { sim, tw } = await setUp(seed, { historyAll: 'mixed', historyRows: 'mixed', historyTime: 'mixed', appNumber: 'mixed' });
      const run = await syncOnce(sim, tw.warehouse, createTestLogger([], 'warn').logger, {}, ['app']);
      expect(run.stats.failed, `seed ${seed}`).toBe(0);
      await expectExactHistory(sim, tw);
      for (const s of await historyState(tw)) seen.add(s.form ?? '?');
    }
    // The seeds between them cover most forms, the refused one among them.
    expect(seen.size, [...seen].join()).toBeGreaterThanOrEqual(4);
  });
});

describe('app history: a response that cannot be split by stream', () => {
  it('is refused whole, its body kept invalid, then read stream by stream in the same run, and straight away after', async () => {
    const { sim, tw } = await setUp(5, { historyAll: 'ambiguous' });
    const log = createTestLogger([], 'info');
    const run = await syncOnce(sim, tw.warehouse, log.logger, {}, ['app']);
    expect(run.stats.failed).toBe(0);
    await expectExactHistory(sim, tw);

    const covered = sim.data.appTokens().filter((t) => t.coverage.metricHistory).map((t) => t.slug);
    const invalid = await tw.warehouse.query<{ path: string; body_text: string }>(sql`select path, body_text from sync.raw_responses where status = 'invalid' and path like '%/metrics/history%'`);
    expect(invalid.map((r) => r.path.split('/')[4]).sort()).toEqual([...covered].sort());
    for (const r of invalid) {
      expect(r.path).toContain('stream=all');
      expect(JSON.parse(r.body_text).data.stream).toBe('all');
    }
    const states = await historyState(tw);
    expect(states.map((s) => [s.status, s.form])).toEqual(covered.map(() => ['ok', 'per-stream']));
    expect(states.every((s) => /nothing tells its rows apart/.test(s.refused ?? ''))).toBe(true);
    const warnings = log.lines().filter((l) => l.includes('"level":40') && l.includes('not understood'));
    expect(warnings).toHaveLength(covered.length);

    // The next sync remembers: no `stream=all` asked again, nothing refused, the mirror exact.
    sim.resetRequests();
    const again = await syncOnce(sim, tw.warehouse, log.logger, {}, ['app'], { full: true });
    expect(again.stats.failed).toBe(0);
    const historyPaths = sim.requests.filter((r) => r.path.includes('/metrics/history')).map((r) => r.path);
    expect(historyPaths.length).toBeGreaterThan(covered.length);
    expect(historyPaths.some((p) => p.includes('stream=all'))).toBe(false);
    const [count] = await tw.warehouse.query<{ n: string }>(sql`select count(*)::text as n from sync.raw_responses where status = 'invalid'`);
    expect(count!.n).toBe(String(covered.length));
    await expectExactHistory(sim, tw);
  });

  it('two values for one stream, metric and day: nothing written, the resource invalid with its body kept', async () => {
    const { sim, tw } = await setUp(5, {});
    // Every history answer for aurora names one stream and gives a day twice, with two values.
    const body = JSON.stringify({
      data: { stream: 'fees', interval: '1d', columns: [{ key: 'date', kind: 'time' }, { key: 'holderFcf', unit: 'USD', kind: 'rate' }], rows: [['2026-01-01', 1], ['2026-01-02', 2], ['2026-01-01', 3]] },
      meta: { asOf: '2026-01-02T00:00:00Z' },
    });
    sim.script('/api/v1/tokens/aurora/metrics/history', Array.from({ length: 20 }, () => ({ status: 200, headers: { 'content-type': 'application/json' }, body })));
    const log = createTestLogger([], 'info');
    const run = await syncOnce(sim, tw.warehouse, log.logger, {}, ['app'], { tokens: ['aurora'] });
    expect(run.status).toBe('partial');
    const [state] = await tw.warehouse.query<{ status: string; last_error: string }>(sql`select status, last_error from sync.resource_state where resource = 'token/aurora/history'`);
    expect(state?.status).toBe('invalid');
    expect(state?.last_error).toMatch(/two rows for the key|asked for stream/);
    const [n] = await tw.warehouse.query<{ n: string }>(sql`select count(*)::text as n from app.metric_history where token_slug = 'aurora'`);
    expect(n!.n).toBe('0');
    const kept = await tw.warehouse.query<{ body_text: string }>(sql`select body_text from sync.raw_responses where status = 'invalid' and path like '/api/v1/tokens/aurora/metrics/history%'`);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.every((k) => k.body_text === body)).toBe(true);
    expect(log.lines().some((l) => l.includes('not understood') && l.includes('two rows for the key'))).toBe(true);
    // The rest of the token was written: the run went on.
    const [snap] = await tw.warehouse.query<{ n: string }>(sql`select count(*)::text as n from app.token_snapshots where token_slug = 'aurora'`);
    expect(snap!.n).toBe('1');
  });
});
