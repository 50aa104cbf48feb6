// The queues as a worker's status page shows them: jobs per queue and state, whether a bucket's
// queue is paused (a long Retry-After), the job schedulers with their next run, and the workers
// connected under the prefix. The same on every worker: read from the queue backend.
import type { AnyQueue, QueueBackend } from '../bullmq/backend.ts';

export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const;

export interface QueuesView {
  /** Where the queues are (never a password), and their prefix. */
  where: string;
  prefix: string;
  queues: { name: string; paused: boolean; counts: Record<string, number> }[];
  schedules: { id: string; pattern: string | null; tz: string | null; next: Date | null }[];
  /** Workers connected under the prefix; null when the backend would not say. */
  workers: number | null;
}

export async function readQueues(backend: Pick<QueueBackend, 'where' | 'prefix' | 'workersCount'>, queues: readonly AnyQueue[], walkQueue: AnyQueue): Promise<QueuesView> {
  const [counts, schedulers, workers] = await Promise.all([
    Promise.all(queues.map(async (q) => ({ name: q.name, paused: await q.isPaused(), counts: await q.getJobCounts(...QUEUE_STATES) }))),
    walkQueue.getJobSchedulers(0, -1),
    backend.workersCount(),
  ]);
  return {
    where: backend.where,
    prefix: backend.prefix,
    queues: counts,
    schedules: schedulers
      .map((s) => ({ id: s.key, pattern: s.pattern ?? null, tz: s.tz ?? null, next: typeof s.next === 'number' ? new Date(s.next) : null }))
      .sort((a, b) => (a.next?.getTime() ?? Infinity) - (b.next?.getTime() ?? Infinity)),
    workers: workers ?? null,
  };
}
