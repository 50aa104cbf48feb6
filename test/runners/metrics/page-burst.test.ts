// A burst of 300 page requests leaves /healthz and /metrics answering (issue 55 part 6): the
// metrics server over a real warehouse, the page read by readPageData, /healthz's `select 1`
// and a /metrics gauge read through the same pool. The page's read first waits on an advisory
// lock the test holds, inside a connection of the pool, as a slow read of a large warehouse
// would hold one: 300 reads each holding one would take the whole pool, and /healthz would
// wait behind them until its check gave up (503). Counted, not timed: /healthz and /metrics
// answer 200 while none of the 300 page requests has been answered, then the lock is let go
// and all 300 are answered from one read of the warehouse.
import { getNaming } from '../../helpers/get-naming.ts';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { Gauge, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_REFRESH_SECONDS, readPageData } from '../../../src/runners/metrics/page-data.ts';
import { createStatusPage, type StatusPage } from '../../../src/runners/metrics/page-handler.ts';
import { PAGE_SHARE_MS } from '../../../src/runners/metrics/page-share.ts';
import { pageThresholds } from '../../../src/runners/metrics/page-thresholds.ts';
import { startMetricsServer, type MetricsServer } from '../../../src/runners/metrics/server.ts';
import { loadConfig } from '../../../src/lib/config.ts';
import { readFailureBody } from '../../../src/store/read/failure-bodies.ts';
import { patience } from '../../helpers/patience.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';
import { createTestLogger } from '../../helpers/services.ts';

const BURST = 300;
// Any fixed 64-bit number: the lock the page's read waits on while the test holds it.
const GATE = 7_281_190_437_355_355n;

const get = (port: number, path: string, host = `127.0.0.1:${port}`) => getNaming(port, path, host).then(({ status, body }) => ({ status, body }));

describe('300 concurrent page requests', () => {
  const warehouse = useTestWarehouse();
  let gate: postgres.Sql;
  let server: MetricsServer | undefined;
  /** Reads of the warehouse the page started. */
  let reads = 0;
  /** Page requests that reached the page's handler. */
  let arrived = 0;
  let nowMs = 0;

  beforeAll(async () => {
    gate = postgres(warehouse.databaseUrl, { max: 1, onnotice: () => {} });
    const config = loadConfig({});
    const inner = createStatusPage({
      read: async () => {
        reads++;
        // Waits, in a connection of the pool, until the test lets go of the lock.
        await warehouse.query(sql`select pg_advisory_xact_lock(${GATE.toString()}::bigint)`);
        return readPageData({
          warehouse,
          servedBy: 'page-burst.test',
          refreshSeconds: PAGE_REFRESH_SECONDS,
          thresholds: (ms) => pageThresholds(config, ms),
          budget: async () => ({ buckets: [], note: null }),
        });
      },
      body: (id) => readFailureBody(warehouse, id),
      secrets: [],
      logger: createTestLogger([], 'warn').logger,
      now: () => nowMs,
    });
    const page: StatusPage = {
      handle(req, res, path) {
        arrived++;
        return inner.handle(req, res, path);
      },
    };
    // A gauge read at scrape time through the same pool, as the worker's last-success gauge is.
    const registry = new Registry();
    new Gauge({
      name: 'burst_test_runs',
      help: 'sync.runs rows',
      registers: [registry],
      async collect() {
        const [r] = await warehouse.query<{ n: number }>(sql`select count(*)::int as n from sync.runs`);
        this.set(r!.n);
      },
    });
    server = await startMetricsServer({
      port: 0,
      registry,
      checks: { postgres: async () => void (await warehouse.query(sql`select 1`)) },
      page,
      logger: createTestLogger([], 'warn').logger,
    });
  }, patience(60_000));

  afterAll(async () => {
    await server?.close();
    await gate?.end({ timeout: 1 });
  }, patience(30_000));

  it('/healthz and /metrics answer while every page request waits; then all are answered from one read', async () => {
    const port = server!.port;
    await gate`select pg_advisory_lock(${GATE.toString()}::bigint)`;
    let pagesAnswered = 0;
    const burst = Array.from({ length: BURST }, () =>
      get(port, '/').then((r) => {
        pagesAnswered++;
        return r;
      }),
    );
    // Awaited below; a test that fails before then closes their sockets: not an unhandled rejection too.
    for (const p of burst) p.catch(() => {});
    // Every request of the burst is at the page, waiting: none answered, one read started.
    await expect.poll(() => arrived, { timeout: patience(30_000), interval: 20 }).toBe(BURST);
    expect(reads).toBe(1);

    const health = await get(port, '/healthz');
    expect(health).toEqual({ status: 200, body: JSON.stringify({ status: 'ok', postgres: 'ok' }) });
    const metrics = await get(port, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/^burst_test_runs 0$/m);
    const answeredMeanwhile = pagesAnswered;
    expect(answeredMeanwhile).toBe(0);

    await gate`select pg_advisory_unlock(${GATE.toString()}::bigint)`;
    const pages = await Promise.all(burst);
    expect(pages.map((p) => p.status)).toEqual(Array(BURST).fill(200));
    // One read, one rendering: every answer the same page.
    expect(new Set(pages.map((p) => p.body)).size).toBe(1);
    expect(pages[0]!.body).toContain('<html');
    expect(reads).toBe(1);

    // Within PAGE_SHARE_MS of that read's start (the injected pacing clock), the page and its
    // JSON come from it; past it, one more read.
    nowMs += PAGE_SHARE_MS - 1;
    expect((await get(port, '/status.json')).status).toBe(200);
    expect(reads).toBe(1);
    nowMs += 1;
    const again = await Promise.all(Array.from({ length: 20 }, () => get(port, '/status.json')));
    expect(again.map((p) => p.status)).toEqual(Array(20).fill(200));
    expect(reads).toBe(2);
    console.info(`page burst: ${BURST} requests, 1 read of the warehouse; /healthz ${health.status} and /metrics ${metrics.status} while ${answeredMeanwhile} of ${BURST} pages were answered`);
  }, patience(120_000));
});
