// A reader run (src/engine/fetch/reader.ts), against the simulator: the requests a reader asks, validated,
// then its pure read; a job read from one response (`one`) gets asOf and hash from it; a Refusal
// comes back as a value; a response the schema refuses never reaches the read; a problem the
// ask declares an answer reaches the read as data; `more` asks from what came back.
import { z } from 'zod';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { runReader } from '../../../src/engine/fetch/reader.ts';
import { defineJob, refused, type Fetched, type JobContext, type JobDefinition, type Outcome, type ReadInput, type Refusal, type Reader } from '../../../src/engine/kit/types.ts';
import { ProblemError } from '../../../src/lib/errors.ts';
import { InvalidResponseError } from '../../../src/lib/errors.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { jobContext, testRun, type TestRun } from '../../helpers/job-context.ts';

const sa = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1 });
const runs: TestRun[] = [];
const start = () => {
  const t = testRun(sa.sim, sa.warehouse);
  runs.push(t);
  return jobContext(t.run);
};
afterAll(async () => {
  for (const t of runs) await t.recorder.close();
});
beforeEach(() => sa.sim.resetRequests());

const payload = z.object({ slug: z.string() });
type P = z.infer<typeof payload>;
const tokenJob = (read: (input: ReadInput<P>, f: Fetched<{ token: { slug: string } }>) => Outcome | Refusal): JobDefinition<P> =>
  defineJob({
    name: 'test.token',
    source: 'app',
    group: 'snapshot',
    route: 'app.token',
    payload,
    resource: (p) => `token/${p.slug}/snapshot`,
    one: {
      request: (p) => ({ params: { slug: p.slug } }),
      schema: z.looseObject({ token: z.looseObject({ slug: z.string() }) }),
      read,
    },
  });

const inputFor = (ctx: JobContext, p: P): ReadInput<P> => ({ payload: p, state: undefined, known: {}, settings: ctx.settings, runId: ctx.runId, now: ctx.now });
const readDeclared = (ctx: JobContext, job: JobDefinition<P>, p: P) => runReader(ctx, job.reader, inputFor(ctx, p));

describe('defineJob', () => {
  it('turns a job read from one response into the one form the engine takes: a Reader', () => {
    const job = tokenJob(() => ({ status: 'ok' }));
    expect(typeof job.reader.asks).toBe('function');
    expect(job.reader.asks({ payload: { slug: 'x' } } as ReadInput<P>)).toEqual([{ route: 'app.token', params: { slug: 'x' }, schema: expect.anything() }]);
    expect('one' in job).toBe(false);
  });
});

describe('runReader', () => {
  it('sends the request the declaration names and reads its validated data; asOf and hash are the response\'s', async () => {
    const ctx = start();
    let seen: unknown;
    const job = tokenJob((input, f) => {
      seen = [input.payload.slug, f.data.token.slug];
      return { status: 'ok', rowCount: 1 };
    });
    const out = (await readDeclared(ctx, job, { slug: 'aurora' })) as Outcome;
    expect(sa.sim.requests.map((r) => r.path)).toEqual(['/api/v1/tokens/aurora']);
    expect(seen).toEqual(['aurora', 'aurora']);
    const [response] = ctx.findings.understood;
    expect(out).toEqual({ status: 'ok', rowCount: 1, asOf: expect.any(Date), hash: response!.sha256 });
    expect(out.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps the asOf and hash the read gives', async () => {
    const asOf = new Date('2020-01-01T00:00:00Z');
    const out = await readDeclared(start(), tokenJob(() => ({ status: 'partial', asOf, hash: null })), { slug: 'aurora' });
    expect(out).toEqual({ status: 'partial', asOf, hash: null });
  });

  it('returns the read\'s Refusal as it is, the response read and left for the lifecycle to refuse', async () => {
    const ctx = start();
    const out = await readDeclared(ctx, tokenJob(() => refused('two sections named alike')), { slug: 'aurora' });
    expect(out).toEqual({ refused: 'two sections named alike' });
    expect(ctx.findings.refused).toEqual([]);
    expect(ctx.findings.takeReceived().map((r) => r.response.path)).toEqual(['/api/v1/tokens/aurora']);
  });

  it('refuses a response the schema does not accept, before the read', async () => {
    const ctx = start();
    sa.sim.script('/api/v1/tokens/aurora', [{ status: 200, body: JSON.stringify({ data: { token: { slug: 7 } }, meta: {} }) }]);
    let called = false;
    const job = tokenJob(() => {
      called = true;
      return { status: 'ok' };
    });
    await expect(readDeclared(ctx, job, { slug: 'aurora' })).rejects.toBeInstanceOf(InvalidResponseError);
    expect(called).toBe(false);
    expect(ctx.findings.refused.map((r) => r.path)).toEqual(['/api/v1/tokens/aurora']);
  });

  it('hands a problem the ask declares an answer to the read, and asks more from what came back', async () => {
    const ctx = start();
    sa.sim.script('/api/v1/tokens/nosuch', [{ status: 404, headers: { 'content-type': 'application/problem+json' }, body: JSON.stringify({ type: 'about:blank', title: 'Not found', status: 404, code: 'token_not_found' }) }]);
    const seen: string[] = [];
    const reader: Reader<P> = {
      asks: () => [{ route: 'app.token', params: { slug: 'nosuch' }, answers: { statuses: [404] } }],
      more: (_input, got) => (got.length === 1 ? [{ route: 'app.token', params: { slug: 'aurora' } }] : []),
      read(_input, got) {
        for (const g of got) seen.push(g.problem ? `problem ${g.problem.status}` : `data ${g.fetched!.response.path}`);
        return { status: 'ok' };
      },
    };
    expect(await runReader(ctx, reader, inputFor(ctx, { slug: 'aurora' }))).toEqual({ status: 'ok' });
    expect(seen).toEqual(['problem 404', 'data /api/v1/tokens/aurora']);
    expect(got404(ctx)).toBe(true);
  });

  it('a problem the ask does not declare an answer fails the reader, as it did the fetch', async () => {
    const ctx = start();
    sa.sim.script('/api/v1/tokens/nosuch', [{ status: 404, headers: { 'content-type': 'application/problem+json' }, body: JSON.stringify({ type: 'about:blank', title: 'Not found', status: 404, code: 'token_not_found' }) }]);
    const reader: Reader<P> = { asks: () => [{ route: 'app.token', params: { slug: 'nosuch' }, answers: { statuses: [401] } }], read: () => ({ status: 'ok' }) };
    await expect(runReader(ctx, reader, inputFor(ctx, { slug: 'x' }))).rejects.toBeInstanceOf(ProblemError);
  });
});

/** The problem answered no job: nothing of it was refused. */
const got404 = (ctx: JobContext) => ctx.findings.refused.length === 0;
