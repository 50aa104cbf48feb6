// What a stopped deployment leaves in sync.runs. A graceful stop of the last worker hands its
// jobs back: the run stays `running` and the next worker finishes it. A run whose jobs Redis
// lost (emptied, or `tesync reset --redis`) can never finish: the next worker, or the reset
// itself, closes it as failed instead of leaving it `running` for ever.
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type SimOptions, type Simulator } from '../../../sim/index.ts';
import { LOST_RUN_ERROR, runFate } from '../../../src/runners/bullmq/lost-runs.ts';
import { runCli } from '../../helpers/cli.ts';
import { canaryKey, createTestWarehouse, redisServerUrl, uniqueName, type TestWarehouse } from '../../helpers/services.ts';
import { deleteRedisKeys, killAll, SCHEDULES_OFF, startWorker, waitFor, type WorkerProcess } from '../../helpers/workers.ts';

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
// The contract is slow to send: a SIGTERM while it is in flight hands it back (grace 500 ms).
const SIM: SimOptions = {
  tokens: 4,
  historyDays: 20,
  chartsPerToken: 1,
  appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
  gatewayKeys: [gwKey],
  latencyMs: [5, 20],
  faults: { stallMs: 1500, pathFilter: '/openapi-product.json' },
};

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ sim: Simulator; tw: TestWarehouse; env: Record<string, string>; redisUrl: string; prefix: string; workers: WorkerProcess[] }> {
  const redisUrl = await redisServerUrl();
  const sim = await startSimulator(SIM);
  const tw = await createTestWarehouse();
  const prefix = uniqueName('tesync_lost');
  const workers: WorkerProcess[] = [];
  cleanups.push(() => sim.close(), () => tw.cleanup(), () => deleteRedisKeys(redisUrl, prefix), () => killAll(workers));
  const env = {
    DATABASE_URL: tw.databaseUrl,
    REDIS_URL: redisUrl,
    TE_QUEUE_PREFIX: prefix,
    TE_APP_URL: sim.url,
    TE_APP_API_KEY: appKey,
    TE_GATEWAY_URL: sim.url,
    TE_GATEWAY_API_KEY: gwKey,
    TE_METRICS_PORT: '0',
    TE_WORKER_SHUTDOWN_GRACE_MS: '500',
    TE_WORKER_LOCK_MS: '2000',
    TE_WORKER_STALLED_INTERVAL_MS: '1000',
    ...SCHEDULES_OFF,
    LOG_LEVEL: 'info',
  };
  return { sim, tw, env, redisUrl, prefix, workers };
}

type Setup = Awaited<ReturnType<typeof setup>>;

async function runRow(s: Setup, runId: string) {
  const [row] = await s.tw.warehouse.query<{ status: string; error: string | null; stats: { planned?: number; done?: number; failed?: number } }>(
    sql`select status, error, stats from sync.runs where id = ${runId}`,
  );
  return row;
}

/** Enqueues a walk, and stops the only worker with SIGTERM while the slow contract is in flight: the run is left with jobs handed back. */
async function walkStoppedGracefully(s: Setup): Promise<string> {
  const worker = startWorker(s.env);
  s.workers.push(worker);
  await worker.ready;
  const queued = await runCli(['enqueue', '--json'], s.env);
  expect(queued.code).toBe(0);
  const { runId } = JSON.parse(queued.stdout) as { runId: string };
  await waitFor('the contract request to be in flight', async () => (s.sim.requests.some((r) => r.path.startsWith('/openapi-product.json') && Date.now() - r.at < 1000) ? true : undefined), 30_000, 20);
  worker.child.kill('SIGTERM');
  expect((await worker.exited).code).toBe(0);
  expect(worker.lines().filter((l) => l.msg === 'shutting down: job handed back to the queue').length).toBeGreaterThanOrEqual(1);
  expect(await runRow(s, runId)).toMatchObject({ status: 'running' });
  return runId;
}

async function pendingJobs(s: Setup, runId: string): Promise<number> {
  const redis = new Redis(s.redisUrl);
  try {
    return await redis.scard(`${s.prefix}:run:${runId}:pending`);
  } finally {
    await redis.quit();
  }
}

describe('runs a stopped deployment leaves', () => {
  it('a graceful stop of the last worker leaves its run running with its jobs queued; the next worker finishes it', async () => {
    const s = await setup();
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
    expect(next.lines().some((l) => l.msg.startsWith('run closed as failed'))).toBe(false);
  });

  it('a run whose jobs Redis lost is closed as failed by the next worker, and by tesync reset --redis', async () => {
    const s = await setup();
    // Redis emptied while no worker ran (a restart without persistence).
    const first = await walkStoppedGracefully(s);
    expect(await deleteRedisKeys(s.redisUrl, s.prefix)).toBeGreaterThan(0);
    const next = startWorker(s.env);
    s.workers.push(next);
    await next.ready;
    // Looked for before the worker says it is ready.
    expect(await runRow(s, first)).toMatchObject({ status: 'failed', error: LOST_RUN_ERROR });
    expect(next.lines().filter((l) => l.msg === `run closed as failed: ${LOST_RUN_ERROR}`).map((l) => l.runId)).toEqual([first]);
    next.child.kill('SIGTERM');
    expect((await next.exited).code).toBe(0);

    // The deployment stopped for good: reset removes the keys and closes the run they held.
    const second = await walkStoppedGracefully(s);
    const reset = await runCli(['reset', '--redis'], s.env);
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain('Closed 1 run of these workers as failed');
    expect(await runRow(s, second)).toMatchObject({ status: 'failed', error: LOST_RUN_ERROR });
    const runs = await s.tw.warehouse.query<{ status: string; n: number }>(sql`select status, count(*)::int as n from sync.runs group by 1`);
    expect(runs).toEqual([{ status: 'failed', n: 2 }]);
  });
});
