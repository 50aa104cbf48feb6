// Redis restarted for real under `tesync worker` (shut down and started again, without
// persistence): the worker reconnects, registers its schedulers again, and scheduled walks go
// on. The Redis restarted is the test's own (a child process on a free port), never the
// machine's.
import { sql } from 'drizzle-orm';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOST_RUN_ERROR } from '../../../src/store/books/runs.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { uniqueName } from '../../helpers/services.ts';
import { startOwnRedis, type OwnRedis } from '../../helpers/own-servers.ts';
import { patience } from '../../helpers/patience.ts';
import { killAll, startWorker, waitFor, type WorkerProcess } from '../../helpers/workers.ts';
import { recordFigure } from '../../helpers/fault-figures.ts';

describe('Redis restarted under tesync worker', () => {
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1, seed: 707 });
  let redis: OwnRedis;
  let redisUrl: string;
  const prefix = uniqueName('tesync_redis_restart');
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    redis = await startOwnRedis();
    redisUrl = redis.url;
  });
  // Before the fixture's teardown: no worker is left writing to the warehouse it drops.
  afterAll(async () => {
    await killAll(workers);
    // The whole server goes, its keys with it.
    await redis?.cleanup();
  });

  it('reconnects, registers its schedulers again, and the schedule goes on', async () => {
    const w = startWorker({
      DATABASE_URL: fx.databaseUrl,
      REDIS_URL: redisUrl,
      TE_QUEUE_PREFIX: prefix,
      TE_APP_URL: fx.sim.url,
      TE_METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      TE_SCHEDULE_SCREENER: '*/2 * * * * *',
      TE_SCHEDULE_CATALOG: 'off',
      TE_SCHEDULE_TOKEN_DATA: 'off',
      TE_SCHEDULE_BUNDLES: 'off',
    });
    workers.push(w);
    await w.ready;
    const scheduled = (since: Date) => async () =>
      (await fx.warehouse.query<{ status: string }>(sql`select status from sync.runs where trigger = 'schedule' and started_at > ${since.toISOString()}::timestamptz and status = 'succeeded' limit 1`))[0];
    await waitFor('a scheduled run before the restart', scheduled(new Date(0)), 20_000);

    await redis.restart();
    const restartedAt = new Date();
    const after = await waitFor('a scheduled run after the restart', scheduled(restartedAt), 30_000);
    expect(after.status).toBe('succeeded');
    // A walk in flight at the restart lost its jobs with the keys: closed as failed, never left running.
    const earlier = await waitFor(
      'no run from before the restart left running',
      async () => {
        const [r] = await fx.warehouse.query<{ running: number; lost: number; total: number }>(
          sql`select count(*) filter (where status = 'running')::int as running, count(*) filter (where error = ${LOST_RUN_ERROR})::int as lost, count(*)::int as total
              from sync.runs where started_at < ${restartedAt.toISOString()}::timestamptz`,
        );
        return r && r.running === 0 ? r : undefined;
      },
      15_000,
    );
    const u = new URL(redisUrl);
    const q = new Queue('walk', { connection: { host: u.hostname, port: Number(u.port) }, prefix });
    try {
      expect((await q.getJobSchedulers(0, -1)).map((s) => s.key)).toEqual(['screener']);
    } finally {
      await q.close();
    }
    expect(w.child.exitCode).toBeNull();
    w.child.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
    recordFigure('process.redisRestart', { schedulersAfter: 1, scheduledRunAfterRestart: after.status, runsBeforeRestart: earlier.total, closedAsLost: earlier.lost });
  }, patience(90_000));
});
