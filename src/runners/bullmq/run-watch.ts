// What `tesync enqueue --wait` shows of a queued walk while it waits: whether a worker took
// the walk job, how many workers listen on the queue prefix, and the run's counts as the
// workers keep them in Redis (run-tracker.ts).
import { Queue, type JobState } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../../lib/config.ts';
import { connectRedis, redisOptions, WALK_QUEUE } from './queues.ts';
import type { RunStats } from '../../engine/run.ts';
import { RunTracker } from './run-tracker.ts';

export interface RunView {
  /** The walk job's state: `waiting`/`delayed`/`prioritized` until a worker takes it. */
  walk: JobState | 'unknown';
  /** Workers connected to the walk queue under this prefix; undefined when Redis would not say (CLIENT LIST refused). */
  workers: number | undefined;
  stats: RunStats;
  /** Jobs of the run not settled yet. */
  pending: number;
  /** Why the walk job failed, when it did (a worker refused it, or planning failed for good). */
  failedReason?: string | undefined;
}

export interface RunWatch {
  read(): Promise<RunView>;
  close(): Promise<void>;
}

export async function watchRun(config: Config, runId: string, jobId: string): Promise<RunWatch> {
  const connection = redisOptions(config.redisUrl);
  const redis: Redis = await connectRedis(connection, config.redisUrl);
  const walkQueue = new Queue(WALK_QUEUE, { connection, prefix: config.worker.queuePrefix });
  const tracker = new RunTracker(redis, config.worker.queuePrefix);
  return {
    async read() {
      const [walk, workers, stats, pending] = await Promise.all([
        walkQueue.getJobState(jobId),
        walkQueue.getWorkersCount().catch(() => undefined),
        tracker.stats(runId),
        tracker.pending(runId),
      ]);
      const failedReason = walk === 'failed' ? ((await walkQueue.getJob(jobId))?.failedReason ?? 'no reason recorded') : undefined;
      return { walk, workers, stats, pending, failedReason };
    },
    async close() {
      await walkQueue.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** Pure: whether a worker has taken the walk job (or the run has begun). */
export function pickedUp(view: Pick<RunView, 'walk' | 'stats'>, runStarted: boolean): boolean {
  return runStarted || view.stats.planned > 0 || view.walk === 'active' || view.walk === 'completed' || view.walk === 'failed';
}
