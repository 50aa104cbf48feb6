// `tesync enqueue --wait` while no worker runs: it says so within seconds, where the workers
// should be, instead of a blank screen until its timeout.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noWorkerLine, runLine } from '../../src/cli/enqueue.ts';
import { emptyStats } from '../../src/engine/run-stats.ts';
import { BIN, childEnv } from '../helpers/cli.ts';
import { createTestWarehouse, redisServerUrl, uniqueName, type TestWarehouse } from '../helpers/services.ts';
import { deleteRedisKeys } from '../helpers/workers.ts';

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

describe('enqueue --wait with no worker running', () => {
  let tw: TestWarehouse;
  let redisUrl: string;
  const prefix = uniqueName('tesync_noworker');
  beforeAll(async () => {
    tw = await createTestWarehouse();
    redisUrl = await redisServerUrl();
  });
  afterAll(async () => {
    await deleteRedisKeys(redisUrl, prefix);
    await tw?.cleanup();
  });

  it('says within seconds that no worker has started the run, then gives up at its timeout', async () => {
    const env = childEnv({ DATABASE_URL: tw.databaseUrl, REDIS_URL: redisUrl, TE_QUEUE_PREFIX: prefix, TE_GATEWAY_URL: 'http://127.0.0.1:9', TE_GATEWAY_API_KEY: 'gw_key_for_enqueue' });
    const child = spawn(process.execPath, [BIN, 'enqueue', '--wait', '--timeout', '9'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(1);
    expect(stderr).toContain(
      `tesync: no worker has started this run after 5 s: none listens on this REDIS_URL under TE_QUEUE_PREFIX=${prefix}; is \`tesync worker\` running with the same REDIS_URL and TE_QUEUE_PREFIX?`,
    );
    // Said at 5 s of waiting, before the timeout's line (the order, not the wall clock: a
    // busy machine's start-up is no part of the wait).
    const timedOut = /has not started \(is a worker running\?\) after 9 s/.exec(stderr);
    expect(timedOut, stderr).not.toBeNull();
    expect(stderr.indexOf('no worker has started this run after 5 s')).toBeLessThan(timedOut!.index);
    expect(stdout).toBe('');
  }, 40_000);
});
