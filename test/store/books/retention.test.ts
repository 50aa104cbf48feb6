// Retention of sync.requests through finishRun, the call both runners end a run with (the
// BullMQ finish job passes the worker's setting, walk.ts): only rows older than the setting
// go, in bounded batches, a log line says how many; 0 keeps everything; a failure to remove
// is logged and never fails the run.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/store/connection.ts';
import { applyRetention, removeOldRequests, requestsCutoff } from '../../../src/store/books/retention.ts';
import { finishRun, startRun } from '../../../src/store/books/runs.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';
import { createTestLogger } from '../../helpers/services.ts';

const DAY = 86_400_000;
// Ages in days of the seeded rows; 30 is the setting used below.
const AGES = [400, 31, 30.01, 29.99, 10, 0];

describe('requestsCutoff', () => {
  it('is `days` before now, or null for 0 (kept forever)', () => {
    const now = new Date('2026-05-31T12:00:00Z');
    expect(requestsCutoff(30, now)?.toISOString()).toBe('2026-05-01T12:00:00.000Z');
    expect(requestsCutoff(0, now)).toBeNull();
  });
});

describe('sync.requests retention', () => {
  const w = useTestWarehouse();

  const ages = async () =>
    (await w.query<{ age: string }>(sql`select round((extract(epoch from now() - started_at) / 86400)::numeric, 2)::text as age from sync.requests order by started_at`)).map((r) =>
      Number(r.age),
    );
  async function seed(agesInDays: readonly number[], copies = 1): Promise<void> {
    const now = Date.now();
    for (const age of agesInDays) {
      await w.query(sql`
        insert into sync.requests (run_id, source, bucket, path, http_status, attempt, started_at, duration_ms)
        select ${randomUUID()}::uuid, 'app', 'app-public', '/api/v1/tokens', 200, 1, ${new Date(now - age * DAY).toISOString()}::timestamptz, 5
        from generate_series(1, ${copies})`);
    }
  }
  beforeEach(async () => {
    await w.query(sql`delete from sync.requests`);
  });

  it('finishRun with the worker\'s setting removes only requests older than it, and says how many', async () => {
    await seed(AGES);
    const log = createTestLogger();
    const runId = randomUUID();
    await startRun(w.db, { id: runId, trigger: 'schedule', sources: ['app'] });
    await finishRun(w.db, runId, { status: 'succeeded', stats: {} }, { requestsRetentionDays: 30, logger: log.logger });
    expect(await ages()).toEqual([29.99, 10, 0]);
    const line = log.lines().map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.table === 'sync.requests');
    expect(line).toMatchObject({ removed: 3, retentionDays: 30, more: false });
    expect(line?.msg).toBe('removed 3 request rows older than 30 days (TE_REQUESTS_RETENTION_DAYS)');
    const [run] = await w.query<{ status: string }>(sql`select status from sync.runs where id = ${runId}`);
    expect(run?.status).toBe('succeeded');
  });

  it('0 keeps every row; without housekeeping nothing is removed; nothing to remove logs nothing', async () => {
    await seed(AGES);
    const log = createTestLogger();
    const runId = randomUUID();
    await startRun(w.db, { id: runId, trigger: 'cli', sources: ['app'] });
    await finishRun(w.db, runId, { status: 'succeeded', stats: {} }, { requestsRetentionDays: 0, logger: log.logger });
    await finishRun(w.db, runId, { status: 'succeeded', stats: {} });
    expect(await ages()).toHaveLength(AGES.length);
    await finishRun(w.db, runId, { status: 'succeeded', stats: {} }, { requestsRetentionDays: 1000, logger: log.logger });
    expect(await ages()).toHaveLength(AGES.length);
    expect(log.lines()).toEqual([]);
  });

  it('removes in batches and stops at its time budget; the next call goes on', async () => {
    await seed([100], 25);
    await seed([1], 4);
    const first = await removeOldRequests(w.db, { days: 30, batchRows: 10, timeBudgetMs: 0 });
    expect(first).toMatchObject({ removed: 10, more: true });
    const rest = await removeOldRequests(w.db, { days: 30, batchRows: 10 });
    expect(rest).toMatchObject({ removed: 15, more: false });
    expect(await ages()).toEqual([1, 1, 1, 1]);
  });

  it('two processes removing at once remove each row once', async () => {
    await seed([100], 200);
    const [a, b] = await Promise.all([removeOldRequests(w.db, { days: 30, batchRows: 7 }), removeOldRequests(w.db, { days: 30, batchRows: 7 })]);
    expect(a.removed + b.removed).toBe(200);
    expect(await ages()).toEqual([]);
  });

  it('a failure to remove is a warning, never an error of the run', async () => {
    const log = createTestLogger();
    const failing = { execute: () => Promise.reject(new Error('canceling statement due to lock timeout')) } as unknown as Db;
    await expect(applyRetention(failing, { requestsRetentionDays: 30, logger: log.logger })).resolves.toBeUndefined();
    const warned = log.lines().map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.table === 'sync.requests');
    expect(warned).toMatchObject({ level: 40, msg: 'could not apply TE_REQUESTS_RETENTION_DAYS; retried at the next run', err: { message: 'canceling statement due to lock timeout' } });
  });
});
