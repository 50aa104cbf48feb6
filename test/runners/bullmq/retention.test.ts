// What a `tesync worker` leaves in Redis once a run is recorded, and what a late duplicate of
// one of its fetch jobs does. Completed jobs are kept briefly and a finished run's keys expire
// after a short grace; a duplicate of a settled job (its worker died after settling, before
// BullMQ recorded the completion; a stalled job run again) makes no request and writes
// nothing, whether the run's keys are still there or gone.
import { Queue, type Job } from 'bullmq';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPLETED_JOBS_KEPT, FAILED_JOBS_KEPT, FETCH_JOB_OPTIONS } from '../../../src/runners/bullmq/queues.ts';
import { FINISHED_RUN_KEYS_MS } from '../../../src/runners/bullmq/walk.ts';
import { runCli } from '../../helpers/cli.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { canaryKey, redisServerUrl, uniqueName } from '../../helpers/services.ts';
import { warehouseDigest } from '../../helpers/warehouse-compare.ts';
import { deleteRedisKeys, killAll, SCHEDULES_OFF, startWorker, waitFor, type WorkerProcess } from '../../helpers/workers.ts';

const appKey = canaryKey('app');
let redisUrl: string;
let redis: Redis;
const prefix = uniqueName('tesync_retention');
const workers: WorkerProcess[] = [];
let env: Record<string, string>;
let runId: string;

const fx = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, latencyMs: [2, 10] });

beforeAll(async () => {
  redisUrl = await redisServerUrl();
  redis = new Redis(redisUrl);
  env = {
    DATABASE_URL: fx.databaseUrl,
    REDIS_URL: redisUrl,
    TE_QUEUE_PREFIX: prefix,
    TE_APP_URL: fx.sim.url,
    TE_APP_API_KEY: appKey,
    TE_METRICS_PORT: '0',
    ...SCHEDULES_OFF,
    LOG_LEVEL: 'info',
  };
  const w = startWorker(env);
  workers.push(w);
  await w.ready;
  const r = await runCli(['enqueue', '--source', 'app', '--wait', '--timeout', '40', '--json'], env, { timeoutMs: 50_000 });
  expect(r.code, r.stderr).toBe(0);
  const outcome = JSON.parse(r.stdout) as { runId: string; status: string };
  expect(outcome.status).toBe('succeeded');
  runId = outcome.runId;
});

// Before the fixture's teardown: no worker is left writing to the warehouse it drops.
afterAll(async () => {
  await killAll(workers);
  await deleteRedisKeys(redisUrl, prefix);
  await redis?.quit();
});

function openQueue(name: string): Queue {
  const u = new URL(redisUrl);
  return new Queue(name, { connection: { host: u.hostname, port: Number(u.port || 6379) }, prefix });
}

const runKey = (part: string) => `${prefix}:run:${runId}:${part}`;

async function runRecord() {
  const [row] = await fx.warehouse.query<{ status: string; stats: unknown; finished_at: string }>(sql`select status, stats, finished_at::text from sync.runs where id = ${runId}`);
  return row!;
}

async function requestRows(): Promise<number> {
  const [row] = await fx.warehouse.query<{ n: string }>(sql`select count(*)::text as n from sync.requests`);
  return Number(row!.n);
}

/** Adds a completed job again under its own id, as a late duplicate: its record removed, the same data. */
async function duplicate(queue: Queue, job: Job): Promise<Job> {
  await job.remove();
  const again = await queue.add(job.name, job.data, { ...FETCH_JOB_OPTIONS, jobId: job.id!, ...(job.opts.deduplication ? { deduplication: job.opts.deduplication } : {}) });
  expect(again.id).toBe(job.id);
  return waitFor(
    `the duplicate of ${job.id} to complete`,
    // The state first, then the job: a job read just before it completed has no return value yet.
    async () => ((await queue.getJobState(job.id!)) === 'completed' ? queue.getJob(job.id!) : undefined),
    10_000,
    50,
  );
}

describe('Redis retention and late duplicates', () => {
  it("a finished run's keys expire after the short grace; completed jobs carry the short retention", async () => {
    expect(FINISHED_RUN_KEYS_MS).toBeLessThanOrEqual(5 * 60_000);
    for (const part of ['seen', 'pending', 'stats']) {
      const ttl = await redis.pttl(runKey(part));
      // The pending set is empty once the run is over: Redis has removed it already (-2).
      if (part === 'pending') expect(ttl === -2 || (ttl > 0 && ttl <= FINISHED_RUN_KEYS_MS)).toBe(true);
      else {
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(FINISHED_RUN_KEYS_MS);
      }
    }

    expect(COMPLETED_JOBS_KEPT.age).toBeLessThanOrEqual(15 * 60);
    const fetchQueue = openQueue('fetch-app-public');
    const walkQueue = openQueue('walk');
    try {
      const done = await fetchQueue.getJobs(['completed']);
      expect(done.length).toBeGreaterThan(0);
      for (const j of done) {
        expect(j.opts.removeOnComplete).toEqual(COMPLETED_JOBS_KEPT);
        expect(j.opts.removeOnFail).toEqual(FAILED_JOBS_KEPT);
      }
      // The walk job is kept as briefly; the finish job is removed when done.
      const walks = await walkQueue.getJobs(['completed']);
      expect(walks.map((j) => j.name)).toEqual(['walk']);
      expect(walks[0]!.opts.removeOnComplete).toEqual(COMPLETED_JOBS_KEPT);
    } finally {
      await fetchQueue.close();
      await walkQueue.close();
    }
  });

  it('a late duplicate of a settled fetch job makes no request and writes nothing, while the run keys live and after they are gone', async () => {
    const queue = openQueue('fetch-app-public');
    try {
      const done = await queue.getJobs(['completed']);
      // A planner with follow-ups, and a resource job that writes rows.
      const tokens = done.find((j) => j.name === 'app.tokens')!;
      const history = done.find((j) => j.name === 'app.history')!;
      expect(tokens).toBeDefined();
      expect(history).toBeDefined();

      const before = { record: await runRecord(), stats: await redis.hgetall(runKey('stats')), seen: await redis.scard(runKey('seen')), requests: await requestRows(), digest: await warehouseDigest(fx.warehouse) };
      const served = fx.sim.requests.length;

      // While the run's keys are still there (within the grace).
      const first = await duplicate(queue, tokens);
      expect(first.returnvalue).toEqual({ status: 'already_settled', rows: 0 });
      expect(await redis.hgetall(runKey('stats'))).toEqual(before.stats);
      expect(await redis.scard(runKey('seen'))).toBe(before.seen);

      // After they expired: a duplicate of a recorded run that Redis has forgotten.
      await redis.del(runKey('seen'), runKey('pending'), runKey('stats'), runKey('failures'));
      const second = await duplicate(queue, history);
      expect(second.returnvalue).toEqual({ status: 'already_settled', rows: 0 });
      // Nothing of the run was opened again: no keys, no follow-ups, no second finish.
      expect(await redis.keys(`${prefix}:run:${runId}:*`)).toEqual([]);
      expect(await queue.getJobCounts('waiting', 'active', 'delayed')).toEqual({ waiting: 0, active: 0, delayed: 0 });

      expect(fx.sim.requests.length).toBe(served);
      expect(await requestRows()).toBe(before.requests);
      expect(await warehouseDigest(fx.warehouse)).toEqual(before.digest);
      expect(await runRecord()).toEqual(before.record);
      const skipped = workers[0]!.lines().filter((l) => l.msg === 'job already settled in its run; skipped');
      expect(skipped.map((l) => l.jobId).sort()).toEqual([history.id, tokens.id].sort());
    } finally {
      await queue.close();
    }
  });
});
