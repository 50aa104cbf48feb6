// Queue layout. Orchestration (scheduled walks, run completion) has its own queue: a fetch
// queue that is rate limited stops promoting its delayed jobs, and must never hold back a
// walk. Fetch jobs go to one queue per upstream bucket, so that a Retry-After on one bucket
// pauses only the work that would hit it.
import { Redis } from 'ioredis';
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

/** Connection settings both ioredis and BullMQ accept. */
export interface RedisSettings {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db?: number;
  tls?: object;
  maxRetriesPerRequest: null;
}

/** ioredis options from REDIS_URL, with what BullMQ requires of blocking connections. */
export function redisOptions(url: string): RedisSettings {
  const u = new URL(url);
  const db = u.pathname.replace(/^\//, '');
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : 6379,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    // BullMQ workers block on Redis: a command must wait for a reconnect, not fail.
    maxRetriesPerRequest: null,
  };
}

const REDIS_CONNECT_TIMEOUT_MS = 10_000;
/**
 * A refused connection is an answer: nothing listens there. It is reported once refusals have
 * gone on this long (a Redis that is just starting gets that much), not after the timeout.
 */
export const REDIS_REFUSED_GRACE_MS = 1000;

/** Pure: the error code of a failed connection attempt (Node's AggregateError of several addresses carries it, or its parts do). */
export function connectErrorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; errors?: unknown } | null;
  if (typeof e?.code === 'string') return e.code;
  if (Array.isArray(e?.errors)) return e.errors.map(connectErrorCode).find((c) => c !== undefined);
  return undefined;
}

/** Fails start-up with a plain message instead of retrying forever against a wrong URL. */
export async function connectRedis(connection: RedisSettings, url: string, connectionName?: string, timing: { timeoutMs?: number; refusedGraceMs?: number } = {}): Promise<Redis> {
  const timeoutMs = timing.timeoutMs ?? REDIS_CONNECT_TIMEOUT_MS;
  const graceMs = timing.refusedGraceMs ?? REDIS_REFUSED_GRACE_MS;
  // disconnect() ends the socket and waits this long for it to close: ioredis waits the whole
  // time (2 s by default) when the socket was already closed by a refusal, holding the exit.
  const redis = new Redis({ ...connection, disconnectTimeout: 250, ...(connectionName ? { connectionName } : {}) });
  const timers: NodeJS.Timeout[] = [];
  let refusing = false;
  let started = false;
  let rejectRefused: ((err: Error) => void) | undefined;
  const refused = new Promise<never>((_, reject) => (rejectRefused = reject));
  // ioredis reconnects on its own; a failed start is reported below. The first refusal starts
  // the grace period: still refused at its end, the start fails as refused.
  redis.on('error', (err: unknown) => {
    if (started || refusing || connectErrorCode(err) !== 'ECONNREFUSED') return;
    refusing = true;
    timers.push(setTimeout(() => rejectRefused?.(new Error('connection refused (ECONNREFUSED): nothing listens on that port; is Redis running?')), graceMs));
  });
  try {
    await Promise.race([
      redis.ping(),
      refused,
      new Promise((_, reject) => timers.push(setTimeout(() => reject(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s (timed out)`)), timeoutMs))),
    ]);
    return redis;
  } catch (err) {
    redis.disconnect();
    const u = new URL(url);
    throw new Error(`cannot reach Redis at ${u.hostname}:${u.port || 6379} (REDIS_URL): ${(err as Error).message}`);
  } finally {
    // Refusals after this are reconnects of a running process, not a failed start.
    started = true;
    for (const t of timers) clearTimeout(t);
  }
}
