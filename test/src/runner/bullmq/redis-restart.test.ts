// Redis restarted for real under `tesync worker` (shut down and started again, without
// persistence, as on this machine's CI): the worker reconnects, registers its schedulers
// again, and scheduled walks go on.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../../sim/index.ts';
import { createTestWarehouse, redisServerUrl, uniqueName, type TestWarehouse } from '../../../helpers/services.ts';
import { deleteRedisKeys, killAll, startWorker, waitFor, type WorkerProcess } from '../../../helpers/workers.ts';
import { recordFigure } from '../../../helpers/fault-figures.ts';

// The local server DEVELOPERS.md starts; elsewhere (containers) this test is skipped.
const LOCAL = /^redis:\/\/(127\.0\.0\.1|localhost):6379\/?$/.test(process.env.TEST_REDIS_URL ?? '') && existsSync('/usr/bin/redis-server');
const START = ['--daemonize', 'yes', '--bind', '127.0.0.1', '-::1', '--port', '6379', '--save', '', '--appendonly', 'no', '--dir', '/var/lib/redis', '--logfile', '/var/log/redis/ci.log'];

async function restartRedis(): Promise<void> {
  execFileSync('redis-cli', ['-p', '6379', 'shutdown', 'nosave'], { stdio: 'ignore' });
  await delay(300);
  execFileSync('redis-server', START, { stdio: 'ignore' });
  for (let i = 0; i < 50; i++) {
    try {
      if (execFileSync('redis-cli', ['-p', '6379', 'ping']).toString().trim() === 'PONG') return;
    } catch {
      // not up yet
    }
    await delay(100);
  }
  throw new Error('Redis did not come back');
}

describe.skipIf(!LOCAL)('Redis restarted under tesync worker', () => {
  let sim: Simulator;
  let tw: TestWarehouse;
  let redisUrl: string;
  const prefix = uniqueName('tesync_redis_restart');
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    redisUrl = await redisServerUrl();
    sim = await startSimulator({ tokens: 3, historyDays: 5, chartsPerToken: 1, seed: 707 });
    tw = await createTestWarehouse();
  });
  afterAll(async () => {
    await killAll(workers);
    await sim?.close();
    await tw?.cleanup();
    await deleteRedisKeys(redisUrl, prefix);
  });

  it('reconnects, registers its schedulers again, and the schedule goes on', async () => {
    const w = startWorker({
      DATABASE_URL: tw.databaseUrl,
      REDIS_URL: redisUrl,
      TE_QUEUE_PREFIX: prefix,
      TE_APP_URL: sim.url,
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
      (await tw.warehouse.query<{ status: string }>(sql`select status from sync.runs where trigger = 'schedule' and started_at > ${since.toISOString()}::timestamptz and status = 'succeeded' limit 1`))[0];
    await waitFor('a scheduled run before the restart', scheduled(new Date(0)), 20_000);

    await restartRedis();
    const restartedAt = new Date();
    const after = await waitFor('a scheduled run after the restart', scheduled(restartedAt), 30_000);
    expect(after.status).toBe('succeeded');
    const u = new URL(redisUrl);
    const q = new Queue('walk', { connection: { host: u.hostname, port: Number(u.port || 6379) }, prefix });
    try {
      expect((await q.getJobSchedulers(0, -1)).map((s) => s.key)).toEqual(['screener']);
    } finally {
      await q.close();
    }
    expect(w.child.exitCode).toBeNull();
    w.child.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
    recordFigure('process.redisRestart', { schedulersAfter: 1, scheduledRunAfterRestart: after.status });
  }, 90_000);
});
