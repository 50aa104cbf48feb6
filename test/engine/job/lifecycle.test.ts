// The job lifecycle (src/engine/job/lifecycle.ts): planning, pure; runJob on the simulator and a
// warehouse: the marker skip, a 404 kept `not_found` and left alone, a refusal that writes
// nothing (body kept `invalid`) or turns to the alternative, a retryable failure thrown or kept.
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { CellTally } from '../../../src/engine/kit/cell-tally.ts';
import { committedStatus, resolveJob, runJob } from '../../../src/engine/job/lifecycle.ts';
import { defineJob, into, refused, type Ask, type Fetched, type Got, type JobDefinition, type Outcome, type Reader } from '../../../src/engine/kit/types.ts';
import { metricCatalog, metricEntry } from '../../../src/schema/upstream/app.ts';
import { metrics } from '../../../src/schema/warehouse/app.ts';
import { catalog } from '../../../src/resources/index.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { testRun, type TestRun } from '../../helpers/job-context.ts';

const sa = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1 });
const runs: TestRun[] = [];
const start = (settings: Parameters<typeof testRun>[2] = {}) => {
  const t = testRun(sa.sim, sa.warehouse, settings);
  runs.push(t);
  return t.run;
};
afterAll(async () => {
  for (const t of runs) await t.recorder.close();
});
beforeEach(() => sa.sim.resetRequests());

type P = { marker?: string; slug?: string; mode?: 'refuse' | 'misread' };
const payload: z.ZodType<P> = z.object({ marker: z.string().optional(), slug: z.string().optional(), mode: z.enum(['refuse', 'misread']).optional() });

/** The metric catalog into app.metrics, its rows as the way read them. */
const METRICS: Ask = { route: 'app.metrics', schema: metricCatalog };
function catalogRows(got: Got): Outcome {
  const f = got.fetched as Fetched<z.infer<typeof metricCatalog>>;
  const rows = f.data.map((item) => ({ slug: metricEntry.parse(item).slug, payload: item }));
  return { status: 'ok', asOf: f.meta.asOf, writes: [into(metrics, rows)] };
}
const readCatalog: Reader<P> = { asks: () => [METRICS], read: (_input, [got]) => catalogRows(got!) };

const job = (name: string, more: Partial<JobDefinition<P>>): JobDefinition<P> =>
  defineJob({ name, source: 'app', group: 'catalog', route: 'app.metrics', payload, resource: () => `test/${name}`, marker: (p) => p.marker, reader: readCatalog, ...more } as JobDefinition<P>);

async function run(j: JobDefinition<P>, p: P, options: { settings?: Parameters<typeof testRun>[2]; last?: boolean } = {}) {
  const resolved = resolveJob(new Map([[j.name, j]]), { name: j.name, payload: p });
  if ('error' in resolved) throw new Error(resolved.error);
  return runJob(resolved, start(options.settings), { last: options.last ?? true });
}
const state = async (name: string) =>
  (
    await sa.warehouse.query<{ status: string; freshness: string | null; last_error: string | null; error_type: string | null; error_code: string | null; bucket: string | null; details: unknown }>(
      sql`select status, freshness, last_error, error_type, error_code, bucket, details from sync.resource_state where source = 'app' and resource = ${`test/${name}`}`,
    )
  )[0];
const paths = () => sa.sim.requests.map((r) => r.path);

describe('planning, pure', () => {
  it('resolves a request against the catalog: payload parsed, resource, bucket and the jobs it plans', () => {
    const p = resolveJob(catalog, { name: 'app.tokens', payload: {} });
    if ('error' in p) throw new Error(p.error);
    expect(p).toMatchObject({ resource: 'tokens', bucket: 'app-public' });
    expect(p.children.map((c) => c.name)).toContain('app.snapshot');
    expect(resolveJob(catalog, { name: 'app.nothing', payload: {} })).toEqual({ error: 'unknown job app.nothing' });
    expect(resolveJob(catalog, { name: 'app.snapshot', payload: { slug: 7 } })).toEqual({ error: expect.stringMatching(/^payload invalid: /) });
  });

  it('an ok outcome with unreadable cells is committed partial; any other status as it is', () => {
    const t = new CellTally();
    t.cell(false);
    expect(committedStatus({ status: 'ok', cells: t })).toBe('partial');
    expect(committedStatus({ status: 'not_materialized', cells: t })).toBe('not_materialized');
    expect(committedStatus({ status: 'ok', cells: new CellTally() })).toBe('ok');
    expect(committedStatus({ status: 'ok' })).toBe('ok');
  });
});

describe('runJob', () => {
  it('skips the fetch while the marker is as at the last success, unless it moved or the sync is full', async () => {
    const j = job('skip', {});
    const first = await run(j, { marker: 'm1' });
    expect(first).toMatchObject({ status: 'ok', followUps: [] });
    expect(first.rows).toBeGreaterThan(0);
    expect(await state('skip')).toMatchObject({ status: 'ok', freshness: 'm1' });
    expect(paths()).toEqual(['/api/v1/metrics']);

    sa.sim.resetRequests();
    expect(await run(j, { marker: 'm1' })).toEqual({ status: 'unchanged', rows: 0, followUps: [] });
    expect(paths()).toEqual([]);
    expect((await state('skip'))?.status).toBe('unchanged');

    // Fetched again: nothing changed, so no row is written again.
    expect(await run(j, { marker: 'm1' }, { settings: { full: true } })).toMatchObject({ status: 'ok', rows: 0 });
    expect(await run(j, { marker: 'm2' })).toMatchObject({ status: 'ok', rows: 0 });
    expect(paths()).toEqual(['/api/v1/metrics', '/api/v1/metrics']);
    expect((await state('skip'))?.freshness).toBe('m2');
  });

  it('records upstream\'s 404 as not_found, not a failure, and does not ask again under the same marker', async () => {
    const j = job('gone', { route: 'app.token', reader: { asks: (input) => [{ route: 'app.token', params: { slug: input.payload.slug! } }], read: () => ({ status: 'ok' }) } });
    expect(await run(j, { slug: 'no-such-token', marker: 'm1' })).toEqual({ status: 'not_found', rows: 0, followUps: [] });
    expect(await state('gone')).toMatchObject({ status: 'not_found', error_code: 'token_not_found', details: { notFoundMarker: 'm1' } });
    expect(await run(j, { slug: 'no-such-token', marker: 'm1' })).toEqual({ status: 'not_found', rows: 0, followUps: [] });
    expect(paths()).toEqual(['/api/v1/tokens/no-such-token']);
    // Planned under another marker, it is asked again.
    await run(j, { slug: 'no-such-token', marker: 'm2' });
    expect(paths()).toHaveLength(2);
  });

  it('a read refused as not understood writes nothing of it and keeps its body invalid', async () => {
    const j = job('refused', {
      reader: {
        asks: () => [METRICS],
        read() {
          const cells = new CellTally();
          cells.column('grade', false);
          return { status: 'ok', cells, writes: [into(metrics, [{ slug: 'never-written', payload: {} }])] };
        },
      },
    });
    const invalidBodies = async () => (await sa.warehouse.query<{ n: number }>(sql`select count(*)::int as n from sync.raw_responses where status = 'invalid' and path = '/api/v1/metrics'`))[0]!.n;
    const before = await invalidBodies();
    expect(await run(j, {})).toMatchObject({ status: 'invalid', rows: 0, failure: { status: 'invalid', type: 'NotUnderstoodError' } });
    expect(await state('refused')).toMatchObject({
      status: 'invalid',
      error_type: 'NotUnderstoodError',
      last_error: expect.stringContaining('/api/v1/metrics: not understood: column(s) "grade" read as numeric, but no cell is a number'),
    });
    expect(await invalidBodies()).toBe(before + 1);
    expect(await sa.warehouse.query(sql`select slug from app.metrics where slug = 'never-written'`)).toEqual([]);
  });

  it.each([
    ['a Refusal', 'refuse', /^\/api\/v1\/metrics: not understood: no group column$/],
    ['a tally that refuses before the write', 'misread', /^\/api\/v1\/metrics: not understood: values that line up with no time$/],
  ] as const)('turns to the alternative after %s: its rows written, ok', async (_what, mode, reason) => {
    const name = `alternative-${mode}`;
    const seen: string[] = [];
    const j = job(name, {
      reader: {
        asks: () => [METRICS],
        read(input, [got]) {
          const read = catalogRows(got!);
          if (input.payload.mode === 'refuse') return refused('no group column');
          const cells = new CellTally();
          cells.misread('values that line up with no time');
          return { ...read, cells };
        },
      },
      alternative: {
        asks: () => [],
        read(input) {
          seen.push(input.refusal!);
          return { status: 'ok', writes: [into(metrics, [{ slug: `from-${name}`, payload: {} }])] };
        },
      },
    });
    expect(await run(j, { mode })).toMatchObject({ status: 'ok', rows: 1 });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(reason);
    expect(await state(name)).toMatchObject({ status: 'ok', last_error: null });
    const rows = await sa.warehouse.query<{ slug: string }>(sql`select slug from app.metrics where slug like 'from-%' order by slug`);
    expect(rows.map((r) => r.slug)).toContain(`from-${name}`);
  });

  it('throws a failure worth another try while tries are left; records it on the last', async () => {
    const j = job('flaky', {
      reader: {
        asks: () => {
          throw new Error('connection terminated unexpectedly');
        },
        read: () => ({ status: 'ok' }),
      },
    });
    await expect(run(j, {}, { last: false })).rejects.toThrow('connection terminated unexpectedly');
    expect(await state('flaky')).toBeUndefined();
    expect(await run(j, {})).toMatchObject({ status: 'failed', rows: 0, failure: { status: 'failed', retryable: true, bucket: 'app-public' } });
    expect(await state('flaky')).toMatchObject({ status: 'failed', error_type: 'Error', bucket: 'app-public', last_error: expect.stringContaining('connection terminated') });
  });
});
