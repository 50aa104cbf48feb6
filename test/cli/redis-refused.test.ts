// `tesync enqueue` and `tesync worker` against a REDIS_URL where nothing listens, as the real
// CLI: exit 1 within seconds, saying the connection was refused (not "timed out" after 10 s).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { freePort } from '../helpers/own-servers.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/services.ts';

/**
 * Beyond what the same process takes to start and migrate (measured first, on this machine as
 * loaded as it is): under the 10 s connect timeout it would otherwise wait out (the worker
 * also starts its metrics server and the queue's connections).
 */
const FAST_BEYOND_START_MS = 8000;

describe('a Redis that refuses connections', () => {
  let db: TestDatabase;
  let redisUrl: string;
  let startMs: number;
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true });
    redisUrl = `redis://127.0.0.1:${await freePort()}`;
    const t0 = Date.now();
    expect((await runCli(['migrate'], { DATABASE_URL: db.databaseUrl }, { timeoutMs: 30_000 })).code).toBe(0);
    startMs = Date.now() - t0;
  });
  afterAll(async () => {
    await db?.drop();
  });

  for (const command of [['enqueue'], ['worker']]) {
    it(`stops tesync ${command[0]} at once, reported as refused`, async () => {
      const started = Date.now();
      const r = await runCli(command, { TE_APP_URL: 'http://127.0.0.1:9', DATABASE_URL: db.databaseUrl, REDIS_URL: redisUrl, TE_METRICS_PORT: String(await freePort()) }, { timeoutMs: 30_000 });
      const elapsed = Date.now() - started;
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/tesync: error: cannot reach Redis at 127\.0\.0\.1:\d+ \(REDIS_URL\): connection refused \(ECONNREFUSED\)/);
      expect(r.stderr).not.toContain('timed out');
      expect(elapsed - startMs).toBeLessThan(FAST_BEYOND_START_MS);
    }, 40_000);
  }
});
