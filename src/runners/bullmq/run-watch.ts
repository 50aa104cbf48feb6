// What `tesync enqueue --wait` shows of a queued walk while it waits: whether a worker took
// the walk job, how many workers listen on the queue prefix, and the run's counts as the
// workers keep them in the run ledger of the queue backend.
import type { JobState } from 'bullmq';
import type { RunStats } from '../../ports/run-ledger.ts';
import type { QueueBackend } from './backend.ts';
import { WALK_QUEUE } from './queues.ts';

export interface RunView {
  /** The walk job's state: `waiting`/`delayed`/`prioritized` until a worker takes it. */
  walk: JobState | 'unknown';
  /** Workers connected to the walk queue under this prefix; undefined when the backend would not say (Redis: CLIENT LIST refused). */
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

/** Reads the run through `backend` (closed by its caller, after the watch). */
export function watchRun(backend: QueueBackend, runId: string, jobId: string): RunWatch {
  const walkQueue = backend.queue(WALK_QUEUE);
  const ledger = backend.ledger;
  return {
    async read() {
      const [walk, workers, stats, pending] = await Promise.all([
        walkQueue.getJobState(jobId),
        backend.workersCount().catch(() => undefined),
        ledger.stats(runId),
        ledger.pending(runId),
      ]);
      const failedReason = walk === 'failed' ? ((await walkQueue.getJob(jobId))?.failedReason ?? 'no reason recorded') : undefined;
      return { walk, workers, stats, pending, failedReason };
    },
    async close() {
      await walkQueue.close();
    },
  };
}

/** Pure: whether a worker has taken the walk job (or the run has begun). */
export function pickedUp(view: Pick<RunView, 'walk' | 'stats'>, runStarted: boolean): boolean {
  return runStarted || view.stats.planned > 0 || view.walk === 'active' || view.walk === 'completed' || view.walk === 'failed';
}
