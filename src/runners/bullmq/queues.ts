// Queue layout. Orchestration (scheduled walks, run completion) has its own queue: a fetch
// queue that is rate limited stops promoting its delayed jobs, and must never hold back a
// walk. Fetch jobs go to one queue per upstream bucket, so that a Retry-After on one bucket
// pauses only the work that would hit it.
import type { JobsOptions } from 'bullmq';
import { BUCKETS, type Bucket } from '../../upstream/routes.ts';
import { JOB_RETRY } from '../../engine/job/retry.ts';

export const WALK_QUEUE = 'walk';

export function fetchQueueName(bucket: Bucket): string {
  return `fetch-${bucket}`;
}

export const FETCH_QUEUES: readonly { bucket: Bucket; name: string }[] = BUCKETS.map((bucket) => ({ bucket, name: fetchQueueName(bucket) }));

/** Transient failures (database restart) get two more tries; rate-limit waits use none. */

// Completed jobs are kept only briefly, for a look at what just ran: sync.requests and
// sync.runs are the record, and nothing reads a completed job later (a job id, a walk's run
// id, a deduplication id never depends on one lingering), and a short retention is what lets
// Redis' key count level off soon. BullMQ trims them as later jobs of the same queue finish.
// Failed jobs stay longer, for inspection, but bounded per queue.
export const COMPLETED_JOBS_KEPT = { age: 600, count: 1000 } as const;
export const FAILED_JOBS_KEPT = { age: 7 * 24 * 3600, count: 1000 } as const;

/**
 * Events each queue keeps (BullMQ's `streams.events.maxLen`, 10000 by default): tesync reads
 * none (`sync.runs` and `sync.requests` are the record), and on the Postgres backend each is a
 * row of its `event` table, trimmed only past this many.
 */
export const EVENTS_KEPT = 1000;

/** The engine's retry policy (src/engine/job/retry.ts), as BullMQ's attempts and exponential backoff. */
export const FETCH_JOB_OPTIONS: JobsOptions = {
  attempts: JOB_RETRY.attempts,
  backoff: { type: 'exponential', delay: JOB_RETRY.firstDelayMs },
  removeOnComplete: { ...COMPLETED_JOBS_KEPT },
  removeOnFail: { ...FAILED_JOBS_KEPT },
};

export const WALK_JOB_OPTIONS: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 2000 },
  removeOnComplete: { ...COMPLETED_JOBS_KEPT },
  removeOnFail: { ...FAILED_JOBS_KEPT },
};
