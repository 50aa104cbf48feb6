// What a stopped deployment leaves in sync.runs, on both queue backends (Redis, or the
// warehouse's own Postgres). A graceful stop of the last worker hands its jobs back: the run
// stays `running` and the next worker finishes it. A run whose jobs the queues lost (Redis
// emptied, the Postgres queue schema gone, or `tesync reset --queues`) can never finish: the
// next worker, or the reset itself, closes it as failed instead of leaving it `running` for ever.
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimOptions, Simulator } from '../../../sim/index.ts';
import { runFate } from '../../../src/runners/bullmq/lost-runs.ts';
import { LOST_RUN_ERROR } from '../../../src/store/books/runs.ts';
import { runCli } from '../../helpers/cli.ts';
import { patience } from '../../helpers/patience.ts';
import { backendEnv, loseQueueState, QUEUE_BACKENDS, removeQueueState, type QueueBackendKind, type QueuePlace } from '../../helpers/queue-backends.ts';
import { freshSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { canaryKey, redisServerUrl, uniqueName, type TestWarehouse } from '../../helpers/services.ts';
import { killAll, SCHEDULES_OFF, startWorker, waitFor, type WorkerProcess } from '../../helpers/workers.ts';
import { queueWalk } from '../../helpers/queue-walk.ts';
import { commandEnv } from '../../helpers/sync.ts';

describe('runFate', () => {
  it('jobs pending or a walk still to plan: the run goes on; work counted: only the finish is missing; nothing: lost', () => {
    expect(runFate({ pending: 3, planned: 10, walkState: undefined })).toBe('resumes');
    expect(runFate({ pending: 0, planned: 0, walkState: 'waiting' })).toBe('resumes');
    expect(runFate({ pending: 0, planned: 0, walkState: 'active' })).toBe('resumes');
    expect(runFate({ pending: 0, planned: 0, walkState: 'delayed' })).toBe('resumes');
    expect(runFate({ pending: 0, planned: 10, walkState: 'completed' })).toBe('finish');
    expect(runFate({ pending: 0, planned: 10, walkState: undefined })).toBe('finish');
    expect(runFate({ pending: 0, planned: 0, walkState: 'completed' })).toBe('lost');
    expect(runFate({ pending: 0, planned: 0, walkState: 'failed' })).toBe('lost');
    expect(runFate({ pending: 0, planned: 0, walkState: undefined })).toBe('lost');
  });
});

const appKey = canaryKey('app');
const gwKey = canaryKey('gw');
const SIM: SimOptions = {
  tokens: 4,
  historyDays: 20,
  chartsPerToken: 1,
  appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
  gatewayKeys: [gwKey],
  latencyMs: [5, 20],
};
// Longer than any case runs: a request held this long is never answered while a case watches it.
const HOLD_MS = 600_000;

// The workers and the queues of a case: gone before its simulator and warehouse (which go when it ends).
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(backend: QueueBackendKind): Promise<{ sim: Simulator; tw: TestWarehouse; env: Record<string, string>; place: QueuePlace; workers: WorkerProcess[] }> {
  const redisUrl = await redisServerUrl();
  const { sim, tw } = await freshSimAndWarehouse(SIM);
  const place: QueuePlace = { backend, redisUrl, databaseUrl: tw.databaseUrl, prefix: uniqueName('tesync_lost') };
  const workers: WorkerProcess[] = [];
  cleanups.push(() => removeQueueState(place), () => killAll(workers));
  const env = {
    ...commandEnv(sim, { appKey, gatewayKey: gwKey }, tw.databaseUrl),
    ...backendEnv(place),
    TE_QUEUE_PREFIX: place.prefix,
    TE_METRICS_PORT: '0',
    TE_WORKER_SHUTDOWN_GRACE_MS: '500',
    // The held request must still be waiting when its worker is stopped: here only a hang guard.
    TE_REQUEST_TIMEOUT_MS: String(patience(15_000)),
    TE_WORKER_LOCK_MS: '2000',
    TE_WORKER_STALLED_INTERVAL_MS: '1000',
    ...SCHEDULES_OFF,
    LOG_LEVEL: 'info',
  };
  return { sim, tw, env, place, workers };
}

type Setup = Awaited<ReturnType<typeof setup>>;

async function runRow(s: Setup, runId: string) {
  const [row] = await s.tw.warehouse.query<{ status: string; error: string | null; stats: { planned?: number; done?: number; failed?: number } }>(
    sql`select status, error, stats from sync.runs where id = ${runId}`,
  );
  return row;
}

/**
 * Enqueues a walk, and stops the only worker (`running`, or one started here) with SIGTERM while
 * the walk's contract request is held unanswered: the worker can end that job only by handing
 * it back, and the run is left with jobs handed back.
 */
async function walkStoppedGracefully(s: Setup, running?: WorkerProcess): Promise<string> {
  const worker = running ?? startWorker(s.env);
  if (!running) s.workers.push(worker);
  await worker.ready;
  const seen = s.sim.requests.length;
  s.sim.script('/openapi-product.json', [{ status: 200, delayMs: HOLD_MS }]);
  // Queued as `tesync enqueue` queues it, from this process: the case is about the workers.
  const { runId } = await queueWalk(s.env);
  await waitFor('the contract request to be in flight', () => (s.sim.requests.slice(seen).some((r) => r.path.startsWith('/openapi-product.json') && r.status === 0) ? true : undefined), 30_000, 20);
  worker.child.kill('SIGTERM');
  expect((await worker.exited).code).toBe(0);
  expect(worker.lines().filter((l) => l.msg === 'shutting down: job handed back to the queue').length).toBeGreaterThanOrEqual(1);
  expect(await runRow(s, runId)).toMatchObject({ status: 'running' });
  return runId;
}

/** The run's jobs the run ledger holds as pending, read where the backend keeps them (Redis's set; sync.run_jobs). */
async function pendingJobs(s: Setup, runId: string): Promise<number> {
  if (s.place.backend === 'postgres') {
    const [row] = await s.tw.warehouse.query<{ n: number }>(
      sql`select count(*)::int as n from sync.run_jobs where queue_prefix = ${s.place.prefix} and run_id = ${runId} and not settled`,
    );
    return row!.n;
  }
  const redis = new Redis(s.place.redisUrl);
  try {
    return await redis.scard(`${s.place.prefix}:run:${runId}:pending`);
  } finally {
    await redis.quit();
  }
}

describe.each(QUEUE_BACKENDS)('runs a stopped deployment leaves, queues on %s', (backend) => {
  it('a graceful stop of the last worker leaves its run running with its jobs queued; the next worker finishes it', async () => {
    const s = await setup(backend);
    const runId = await walkStoppedGracefully(s);
    expect(await pendingJobs(s, runId)).toBeGreaterThan(0);
    const next = startWorker(s.env);
    s.workers.push(next);
    await next.ready;
    const row = await waitFor('the run to finish', async () => {
      const r = await runRow(s, runId);
      return r && r.status !== 'running' ? r : undefined;
    }, 60_000, 200);
    expect(row.status).toBe('succeeded');
    expect(row.stats.failed).toBe(0);
    expect(row.stats.done).toBe(row.stats.planned);
    expect(await pendingJobs(s, runId)).toBe(0);
    expect(next.lines().some((l) => l.msg.startsWith('run closed as failed'))).toBe(false);
  });

  it('a run whose jobs the queues lost is closed as failed by the next worker, and by tesync reset --queues', async () => {
    const s = await setup(backend);
    // The queues emptied while no worker ran: a Redis that restarted without persistence; on
    // Postgres, the queue schema and the prefix's ledger rows gone (a restore without them).
    const first = await walkStoppedGracefully(s);
    expect(await loseQueueState(s.place)).toBeGreaterThan(0);
    const next = startWorker(s.env);
    s.workers.push(next);
    await next.ready;
    // Looked for before the worker says it is ready.
    expect(await runRow(s, first)).toMatchObject({ status: 'failed', error: LOST_RUN_ERROR });
    expect(next.lines().filter((l) => l.msg === `run closed as failed: ${LOST_RUN_ERROR}`).map((l) => l.runId)).toEqual([first]);

    // On the queues it made again, that worker takes a walk and is stopped under it, for good:
    // reset removes its queues and closes the run they held.
    const second = await walkStoppedGracefully(s, next);
    const reset = await runCli(['reset', '--queues'], s.env);
    expect(reset.stderr).toBe('');
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain('Closed 1 run of these workers as failed');
    expect(await runRow(s, second)).toMatchObject({ status: 'failed', error: LOST_RUN_ERROR });
    expect(await pendingJobs(s, second)).toBe(0);
    const runs = await s.tw.warehouse.query<{ status: string; n: number }>(sql`select status, count(*)::int as n from sync.runs group by 1`);
    expect(runs).toEqual([{ status: 'failed', n: 2 }]);
  });
});
