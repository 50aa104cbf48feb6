// A walk queued by an operator (`tesync enqueue`): the running workers pick it up.
import { randomUUID } from 'node:crypto';
import type { QueueBackend } from './backend.ts';
import type { WalkJobData } from './job-data.ts';
import { WALK_JOB_OPTIONS, WALK_QUEUE } from './queues.ts';

export async function enqueueWalk(backend: QueueBackend, walk: Omit<WalkJobData, 'runId' | 'trigger'>): Promise<{ runId: string; jobId: string }> {
  const queue = backend.queue(WALK_QUEUE);
  try {
    const runId = randomUUID();
    const jobId = `walk.${runId}`;
    const data: WalkJobData = { ...walk, runId, trigger: 'manual' };
    await queue.add('walk', data, { ...WALK_JOB_OPTIONS, jobId });
    return { runId, jobId };
  } finally {
    await queue.close();
  }
}
