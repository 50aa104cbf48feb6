// What queued jobs carry. Job data comes back from Redis as JSON, possibly written by an
// older version: it is parsed again, never trusted.
import { z } from 'zod';

const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID');

/** A walk: from a job scheduler (`schedule` set) or an operator (`tesync enqueue`). */
export const walkJobData = z.object({
  schedule: z.string().optional(),
  runId: uuid.optional(),
  trigger: z.string().min(1).max(40).default('schedule'),
  /** Null or absent: every group (or the schedule's). */
  groups: z.array(z.string()).nullable().optional(),
  tokens: z.array(z.string()).default([]),
  sources: z.array(z.enum(['app', 'gateway'])).optional(),
  full: z.boolean().default(false),
});
export type WalkJobData = z.input<typeof walkJobData>;

/** One resource of a run; the scope travels with it so follow-ups are filtered the same way. */
export const fetchJobData = z.object({
  runId: uuid,
  job: z.string(),
  payload: z.unknown(),
  groups: z.array(z.string()).nullable(),
  tokens: z.array(z.string()),
  full: z.boolean(),
});
export type FetchJobData = z.infer<typeof fetchJobData>;

export const finishJobData = z.object({ runId: uuid });
