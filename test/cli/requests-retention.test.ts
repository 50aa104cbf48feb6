// TE_REQUESTS_RETENTION_DAYS as an operator meets it: `tesync sync` and a `tesync worker` run
// (queued as `tesync enqueue --wait` queues it) each end by removing the sync.requests rows older
// than the setting, and only those, and log how many; a bad value stops start-up naming it.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/lib/config.ts';
import { runCli } from '../helpers/cli.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey, redisServerUrl, uniqueName } from '../helpers/services.ts';
import { queueWalk, runEnded } from '../helpers/queue-walk.ts';
import { killAll, SCHEDULES_OFF, startWorker, deleteRedisKeys } from '../helpers/workers.ts';

const DAY = 86_400_000;
const gwKey = canaryKey('gw');
const SEEDED = 'retention-seed';

describe('TE_REQUESTS_RETENTION_DAYS', () => {
  it('defaults to 90; 0 means forever; a bad value names the variable', () => {
    expect(loadConfig({}).requestsRetentionDays).toBe(90);
    expect(loadConfig({ TE_REQUESTS_RETENTION_DAYS: '0' }).requestsRetentionDays).toBe(0);
    for (const bad of ['-1', '1.5', 'thirty', '99999']) {
      let err: unknown;
      try {
        loadConfig({ TE_REQUESTS_RETENTION_DAYS: bad });
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe('TE_REQUESTS_RETENTION_DAYS');
    }
  });

  it('a bad value stops tesync sync with exit 2 and a message naming it', async () => {
    const r = await runCli(['sync'], { TE_REQUESTS_RETENTION_DAYS: '-3' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('tesync: configuration error: TE_REQUESTS_RETENTION_DAYS: must be 0 or more (0: keep forever) (example: TE_REQUESTS_RETENTION_DAYS=30)');
  });
});

describe('requests retention in both runners', () => {
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1, seed: 6, gatewayKeys: [gwKey] });
  let env: Record<string, string>;
  beforeAll(() => {
    env = { TE_GATEWAY_URL: fx.sim.url, TE_GATEWAY_API_KEY: gwKey, DATABASE_URL: fx.databaseUrl, TE_REQUEST_TIMEOUT_MS: '5000', TE_REQUESTS_RETENTION_DAYS: '30', LOG_LEVEL: 'info' };
  });

  /** Requests of earlier runs, at these ages in days; marked by their path. */
  async function seed(ages: readonly number[]): Promise<void> {
    for (const age of ages) {
      await fx.warehouse.query(sql`
        insert into sync.requests (run_id, source, bucket, path, http_status, attempt, started_at, duration_ms)
        values (${randomUUID()}::uuid, 'gateway', 'gateway', ${`/${SEEDED}/${age}`}, 200, 1, ${new Date(Date.now() - age * DAY).toISOString()}::timestamptz, 5)`);
    }
  }
  const seededAges = async () =>
    (await fx.warehouse.query<{ path: string }>(sql`select path from sync.requests where path like ${`/${SEEDED}/%`} order by started_at`)).map((r) => Number(r.path.split('/').pop()));
  const runRequests = async (runId: string) => Number((await fx.warehouse.query<{ n: string }>(sql`select count(*)::text as n from sync.requests where run_id = ${runId}`))[0]?.n);

  it('tesync sync removes requests older than the setting, keeps the rest and its own, and logs the count', async () => {
    await seed([365, 45, 31, 29, 2]);
    const r = await runCli(['sync', '--json'], env, { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const outcome = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { runId: string; requests: { total: number } };
    expect(await seededAges()).toEqual([29, 2]);
    expect(outcome.requests.total).toBeGreaterThan(0);
    expect(await runRequests(outcome.runId)).toBe(outcome.requests.total);
    const line = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.table === 'sync.requests');
    expect(line).toMatchObject({ level: 30, removed: 3, retentionDays: 30, runId: outcome.runId, msg: 'removed 3 request rows older than 30 days (TE_REQUESTS_RETENTION_DAYS)' });
  }, patience(150_000));

  it('tesync sync with 0 keeps everything', async () => {
    await seed([400]);
    const r = await runCli(['sync', '--json', '--only', 'tokens'], { ...env, TE_REQUESTS_RETENTION_DAYS: '0' }, { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(await seededAges()).toEqual([400, 29, 2]);
    expect(r.stderr).not.toContain('"table":"sync.requests"');
  }, patience(150_000));

  it('a tesync worker run removes them at its end too', async () => {
    await seed([100, 31]);
    const workerEnv = { ...env, REDIS_URL: await redisServerUrl(), TE_QUEUE_PREFIX: uniqueName('tesync_retention'), TE_METRICS_PORT: '0', ...SCHEDULES_OFF };
    const worker = startWorker(workerEnv);
    try {
      await worker.ready;
      // Queued and awaited as `tesync enqueue --wait --only tokens` does, from this process.
      const walk = await runEnded(fx.databaseUrl, (await queueWalk(workerEnv, { groups: ['tokens'] })).runId, { nominalMs: 90_000 });
      expect(walk.status, JSON.stringify(walk.stats.failures)).not.toBe('failed');
      expect(await seededAges()).toEqual([29, 2]);
      const line = worker.lines().find((l) => l.table === 'sync.requests');
      expect(line).toMatchObject({ level: 30, removed: 3, retentionDays: 30 });
      expect(typeof line?.runId).toBe('string');
    } finally {
      await killAll([worker]);
      await deleteRedisKeys(workerEnv.REDIS_URL, workerEnv.TE_QUEUE_PREFIX);
    }
  }, patience(150_000));
});
