// Job schedulers, registered at every worker start. upsertJobScheduler is idempotent per
// id, so any number of workers starting at once (or in a crash loop) leave exactly one
// scheduler per id; a schedule switched off, or no longer known, is removed. On Postgres two
// upserts of one id at once can reject (an id collision with the next job the other just
// committed, or a deadlock; test/runners/bullmq/postgres-backend.test.ts) though what they leave
// is right: the upsert is tried again after a pause.
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../../lib/logger.ts';
import type { AnyQueue } from './backend.ts';
import type { WalkJobData } from './job-data.ts';
import { WALK_JOB_OPTIONS } from './queues.ts';
import type { ConfiguredSchedule } from './schedules.ts';

const UPSERT_TRIES = 6;

export async function registerSchedulers(queue: AnyQueue, schedules: readonly ConfiguredSchedule[], logger: Logger): Promise<void> {
  for (const s of schedules) {
    if (s.pattern === null) continue;
    const data: WalkJobData = { schedule: s.id, trigger: 'schedule' };
    for (let attempt = 1; ; attempt++) {
      try {
        await queue.upsertJobScheduler(s.id, { pattern: s.pattern, tz: s.tz }, { name: 'walk', data, opts: WALK_JOB_OPTIONS });
        break;
      } catch (err) {
        if (attempt >= UPSERT_TRIES) throw err;
        logger.debug({ schedule: s.id, attempt, err }, 'schedule registration collided with another worker\'s; trying again');
        // Apart at random, so that two starts colliding do not collide again.
        await delay(50 + Math.random() * 100 * attempt);
      }
    }
  }
  const wanted = new Set(schedules.filter((s) => s.pattern !== null).map((s) => s.id as string));
  for (const existing of await queue.getJobSchedulers(0, -1)) {
    if (!wanted.has(existing.key)) {
      await queue.removeJobScheduler(existing.key);
      logger.info({ schedule: existing.key }, 'schedule removed (switched off or no longer known)');
    }
  }
  logger.debug({ schedules }, 'schedules registered');
}
