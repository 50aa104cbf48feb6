// What a `tesync worker` leaves in its queue backend once a run is recorded, and what a late
// duplicate of one of its fetch jobs does, on both backends (Redis, or the warehouse's own
// Postgres). Completed jobs are kept briefly and a finished run's ledger state (Redis keys, or
// its rows of sync.run_counts and sync.run_jobs) goes after a short grace; a duplicate of a
// settled job (its worker died after settling, before BullMQ recorded the completion; a stalled
// job run again) makes no request and writes nothing, whether the run's state is still there or gone.
import { type Job } from 'bullmq';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyQueue } from '../../../src/runners/bullmq/backend.ts';
import { COMPLETED_JOBS_KEPT, FAILED_JOBS_KEPT, FETCH_JOB_OPTIONS } from '../../../src/runners/bullmq/queues.ts';
import { FINISHED_RUN_KEYS_MS } from '../../../src/runners/bullmq/walk.ts';
import { openWarehouse, type Warehouse } from '../../../src/store/connection.ts';
import { removeExpiredRuns } from '../../../src/store/books/run-ledger.ts';
import { queueWalk, runEnded } from '../../helpers/queue-walk.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { backendEnv, openTestQueue, QUEUE_BACKENDS, removeQueueState, type QueueBackendKind, type QueuePlace } from '../../helpers/queue-backends.ts';
import { canaryKey, redisServerUrl, uniqueName, withServerClockOffset } from '../../helpers/services.ts';
import { warehouseDigest } from '../../helpers/warehouse-compare.ts';
import { killAll, SCHEDULES_OFF, startWorker, waitFor, type WorkerProcess } from '../../helpers/workers.ts';

const appKey = canaryKey('app');

/** A finished run's state in the run ledger, where the backend keeps it. */
interface LedgerView {
  /** Its state goes after the short grace, not before, and nothing of it is pending. */
  expectGoingAfterGrace(): Promise<void>;
  /** Its counts as stored: unchanged by a duplicate. */
  snapshot(): Promise<unknown>;
  /** The grace passes: its state goes. */
  forget(): Promise<void>;
  /** How many records of the run are left. */
  left(): Promise<number>;
  close(): Promise<void>;
}

/** Redis: the keys `<prefix>:run:<id>:{seen,pending,stats,failures}`, each with a TTL. */
function redisLedger(redisUrl: string, prefix: string, runId: string): LedgerView {
  const redis = new Redis(redisUrl);
  const key = (part: string) => `${prefix}:run:${runId}:${part}`;
  return {
    async expectGoingAfterGrace() {
      // The grace is set just after the run's record is written (walk.ts finishRunIfSettled): the
      // record, which the test waited for, can come first.
      await waitFor('the run\'s keys to take the grace', async () => {
        const ttl = await redis.pttl(key('stats'));
        return ttl > 0 && ttl <= FINISHED_RUN_KEYS_MS ? true : undefined;
      }, 10_000);
      for (const part of ['seen', 'pending', 'stats']) {
        const ttl = await redis.pttl(key(part));
        // The pending set is empty once the run is over: Redis has removed it already (-2).
        if (part === 'pending') expect(ttl === -2 || (ttl > 0 && ttl <= FINISHED_RUN_KEYS_MS)).toBe(true);
        else {
          expect(ttl).toBeGreaterThan(0);
          expect(ttl).toBeLessThanOrEqual(FINISHED_RUN_KEYS_MS);
        }
      }
      expect(await redis.scard(key('pending'))).toBe(0);
    },
    snapshot: async () => ({ stats: await redis.hgetall(key('stats')), seen: await redis.scard(key('seen')) }),
    // Redis drops keys whose TTL ran out: as if the grace had passed.
    forget: async () => void (await redis.del(key('seen'), key('pending'), key('stats'), key('failures'))),
    left: async () => (await redis.keys(key('*'))).length,
    close: async () => void (await redis.quit()),
  };
}

/** Postgres: the run's row of sync.run_counts, with its expires_at, and its jobs' rows of sync.run_jobs, which go with it. */
function postgresLedger(warehouse: Warehouse, databaseUrl: string, prefix: string, runId: string): LedgerView {
  const counts = async () =>
    warehouse.query<{ planned: number; pending: number; done: number; failed: number; deduplicated: number; rows: string; by_group: unknown; failures: unknown; ttl_ms: number }>(
      sql`select planned, pending, done, failed, deduplicated, rows::text, by_group, failures,
                 (extract(epoch from expires_at - sync.server_clock()) * 1000)::float8 as ttl_ms
          from sync.run_counts where queue_prefix = ${prefix} and run_id = ${runId}`,
    );
  const jobs = async () =>
    (
      await warehouse.query<{ n: number; pending: number }>(
        sql`select count(*)::int as n, count(*) filter (where not settled)::int as pending from sync.run_jobs where queue_prefix = ${prefix} and run_id = ${runId}`,
      )
    )[0]!;
  /** The removal a run's first plan makes (run-ledger.ts), on a connection whose server clock reads `offset` ahead. */
  const removeExpiredAt = async (offset: string) => {
    const later = await openWarehouse({ databaseUrl: withServerClockOffset(databaseUrl, offset), dataDir: '', maxConnections: 1 });
    try {
      await removeExpiredRuns(later.db);
    } finally {
      await later.close();
    }
  };
  const left = async () => (await counts()).length + (await jobs()).n;
  return {
    async expectGoingAfterGrace() {
      // The grace is set just after the run's record is written (walk.ts finishRunIfSettled): the
      // record, which the test waited for, can come first.
      const row = await waitFor('the run\'s counts to take the grace', async () => (await counts()).find((r) => r.ttl_ms > 0 && r.ttl_ms <= FINISHED_RUN_KEYS_MS), 10_000);
      expect(row).toBeDefined();
      // Both ends on the server's clock (expireRun sets it from there).
      expect(row!.ttl_ms).toBeGreaterThan(0);
      expect(row!.ttl_ms).toBeLessThanOrEqual(FINISHED_RUN_KEYS_MS);
      expect(row!.pending).toBe(0);
      expect(await jobs()).toEqual({ n: row!.planned, pending: 0 });
      // A removal now (another run's first plan) leaves it: the grace is not over.
      await removeExpiredAt('0');
      expect(await counts()).toHaveLength(1);
    },
    snapshot: async () => ({ counts: (await counts()).map(({ ttl_ms: _, ...c }) => c), jobs: await jobs() }),
    // The next removal once the grace passed: a server clock that reads the grace and a second later.
    async forget() {
      await removeExpiredAt(`${FINISHED_RUN_KEYS_MS + 1000} milliseconds`);
      expect(await left()).toBe(0);
    },
    left,
    close: async () => {},
  };
}

describe.each(QUEUE_BACKENDS)('retention and late duplicates, queues on %s', (backend: QueueBackendKind) => {
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, latencyMs: [2, 10] });
  const workers: WorkerProcess[] = [];
  let place: QueuePlace;
  let runId: string;
  let ledger: LedgerView;

  beforeAll(async () => {
    place = { backend, redisUrl: await redisServerUrl(), databaseUrl: fx.databaseUrl, prefix: uniqueName('tesync_retention') };
    const env = {
      DATABASE_URL: fx.databaseUrl,
      ...backendEnv(place),
      TE_QUEUE_PREFIX: place.prefix,
      TE_APP_URL: fx.sim.url,
      TE_APP_API_KEY: appKey,
      TE_METRICS_PORT: '0',
      ...SCHEDULES_OFF,
      LOG_LEVEL: 'info',
    };
    const w = startWorker(env);
    workers.push(w);
    await w.ready;
    // Queued and awaited as `tesync enqueue --source app --wait` does, from this process.
    const outcome = await runEnded(fx.databaseUrl, (await queueWalk(env, { sources: ['app'] })).runId, { nominalMs: 40_000 });
    expect(outcome.status).toBe('succeeded');
    runId = outcome.runId;
    ledger = backend === 'redis' ? redisLedger(place.redisUrl, place.prefix, runId) : postgresLedger(fx.warehouse, fx.databaseUrl, place.prefix, runId);
  });

  // Before the fixture's teardown: no worker is left writing to the warehouse it drops.
  afterAll(async () => {
    await killAll(workers);
    await ledger?.close();
    if (place) await removeQueueState(place);
  });

  async function runRecord() {
    const [row] = await fx.warehouse.query<{ status: string; stats: unknown; finished_at: string }>(sql`select status, stats, finished_at::text from sync.runs where id = ${runId}`);
    return row!;
  }

  async function requestRows(): Promise<number> {
    const [row] = await fx.warehouse.query<{ n: string }>(sql`select count(*)::text as n from sync.requests`);
    return Number(row!.n);
  }

  /** Adds a completed job again under its own id, as a late duplicate: its record removed, the same data. */
  async function duplicate(queue: AnyQueue, job: Job): Promise<Job> {
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

  it("a finished run's ledger state goes after the short grace; completed jobs carry the short retention", async () => {
    expect(FINISHED_RUN_KEYS_MS).toBeLessThanOrEqual(5 * 60_000);
    await ledger.expectGoingAfterGrace();

    expect(COMPLETED_JOBS_KEPT.age).toBeLessThanOrEqual(15 * 60);
    const fetchQueue = openTestQueue(place, 'fetch-app-public');
    const walkQueue = openTestQueue(place, 'walk');
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

  it("a late duplicate of a settled fetch job makes no request and writes nothing, while the run's ledger state lives and after it is gone", async () => {
    const queue = openTestQueue(place, 'fetch-app-public');
    try {
      const done = await queue.getJobs(['completed']);
      // A planner with follow-ups, and a resource job that writes rows.
      const tokens = done.find((j) => j.name === 'app.tokens')!;
      const history = done.find((j) => j.name === 'app.history')!;
      expect(tokens).toBeDefined();
      expect(history).toBeDefined();

      const before = { record: await runRecord(), ledger: await ledger.snapshot(), requests: await requestRows(), digest: await warehouseDigest(fx.warehouse) };
      const served = fx.sim.requests.length;

      // While the run's ledger state is still there (within the grace).
      const first = await duplicate(queue, tokens);
      expect(first.returnvalue).toEqual({ status: 'already_settled', rows: 0 });
      expect(await ledger.snapshot()).toEqual(before.ledger);

      // After it went: a duplicate of a recorded run that the ledger has forgotten.
      await ledger.forget();
      const second = await duplicate(queue, history);
      expect(second.returnvalue).toEqual({ status: 'already_settled', rows: 0 });
      // Nothing of the run was opened again: no ledger state, no follow-ups, no second finish.
      expect(await ledger.left()).toBe(0);
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
