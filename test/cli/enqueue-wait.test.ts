// `tesync enqueue --wait` while no worker runs: it says so within seconds, where the workers
// should be (the Redis of REDIS_URL, or the queue schema of the warehouse's Postgres), instead
// of a blank screen until its timeout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noWorkerLine, runLine } from '../../src/cli/enqueue.ts';
import { emptyStats } from '../../src/engine/run-stats.ts';
import { queueSchema } from '../../src/runners/bullmq/postgres-backend.ts';
import { describeRedis } from '../../src/runners/bullmq/redis-backend.ts';
import { describePostgresUrl } from '../../src/store/connection.ts';
import { runCli } from '../helpers/cli.ts';
import { backendEnv, QUEUE_BACKENDS, removeQueueState, type QueuePlace } from '../helpers/queue-backends.ts';
import { createTestWarehouse, redisServerUrl, uniqueName, type TestWarehouse } from '../helpers/services.ts';

describe('enqueue --wait: what it shows', () => {
  it('the run as it goes, and a walk still queued', () => {
    expect(runLine(undefined, false, 3_400)).toBe('queued, waiting for a worker… 3s');
    expect(runLine({ stats: { ...emptyStats(), planned: 129, done: 60, failed: 5, deduplicated: 0 } }, true, 65_000)).toBe('running: 65/129 done | 5 failed | 1m05s');
    expect(runLine({ stats: { ...emptyStats(), planned: 12, done: 2, deduplicated: 3 } }, true, 2_000)).toBe('running: 2/12 done | 3 left to another run | 2s');
    expect(runLine(undefined, true, 2_000)).toBe('running… 2s');
  });

  it('where the workers should be, when none took the run', () => {
    const redis = { kind: 'redis', where: 'Redis at redis:6379 (REDIS_URL)' } as const;
    const postgres = { kind: 'postgres', where: 'the schema bullmq_tesync of Postgres at db:5432/tesync' } as const;
    expect(noWorkerLine(5_000, 0, 'tesync', redis)).toBe(
      'no worker has started this run after 5 s: none listens on Redis at redis:6379 (REDIS_URL) under TE_QUEUE_PREFIX=tesync; is `tesync worker` running with the same REDIS_URL and TE_QUEUE_PREFIX?',
    );
    expect(noWorkerLine(5_000, undefined, 'tesync', redis)).toBe('no worker has started this run after 5 s: is `tesync worker` running with the same REDIS_URL and TE_QUEUE_PREFIX (tesync)?');
    expect(noWorkerLine(5_000, 0, 'tesync', postgres)).toBe(
      'no worker has started this run after 5 s: none listens on the schema bullmq_tesync of Postgres at db:5432/tesync under TE_QUEUE_PREFIX=tesync; is `tesync worker` running with the same DATABASE_URL (or TE_DATA_DIR) and TE_QUEUE_PREFIX, without REDIS_URL?',
    );
    expect(noWorkerLine(6_000, 2, 'tesync', postgres)).toBe('no worker has started this run after 6 s: 2 workers listen under TE_QUEUE_PREFIX=tesync, busy with other walks; it starts when one is free');
  });
});

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('enqueue --wait with no worker running', () => {
  let redisUrl: string;
  const places: QueuePlace[] = [];
  const warehouses: TestWarehouse[] = [];
  beforeAll(async () => {
    redisUrl = await redisServerUrl();
  });
  afterAll(async () => {
    for (const place of places) await removeQueueState(place);
    for (const tw of warehouses) await tw.cleanup();
  });

  // Both backends at once: each case is mostly waiting, for a worker that never comes.
  it.concurrent.for(QUEUE_BACKENDS)('queues on %s: says within seconds that no worker has started the run, then gives up at its timeout', { timeout: 40_000 }, async (backend, { expect }) => {
    const tw = await createTestWarehouse();
    warehouses.push(tw);
    const prefix = uniqueName('tesync_noworker');
    const place: QueuePlace = { backend, redisUrl, databaseUrl: tw.databaseUrl, prefix };
    places.push(place);
    const env = { DATABASE_URL: tw.databaseUrl, ...backendEnv(place), TE_QUEUE_PREFIX: prefix, TE_GATEWAY_URL: 'http://127.0.0.1:9', TE_GATEWAY_API_KEY: 'gw_key_for_enqueue' };
    const { code, stdout, stderr } = await runCli(['enqueue', '--wait', '--timeout', '9'], env, { timeoutMs: 40_000 });
    expect(code, stderr).toBe(1);
    // Where the workers should be listening: this Redis, or this schema of this warehouse.
    const where =
      backend === 'redis'
        ? `Redis at ${describeRedis(redisUrl)} (REDIS_URL) under TE_QUEUE_PREFIX=${prefix}; is \`tesync worker\` running with the same REDIS_URL and TE_QUEUE_PREFIX?`
        : `the schema ${queueSchema(prefix)} of Postgres at ${describePostgresUrl(tw.databaseUrl)} under TE_QUEUE_PREFIX=${prefix}; ` +
          'is `tesync worker` running with the same DATABASE_URL (or TE_DATA_DIR) and TE_QUEUE_PREFIX, without REDIS_URL?';
    // Said at the first look after 5 s of waiting (one every half second, or later on a busy
    // machine: 6 s), before the timeout's line (the order, not the wall clock: a busy
    // machine's start-up is no part of the wait).
    const said = new RegExp(`tesync: no worker has started this run after ([5-8]) s: none listens on ${escapeRe(where)}\\n`).exec(stderr);
    expect(said, stderr).not.toBeNull();
    const timedOut = /has not started \(is a worker running\?\) after 9 s/.exec(stderr);
    expect(timedOut, stderr).not.toBeNull();
    expect(said!.index).toBeLessThan(timedOut!.index);
    expect(stdout).toBe('');
  });
});
