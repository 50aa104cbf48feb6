// A declared job (src/engine/declared.ts), against the simulator: the one request it names,
// validated, then its pure read; asOf and hash default to the response's; a Refusal comes back
// as a value; a response the schema refuses never reaches the read.
import { z } from 'zod';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { isDeclared, readDeclared } from '../../src/engine/declared.ts';
import { defineJob, refused, type JobDefinition, type Outcome } from '../../src/engine/types.ts';
import { InvalidResponseError } from '../../src/lib/errors.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { jobContext, testRun, type TestRun } from '../helpers/job-context.ts';

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
const tokenJob = (read: JobDefinition<z.infer<typeof payload>, z.ZodType<{ token: { slug: string } }>>['read']) =>
  defineJob({
    name: 'test.token',
    source: 'app',
    group: 'snapshot',
    route: 'app.token',
    payload,
    resource: (p) => `token/${p.slug}/snapshot`,
    request: (p) => ({ params: { slug: p.slug } }),
    schema: z.looseObject({ token: z.looseObject({ slug: z.string() }) }),
    read,
  });

describe('isDeclared', () => {
  it('a job reads declaratively when it has both a schema and a read', () => {
    const read = () => ({ status: 'ok' });
    expect(isDeclared({ read, schema: z.unknown() })).toBe(true);
    expect(isDeclared({ read, schema: undefined })).toBe(false);
    expect(isDeclared({ read: undefined, schema: z.unknown() })).toBe(false);
  });
});

describe('readDeclared', () => {
  it('sends the request the declaration names and reads its validated data; asOf and hash are the response\'s', async () => {
    const ctx = start();
    let seen: unknown;
    const job = tokenJob((_ctx, p, f) => {
      seen = [p.slug, f.data.token.slug];
      return { status: 'ok', rowCount: 1 };
    });
    const out = (await readDeclared(ctx, job, { slug: 'aurora' })) as Outcome;
    expect(sa.sim.requests.map((r) => r.path)).toEqual(['/api/v1/tokens/aurora']);
    expect(seen).toEqual(['aurora', 'aurora']);
    const [response] = ctx.ledger.understood;
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
    expect(ctx.ledger.refused).toEqual([]);
    expect(ctx.ledger.takeReceived().map((r) => r.response.path)).toEqual(['/api/v1/tokens/aurora']);
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
    expect(ctx.ledger.refused.map((r) => r.path)).toEqual(['/api/v1/tokens/aurora']);
  });
});
