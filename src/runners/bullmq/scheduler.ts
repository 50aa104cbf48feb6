// Job schedulers, registered at every worker start. upsertJobScheduler is idempotent per
// id, so any number of workers starting at once (or in a crash loop) leave exactly one
// scheduler per id; a schedule switched off, or no longer known, is removed.
import type { Queue } from 'bullmq';
import type { Logger } from '../../lib/logger.ts';
import type { WalkJobData } from './job-data.ts';
import { WALK_JOB_OPTIONS } from './queues.ts';
import type { PlannedScheduler } from './schedules.ts';

export async function registerSchedulers(queue: Queue, planned: readonly PlannedScheduler[], logger: Logger): Promise<void> {
  for (const s of planned) {
    if (s.pattern === null) continue;
    const data: WalkJobData = { schedule: s.id, trigger: 'schedule' };
    await queue.upsertJobScheduler(s.id, { pattern: s.pattern, tz: s.tz }, { name: 'walk', data, opts: WALK_JOB_OPTIONS });
  }
  const wanted = new Set(planned.filter((s) => s.pattern !== null).map((s) => s.id as string));
  for (const existing of await queue.getJobSchedulers(0, -1)) {
    if (!wanted.has(existing.key)) {
      await queue.removeJobScheduler(existing.key);
      logger.info({ schedule: existing.key }, 'schedule removed (switched off or no longer known)');
    }
  }
  logger.debug({ schedules: planned }, 'schedules registered');
}
