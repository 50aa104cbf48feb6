// The run ledger's contract (src/ports/run-ledger.ts), one body run on each ledger: the in-memory one
// of `tesync sync`, the Redis one of workers (against a real Redis) and the Postgres one of
// workers without Redis (against a migrated warehouse). A job is counted by its first entry and
// its first settle only, however often either is repeated, from however many connections.
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresRunLedger } from '../../../src/store/books/postgres-run-ledger.ts';
import { MAX_FAILURES, type RunLedger, type RunStats } from '../../../src/ports/run-ledger.ts';
import { MemoryRunLedger } from '../../../src/engine/run/memory-run-ledger.ts';
import { RedisRunLedger } from '../../../src/runners/bullmq/redis-run-ledger.ts';
import { openWarehouse, type Warehouse } from '../../../src/store/connection.ts';
import { patience } from '../../helpers/patience.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';
import { redisServerUrl, uniqueName, withServerClockOffset } from '../../helpers/services.ts';
import { deleteRedisKeys } from '../../helpers/workers.ts';

let redisUrl: string;
/** Two clients, two warehouse pools: the workers of one deployment, each on its own connection. */
let redis: Redis;
let redis2: Redis;
const warehouse = useTestWarehouse({ maxConnections: 2 });
// A second pool on the same database: another worker's.
let warehouse2: Warehouse;
const prefix = uniqueName('tesync_ledger');
/** Another deployment sharing the same Redis and warehouse. */
const otherPrefix = `${prefix}_other`;

beforeAll(async () => {
  redisUrl = await redisServerUrl();
  redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  redis2 = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  warehouse2 = await openWarehouse({ databaseUrl: warehouse.databaseUrl, dataDir: '', maxConnections: 2 });
}, patience(60_000));
afterAll(async () => {
  await Promise.all([deleteRedisKeys(redisUrl, prefix), deleteRedisKeys(redisUrl, otherPrefix)]);
  await Promise.all([redis?.quit(), redis2?.quit(), warehouse2?.close()]);
});

/** A ledger, and the same ledger reached through another connection (memory: the same object). */
interface Ledgers {
  ledger: RunLedger;
  second: RunLedger;
}

const ledgers: [string, () => Ledgers][] = [
  [
    'memory',
    () => {
      const ledger = new MemoryRunLedger();
      return { ledger, second: ledger };
    },
  ],
  ['redis', () => ({ ledger: new RedisRunLedger(redis, prefix), second: new RedisRunLedger(redis2, prefix) })],
  ['postgres', () => ({ ledger: new PostgresRunLedger(warehouse.db, prefix), second: new PostgresRunLedger(warehouse2.db, prefix) })],
];

const EMPTY: RunStats = { planned: 0, done: 0, failed: 0, cancelled: 0, rows: 0, deduplicated: 0, byGroup: {}, failures: [] };
const failureOf = (i: number) => ({ job: 'app.history', resource: `token/t${i}/history`, source: 'app', status: 'failed' as const, type: 'UpstreamServerError', httpStatus: 500, error: `UpstreamServerError: 500 (${i})` });

describe.each(ledgers)('the %s run ledger', (_name, make) => {
  it('counts a job once, however often it is entered or settled', async () => {
    const { ledger } = make();
    const run = uniqueName('run');
    expect(await ledger.enter(run, 'app/metrics')).toBe('new');
    expect(await ledger.enter(run, 'app/metrics')).toBe('pending');
    expect(await ledger.enter(run, 'app/tokens')).toBe('new');
    expect(await ledger.pending(run)).toBe(2);
    expect(await ledger.settle(run, 'app/metrics', { kind: 'done', rows: 7, group: 'app.catalog', status: 'ok' })).toEqual({ counted: true, pending: 1 });
    // A second attempt of a job that settled already (its worker died before its queue heard).
    expect(await ledger.settle(run, 'app/metrics', { kind: 'done', rows: 7, group: 'app.catalog', status: 'ok' })).toEqual({ counted: false, pending: 1 });
    expect(await ledger.enter(run, 'app/metrics')).toBe('settled');
    const failure = { job: 'app.tokens', resource: 'tokens', source: 'app', status: 'failed' as const, type: 'UpstreamServerError', error: 'UpstreamServerError: 500' };
    expect(await ledger.settle(run, 'app/tokens', { kind: 'failed', group: 'app.tokens', status: 'failed', failure })).toEqual({ counted: true, pending: 0 });
    const stats = await ledger.stats(run);
    expect(stats).toMatchObject({ planned: 2, done: 1, failed: 1, rows: 7, deduplicated: 0, byGroup: { 'app.catalog': { ok: 1 }, 'app.tokens': { failed: 1 } } });
    expect(stats.failures).toEqual([failure]);
  });

  it('a job another run queued leaves this run\'s plan; an unplannable follow-up is a failure', async () => {
    const { ledger } = make();
    const run = uniqueName('run');
    await ledger.enter(run, 'gateway/tokens');
    await ledger.enter(run, 'gateway/token/aurora/page');
    expect(await ledger.settle(run, 'gateway/token/aurora/page', { kind: 'deduplicated' })).toEqual({ counted: true, pending: 1 });
    // Planned again, it is not this run's to queue.
    expect(await ledger.enter(run, 'gateway/token/aurora/page')).toBe('settled');
    await ledger.noteFailure(run, { job: 'gateway.page', resource: '?', error: 'payload invalid' });
    const stats = await ledger.stats(run);
    expect(stats).toMatchObject({ planned: 1, done: 0, failed: 1, deduplicated: 1 });
    expect(stats.failures.map((f) => f.error)).toEqual(['payload invalid']);
    expect(await ledger.pending(run)).toBe(1);
  });

  it('counts each job once when two connections enter and settle it at once; the settles read pending down to 0', async () => {
    const { ledger, second } = make();
    const run = uniqueName('run');
    const jobs = Array.from({ length: 20 }, (_, i) => `app/token/t${i}/history`);
    const plans = await Promise.all(jobs.map((job) => Promise.all([ledger.enter(run, job), second.enter(run, job)])));
    for (const pair of plans) expect([...pair].sort()).toEqual(['new', 'pending']);
    expect(await second.pending(run)).toBe(jobs.length);

    const settles = await Promise.all(
      jobs.map((job, i) => Promise.all([ledger, second].map((l) => l.settle(run, job, { kind: 'done', rows: i, group: 'app.history', status: 'ok' })))),
    );
    for (const pair of settles) expect(pair.map((s) => s.counted).sort()).toEqual([false, true]);
    // Counted settles one after another: each read what was pending after it, the last one 0.
    const counted = settles.flat().filter((s) => s.counted).map((s) => s.pending);
    expect(counted.sort((a, b) => a - b)).toEqual(jobs.map((_, i) => i));
    expect(await ledger.pending(run)).toBe(0);
    expect(await second.stats(run)).toEqual({ ...EMPTY, planned: 20, done: 20, rows: 190, byGroup: { 'app.history': { ok: 20 } } });
  });

  it(`counts every failure and keeps the first ${MAX_FAILURES}`, async () => {
    const { ledger } = make();
    const run = uniqueName('run');
    const n = MAX_FAILURES + 3;
    for (let i = 0; i < n; i++) await ledger.enter(run, `app/token/t${i}/history`);
    for (let i = 0; i < n; i++) await ledger.settle(run, `app/token/t${i}/history`, { kind: 'failed', group: 'app.history', status: 'failed', failure: failureOf(i) });
    await ledger.noteFailure(run, { job: 'app.page', resource: '?', error: 'payload invalid' });
    const stats = await ledger.stats(run);
    expect(stats).toMatchObject({ planned: n, failed: n + 1, byGroup: { 'app.history': { failed: n } } });
    expect(stats.failures).toEqual(Array.from({ length: MAX_FAILURES }, (_, i) => failureOf(i)));
  });

  it('counts jobs by group and status, and the rows they wrote', async () => {
    const { ledger } = make();
    const run = uniqueName('run');
    const outcomes = [
      ['app/tokens', { kind: 'done', rows: 3, group: 'app.tokens', status: 'ok' }],
      ['app/token/a/history', { kind: 'done', rows: 5, group: 'app.history', status: 'partial' }],
      ['app/token/b/history', { kind: 'done', rows: 0, group: 'app.history', status: 'unchanged' }],
      ['app/token/c/history', { kind: 'done', rows: 4, group: 'app.history', status: 'ok' }],
      ['gateway/screener', { kind: 'failed', group: 'gateway.screener', status: 'rate_limited' }],
      // Without a group (a job of an older worker): counted, in no group.
      ['app/metrics', { kind: 'done', rows: 2 }],
    ] as const;
    for (const [job] of outcomes) await ledger.enter(run, job);
    for (const [job, outcome] of outcomes) await ledger.settle(run, job, outcome);
    expect(await ledger.stats(run)).toEqual({
      ...EMPTY,
      planned: 6,
      done: 5,
      failed: 1,
      rows: 14,
      byGroup: { 'app.tokens': { ok: 1 }, 'app.history': { partial: 1, unchanged: 1, ok: 1 }, 'gateway.screener': { rate_limited: 1 } },
    });
  });

  it('a run it never saw: empty stats, nothing pending, a settle counts nothing; a failure opens it', async () => {
    const { ledger } = make();
    const run = uniqueName('run');
    expect(await ledger.stats(run)).toEqual(EMPTY);
    expect(await ledger.pending(run)).toBe(0);
    expect(await ledger.settle(run, 'app/metrics', { kind: 'done', rows: 1, group: 'app.catalog', status: 'ok' })).toEqual({ counted: false, pending: 0 });
    expect(await ledger.stats(run)).toEqual(EMPTY);

    const other = uniqueName('run');
    const failure = { job: 'app.page', resource: '?', source: 'app', error: 'payload invalid' };
    await ledger.noteFailure(other, failure);
    expect(await ledger.stats(other)).toEqual({ ...EMPTY, failed: 1, failures: [failure] });
    expect(await ledger.enter(other, 'app/metrics')).toBe('new');
    expect(await ledger.stats(other)).toMatchObject({ planned: 1, failed: 1 });
    expect(await ledger.pending(other)).toBe(1);
  });
});

/** The ledgers workers share, with what the worker asks beside the contract. */
const workerLedgers: [string, (prefix: string) => RedisRunLedger | PostgresRunLedger][] = [
  ['redis', (p) => new RedisRunLedger(redis, p)],
  ['postgres', (p) => new PostgresRunLedger(warehouse.db, p)],
];

describe.each(workerLedgers)('the %s run ledger of workers', (_name, make) => {
  it('tells a job pending until it settles; a queue prefix is a deployment of its own', async () => {
    const ledger = make(prefix);
    const other = make(otherPrefix);
    const run = uniqueName('run');
    expect(await ledger.enter(run, 'app/metrics')).toBe('new');
    expect(await other.enter(run, 'app/metrics')).toBe('new');
    expect(await ledger.isPending(run, 'app/metrics')).toBe(true);
    expect(await ledger.isPending(run, 'app/tokens')).toBe(false);
    expect(await ledger.settle(run, 'app/metrics', { kind: 'done', rows: 1 })).toEqual({ counted: true, pending: 0 });
    expect(await ledger.isPending(run, 'app/metrics')).toBe(false);
    expect(await other.isPending(run, 'app/metrics')).toBe(true);
    expect(await other.stats(run)).toEqual({ ...EMPTY, planned: 1 });
    expect(await other.pending(run)).toBe(1);
  });
});

describe('the postgres run ledger', () => {
  /** A ledger on a connection whose server clock reads `offset` later. */
  async function later(offset: string): Promise<{ ledger: PostgresRunLedger; close: () => Promise<void> }> {
    const w = await openWarehouse({ databaseUrl: withServerClockOffset(warehouse.databaseUrl, offset), dataDir: '', maxConnections: 1 });
    return { ledger: new PostgresRunLedger(w.db, prefix), close: () => w.close() };
  }

  it('removes runs past their time, of every deployment, when a run enters its first job', async () => {
    const ledger = new PostgresRunLedger(warehouse.db, prefix);
    const elsewhere = new PostgresRunLedger(warehouse.db, otherPrefix);
    const [running, recorded, abandoned] = [uniqueName('run'), uniqueName('run'), uniqueName('run')];
    await ledger.enter(running, 'app/metrics');
    await ledger.enter(recorded, 'app/metrics');
    await ledger.settle(recorded, 'app/metrics', { kind: 'done', rows: 1 });
    await ledger.expire(recorded, 120_000);
    await elsewhere.enter(abandoned, 'app/metrics');
    const rowsOf = async (run: string) => (await warehouse.query<{ n: number }>(sqlCount(run)))[0]!.n;

    const hour = await later('1 hour');
    try {
      // Nothing is removed until a run starts.
      expect(await rowsOf(recorded)).toBe(2);
      expect(await hour.ledger.enter(uniqueName('run'), 'app/metrics')).toBe('new');
    } finally {
      await hour.close();
    }
    expect(await rowsOf(recorded)).toBe(0);
    expect(await ledger.stats(recorded)).toEqual(EMPTY);
    expect(await ledger.pending(running)).toBe(1);

    const week = await later('7 days 1 minute');
    try {
      expect(await week.ledger.enter(uniqueName('run'), 'app/metrics')).toBe('new');
    } finally {
      await week.close();
    }
    expect([await rowsOf(running), await rowsOf(abandoned)]).toEqual([0, 0]);
    expect(await ledger.isPending(running, 'app/metrics')).toBe(false);
    expect(await elsewhere.pending(abandoned)).toBe(0);
  });
});

/** The rows a run has in the ledger's two tables. */
function sqlCount(run: string) {
  return sql`select ((select count(*) from sync.run_counts where run_id = ${run}) + (select count(*) from sync.run_jobs where run_id = ${run}))::int as n`;
}
