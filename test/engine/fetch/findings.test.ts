// A try's findings (src/engine/fetch/findings.ts), with the simulator and a warehouse: what a try read,
// in order, handed out once; reading keeps nothing, and the lifecycle keeps each try's own
// findings when the try ends, a failed one too (fields understood, bodies refused `invalid`).
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { afterAll, describe, expect, it } from 'vitest';
import { fetchData } from '../../../src/engine/fetch/fetch.ts';
import { resolveJob, runJob } from '../../../src/engine/job/lifecycle.ts';
import { defineJob, type JobDefinition } from '../../../src/engine/kit/types.ts';
import { metricCatalog } from '../../../src/schema/upstream/app.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { jobContext, testRun, type TestRun } from '../../helpers/job-context.ts';

const sa = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1 });
const runs: TestRun[] = [];
const start = () => {
  const t = testRun(sa.sim, sa.warehouse);
  runs.push(t);
  return t;
};
afterAll(async () => {
  for (const t of runs) await t.recorder.close();
});

const count = async (query: ReturnType<typeof sql>) => (await sa.warehouse.query<{ n: number }>(query))[0]!.n;
const invalidBodies = () => count(sql`select count(*)::int as n from sync.raw_responses where status = 'invalid'`);
const fieldsOf = (kind: string) => count(sql`select count(*)::int as n from sync.resource_fields where source = 'app' and kind = ${kind}`);

describe('TryFindings', () => {
  it('hands out what was read since the last call, in order; what was understood stays', async () => {
    const ctx = jobContext(start().run);
    const a = await fetchData(ctx, { route: 'app.metrics' }, metricCatalog);
    const b = await fetchData(ctx, { route: 'app.tokens' }, z.array(z.unknown()));
    expect(ctx.findings.takeReceived()).toEqual([
      { route: 'app.metrics', response: a.response },
      { route: 'app.tokens', response: b.response },
    ]);
    expect(ctx.findings.takeReceived()).toEqual([]);
    const c = await fetchData(ctx, { route: 'app.token', params: { slug: 'aurora' } }, z.unknown());
    expect(ctx.findings.takeReceived()).toEqual([{ route: 'app.token', response: c.response }]);
    expect(ctx.findings.understood).toEqual([a.response, b.response, c.response]);
    expect(ctx.findings.sightings.map((s) => s.route)).toEqual(['app.metrics', 'app.tokens', 'app.token']);
    // Reading kept nothing: no fields recorded yet.
    expect(await fieldsOf('app.metrics')).toBe(0);
  });

  it('is kept when the try ends, a failed one too; each try has its own', async () => {
    const during: number[] = [];
    const job: JobDefinition<Record<string, never>> = defineJob({
      name: 'test.findings',
      source: 'app',
      group: 'catalog',
      route: 'app.screener',
      payload: z.object({}),
      resource: () => 'test/findings',
      reader: {
        asks: () => [
          { route: 'app.screener', schema: z.array(z.unknown()) },
          { route: 'app.charts', params: { slug: 'aurora' }, schema: z.array(z.unknown()) },
        ],
        read: () => ({ status: 'ok' }),
      },
    });
    sa.sim.script('/api/v1/tokens/aurora/charts', [{ status: 200, body: '{"data": {"charts": "none"}}' }]);
    const resolved = resolveJob(new Map([[job.name, job]]), { name: job.name, payload: {} });
    if ('error' in resolved) throw new Error(resolved.error);
    const t = start();
    // While the try reads (the screener understood, its fields in the findings), nothing of it is written yet.
    const upstream = t.run.upstream;
    const run = {
      ...t.run,
      upstream: {
        async get(req: Parameters<typeof upstream.get>[0]) {
          const response = await upstream.get(req);
          if (req.route === 'app.charts') during.push(await invalidBodies(), await fieldsOf('app.screener'));
          return response;
        },
      },
    };
    expect(await runJob(resolved, run, { last: true })).toMatchObject({ status: 'invalid' });
    expect(during).toEqual([0, 0]);
    expect(await invalidBodies()).toBe(1);
    const [kept] = await sa.warehouse.query<{ path: string; body_text: string }>(sql`select path, body_text from sync.raw_responses where status = 'invalid'`);
    expect(kept).toEqual({ path: '/api/v1/tokens/aurora/charts', body_text: '{"data": {"charts": "none"}}' });
    const fields = await fieldsOf('app.screener');
    expect(fields).toBeGreaterThan(0);

    // The next try starts with nothing read: its findings keep only what it read itself, the
    // same refused body (kept once) and the screener's same fields.
    sa.sim.script('/api/v1/tokens/aurora/charts', [{ status: 200, body: '{"data": {"charts": "none"}}' }]);
    during.length = 0;
    expect(await runJob(resolved, run, { last: true })).toMatchObject({ status: 'invalid', failure: { message: expect.stringContaining('/api/v1/tokens/aurora/charts') } });
    expect(during).toEqual([1, fields]);
    expect(await invalidBodies()).toBe(1);
    expect(await fieldsOf('app.screener')).toBe(fields);
  });
});
