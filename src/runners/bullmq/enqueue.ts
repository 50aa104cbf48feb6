// A walk queued by an operator (`tesync enqueue`): the running workers pick it up.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Config } from '../../lib/config.ts';
import type { WalkJobData } from './job-data.ts';
import { connectRedis, redisOptions, WALK_JOB_OPTIONS, WALK_QUEUE } from './queues.ts';

export async function enqueueWalk(config: Config, walk: Omit<WalkJobData, 'runId' | 'trigger'>): Promise<{ runId: string; jobId: string }> {
  const connection = redisOptions(config.redisUrl);
  // Fail plainly when Redis is not there, rather than waiting for it forever.
  const probe = await connectRedis(connection, config.redisUrl);
  await probe.quit();
  const queue = new Queue(WALK_QUEUE, { connection, prefix: config.worker.queuePrefix });
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
