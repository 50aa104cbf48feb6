// The run ledger's contract (src/engine/run.ts), kept by both ledgers: the in-memory one of
// `tesync sync` and the Redis one of workers, run against a real Redis. A job is counted by
// its first plan and its first settle only, however often either is repeated.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRunLedger, type RunLedger } from '../../src/engine/run.ts';
import { RunTracker } from '../../src/runners/bullmq/run-tracker.ts';
import { redisServerUrl, uniqueName } from '../helpers/services.ts';
import { deleteRedisKeys } from '../helpers/workers.ts';

let redis: Redis;
let redisUrl: string;
const prefix = uniqueName('tesync_ledger');

beforeAll(async () => {
  redisUrl = await redisServerUrl();
  redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
});
afterAll(async () => {
  await deleteRedisKeys(redisUrl, prefix);
  await redis?.quit();
});

const ledgers: [string, () => RunLedger][] = [
  ['memory', () => new MemoryRunLedger()],
  ['redis', () => new RunTracker(redis, prefix)],
];

describe.each(ledgers)('the %s run ledger', (_name, make) => {
  it('counts a job once, however often it is planned or settled', async () => {
    const ledger = make();
    const run = uniqueName('run');
    expect(await ledger.plan(run, 'app/metrics')).toBe('new');
    expect(await ledger.plan(run, 'app/metrics')).toBe('pending');
    expect(await ledger.plan(run, 'app/tokens')).toBe('new');
    expect(await ledger.pending(run)).toBe(2);
    expect(await ledger.settle(run, 'app/metrics', { kind: 'done', rows: 7, group: 'app.catalog', status: 'ok' })).toEqual({ counted: true, pending: 1 });
    // A second attempt of a job that settled already (its worker died before its queue heard).
    expect(await ledger.settle(run, 'app/metrics', { kind: 'done', rows: 7, group: 'app.catalog', status: 'ok' })).toEqual({ counted: false, pending: 1 });
    expect(await ledger.plan(run, 'app/metrics')).toBe('settled');
    const failure = { job: 'app.tokens', resource: 'tokens', source: 'app', status: 'failed' as const, type: 'UpstreamServerError', error: 'UpstreamServerError: 500' };
    expect(await ledger.settle(run, 'app/tokens', { kind: 'failed', group: 'app.tokens', status: 'failed', failure })).toEqual({ counted: true, pending: 0 });
    const stats = await ledger.stats(run);
    expect(stats).toMatchObject({ planned: 2, done: 1, failed: 1, rows: 7, deduplicated: 0, byGroup: { 'app.catalog': { ok: 1 }, 'app.tokens': { failed: 1 } } });
    expect(stats.failures).toEqual([failure]);
  });

  it('a job another run queued leaves this run\'s plan; an unplannable follow-up is a failure', async () => {
    const ledger = make();
    const run = uniqueName('run');
    await ledger.plan(run, 'gateway/tokens');
    await ledger.plan(run, 'gateway/token/aurora/page');
    await ledger.settle(run, 'gateway/token/aurora/page', { kind: 'deduplicated' });
    await ledger.noteFailure(run, { job: 'gateway.page', resource: '?', error: 'payload invalid' });
    const stats = await ledger.stats(run);
    expect(stats).toMatchObject({ planned: 1, done: 0, failed: 1, deduplicated: 1 });
    expect(stats.failures.map((f) => f.error)).toEqual(['payload invalid']);
    expect(await ledger.pending(run)).toBe(1);
  });
});
