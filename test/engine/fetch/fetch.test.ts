// fetchData and validate (src/engine/fetch/fetch.ts), against the simulator: a body understood comes
// back parsed, what was read goes to the findings only; no envelope, a count that disagrees or a
// schema failure refuses the body with its raw text, kept in the findings, nothing written.
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { fetchData, invalid, validate } from '../../../src/engine/fetch/fetch.ts';
import { metricCatalog } from '../../../src/schema/upstream/app.ts';
import { InvalidResponseError } from '../../../src/lib/errors.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { useTestRuns, type TestRun } from '../../helpers/job-context.ts';

const sa = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1 });
const start = useTestRuns(sa);
const warnings = (t: TestRun) => t.log.lines().filter((l) => l.includes('"level":40'));
const json = (body: unknown) => [{ status: 200, body: JSON.stringify(body) }];

describe('fetchData', () => {
  it('returns the data parsed, its meta and body; the findings have read it, understood it and its fields', async () => {
    const t = start();
    const f = await fetchData(t.ctx, { route: 'app.metrics' }, metricCatalog);
    expect(f.response.path).toBe('/api/v1/metrics');
    expect(f.data.length).toBeGreaterThan(0);
    expect(f.data).toEqual((f.body as { data: unknown }).data);
    expect(f.meta.asOf).toBeInstanceOf(Date);
    expect(t.ctx.findings.takeReceived()).toEqual([{ route: 'app.metrics', response: f.response }]);
    expect(t.ctx.findings.understood).toEqual([f.response]);
    expect(t.ctx.findings.sightings).toEqual([
      expect.objectContaining({ source: 'app', route: 'app.metrics', template: '/api/v1/metrics', runId: t.run.runId, path: '/api/v1/metrics', sha256: f.response.sha256 }),
    ]);
    expect(t.ctx.findings.sightings[0]!.fields).toEqual(expect.arrayContaining(['slug', 'unit', 'kind']));
    expect(t.ctx.findings.refused).toEqual([]);
  });
});

describe('validate', () => {
  it.each([
    ['no envelope', [1, 2], z.array(z.unknown()), /^\/api\/v1\/screener: not a \{ data, meta \} envelope: /],
    ['a count that disagrees', { data: [{ slug: 'a' }], meta: { count: 2 } }, z.array(z.unknown()), /^\/api\/v1\/screener: meta\.count says 2 items, the list has 1$/],
    ['data that fails the schema', { data: [{ slug: 'a' }, { slug: 7 }], meta: {} }, z.array(z.object({ slug: z.string() })), /^\/api\/v1\/screener: data 1\.slug Invalid input/],
  ])('refuses %s: the raw text kept in the findings, one warning, nothing understood or written', async (_what, body, schema, message) => {
    const t = start();
    sa.sim.script('/api/v1/screener', json(body));
    const err = await fetchData(t.ctx, { route: 'app.screener' }, schema).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as Error).message).toMatch(message);
    expect((err as InvalidResponseError).rawBody).toBe(JSON.stringify(body));
    expect(t.ctx.findings.refused).toEqual([
      { source: 'app', runId: t.run.runId, path: '/api/v1/screener', httpStatus: 200, contentType: expect.stringContaining('application/json'), text: JSON.stringify(body) },
    ]);
    expect(t.ctx.findings.understood).toEqual([]);
    expect(t.ctx.findings.sightings).toEqual([]);
    expect(t.ctx.findings.takeReceived()).toHaveLength(1);
    expect(warnings(t)).toHaveLength(1);
    await t.recorder.flush();
    const kept = await sa.warehouse.query<{ n: number }>(sql`select count(*)::int as n from sync.raw_responses where status = 'invalid'`);
    expect(kept).toEqual([{ n: 0 }]);
  });

  it('leaves the count of one page of a longer list to the list reader', async () => {
    const t = start();
    sa.sim.script('/api/v1/screener', json({ data: [{ slug: 'a' }], meta: { count: 5 } }));
    const response = await t.ctx.upstream.get({ route: 'app.screener', runId: t.run.runId });
    const f = await validate(t.ctx, 'app.screener', response, z.array(z.unknown()), { pageOfList: true });
    expect(f.meta.count).toBe(5);
    expect(t.ctx.findings.understood).toEqual([response]);
    await expect(validate(t.ctx, 'app.screener', response, z.array(z.unknown()))).rejects.toThrow(/meta\.count says 5 items, the list has 1/);
  });
});

describe('invalid', () => {
  it('keeps the body in the findings and returns the error to throw; quiet, it logs nothing', async () => {
    const t = start();
    const response = await t.ctx.upstream.get({ route: 'app.token', params: { slug: 'aurora' }, runId: t.run.runId });
    const err = invalid(t.ctx, 'app.token', response, 'a reason', { quiet: true });
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.message).toBe('/api/v1/tokens/aurora: a reason');
    expect(err.rawBody).toBe(response.text);
    expect(t.ctx.findings.refused.map((r) => [r.path, r.text])).toEqual([['/api/v1/tokens/aurora', response.text]]);
    expect(warnings(t)).toEqual([]);
    invalid(t.ctx, 'app.token', response, 'a reason');
    expect(warnings(t)).toHaveLength(1);
  });
});
