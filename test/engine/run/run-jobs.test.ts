// A run's jobs as the one run driver enters and counts them, the same for both runners: which
// requests are entered, what a job's end adds to the ledger, and the one order of a job's end
// (its follow-ups planned, then its end counted). No IO: the driver's enter and
// settle touch only its ledger, here one in memory.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { judgeFailure } from '../../../src/lib/failure.ts';
import { ProblemError } from '../../../src/lib/errors.ts';
import { MemoryRunLedger } from '../../../src/engine/run/memory-run-ledger.ts';
import { RunDriver } from '../../../src/engine/run/run-driver.ts';
import { entryStep, settledJob, unplannable } from '../../../src/engine/run/run-jobs.ts';
import type { JobDefinition } from '../../../src/engine/kit/types.ts';
import type { Warehouse } from '../../../src/store/connection.ts';
import { createTestLogger } from '../../helpers/services.ts';

// Only what entering reads of a declaration: its payload, resource, route and parent.
const charts = {
  name: 'gateway.charts',
  source: 'gateway',
  group: 'charts',
  route: 'gateway.token',
  payload: z.object({ slug: z.string() }),
  resource: (p: { slug: string }) => `token/${p.slug}/charts`,
  token: (p: { slug: string }) => p.slug,
} as unknown as JobDefinition<any>;
const catalog = new Map([[charts.name, charts]]);
const req = (slug: unknown) => ({ name: 'gateway.charts', payload: { slug } });
const { logger } = createTestLogger();

describe('entryStep', () => {
  it('enters a request the catalog reads, root or in scope', () => {
    const step = entryStep(catalog, req('aave'), { root: false, inScope: () => true });
    expect(step.kind).toBe('enter');
    expect(step.kind === 'enter' && step.resolved.resource).toBe('token/aave/charts');
    expect(entryStep(catalog, req('aave'), { root: true, inScope: () => false }).kind).toBe('enter');
    expect(entryStep(catalog, req('aave'), { root: false }).kind).toBe('enter');
  });

  it('leaves a follow-up out of scope unentered, and nothing counted', () => {
    expect(entryStep(catalog, req('aave'), { root: false, inScope: (_job, p) => (p as { slug: string }).slug !== 'aave' })).toEqual({ kind: 'out of scope' });
  });

  it('an unreadable payload of a known job is a failure of the run; an unknown job is only said', () => {
    const bad = entryStep(catalog, req(42), { root: false });
    expect(bad).toMatchObject({ kind: 'unplannable', failure: { job: 'gateway.charts', resource: '?' } });
    expect(bad.kind === 'unplannable' && bad.error).toMatch(/^payload invalid: /);
    const unknown = entryStep(catalog, { name: 'gateway.nope', payload: {} }, { root: true });
    expect(unknown).toEqual({ kind: 'unplannable', error: 'unknown job gateway.nope' });
  });
});

describe('settledJob', () => {
  const p = { job: charts, resource: 'token/aave/charts' };
  it('done: its rows, counted under `source.group` and its status', () => {
    expect(settledJob(p, { status: 'ok', rows: 12 })).toEqual({ kind: 'done', rows: 12, group: 'gateway.charts', status: 'ok' });
  });

  it('failed: its failure entry as data, no rows', () => {
    const err = new ProblemError({ status: 403, code: 'missing_scope', type: undefined, title: undefined, detail: undefined, instance: undefined, scope: 's', requestId: undefined, extensions: {}, path: '/v1/x' });
    const failure = { ...judgeFailure(err), bucket: 'gateway' };
    expect(settledJob(p, { status: failure.status, rows: 3, failure })).toEqual({
      kind: 'failed',
      group: 'gateway.charts',
      status: failure.status,
      failure: expect.objectContaining({ job: 'gateway.charts', resource: 'token/aave/charts', source: 'gateway', code: 'missing_scope', httpStatus: 403, bucket: 'gateway' }),
    });
  });

  it('unplannable: the job without a resource', () => {
    expect(unplannable('app.tokens', 'payload invalid: x')).toEqual({ job: 'app.tokens', resource: '?', error: 'payload invalid: x' });
  });
});

describe('RunDriver: enter and settle over the ledger', () => {
  // Planning and settling never touch the warehouse (only open and close do).
  const driver = () => new RunDriver({ warehouse: {} as Warehouse, ledger: new MemoryRunLedger(), catalog, logger });
  const idOf = (p: { resource: string }) => `gateway/${p.resource}`;

  it('a job is new once, pending until it settles, then not entered again; counted once', async () => {
    const d = driver();
    const first = await d.enter('r', req('aave'), { root: true, idOf });
    expect(first).toMatchObject({ id: 'gateway/token/aave/charts', state: 'new' });
    expect(await d.enter('r', req('aave'), { root: true, idOf })).toMatchObject({ state: 'pending' });
    expect(await d.settle('r', first!.id, settledJob(first!.resolved, { status: 'ok', rows: 2 }))).toEqual({ counted: true, pending: 0 });
    expect(await d.settle('r', first!.id, settledJob(first!.resolved, { status: 'ok', rows: 2 }))).toEqual({ counted: false, pending: 0 });
    expect(await d.enter('r', req('aave'), { root: true, idOf })).toBeUndefined();
    expect(d.ledger.live('r')).toMatchObject({ planned: 1, done: 1, rows: 2, byGroup: { 'gateway.charts': { ok: 1 } } });
  });

  it('an unplannable request of a known job counts as a failed job of the run', async () => {
    const d = driver();
    expect(await d.enter('r', req(null), { root: false, idOf })).toBeUndefined();
    expect(await d.enter('r', { name: 'nope', payload: {} }, { root: false, idOf })).toBeUndefined();
    expect(d.ledger.live('r')).toMatchObject({ planned: 0, failed: 1, failures: [{ job: 'gateway.charts', resource: '?' }] });
  });

  it('settle plans a job\'s follow-ups first, then counts its end: the run is never settled between a job and its children', async () => {
    const d = driver();
    const parent = await d.enter('r', req('aave'), { root: true, idOf });
    const seen: { pending: number; done: number }[] = [];
    const plan = async (requests: readonly { name: string; payload: unknown }[]) => {
      for (const r of requests) await d.enter('r', r, { root: false, idOf });
      seen.push({ pending: await d.ledger.pending('r'), done: d.ledger.live('r').done });
    };
    const settled = await d.settle('r', parent!.id, settledJob(parent!.resolved, { status: 'ok', rows: 1 }), { requests: [req('comp'), req('uni')], plan });
    // While its children were planned the parent was still pending, and not yet counted done.
    expect(seen).toEqual([{ pending: 3, done: 0 }]);
    expect(settled).toEqual({ counted: true, pending: 2 });
    expect(d.ledger.live('r')).toMatchObject({ planned: 3, done: 1 });
  });

  it('settle without follow-ups asks the runner for nothing', async () => {
    const d = driver();
    const j = await d.enter('r', req('aave'), { root: true, idOf });
    let asked = 0;
    await d.settle('r', j!.id, settledJob(j!.resolved, { status: 'ok', rows: 0 }), { requests: [], plan: async () => asked++ });
    expect(asked).toBe(0);
  });

  it('queued reads a queued request back without entering it: nothing counted', async () => {
    const d = driver();
    expect(d.queued(req('aave'))).toMatchObject({ resource: 'token/aave/charts', bucket: expect.any(String) });
    expect(d.queued(req(42))).toMatchObject({ error: expect.stringMatching(/^payload invalid: /) });
    expect(d.ledger.live('r')).toMatchObject({ planned: 0, failed: 0 });
  });

  it('a deduplicated job leaves the run\'s plan', async () => {
    const d = driver();
    const j = await d.enter('r', req('aave'), { root: true, idOf });
    await d.settle('r', j!.id, { kind: 'deduplicated' });
    expect(d.ledger.live('r')).toMatchObject({ planned: 0, deduplicated: 1 });
  });
});
