// sync.requests and sync.raw_responses hold what happened: every attempt, every 2xx body
// once per distinct content, numbers exact, no host and no key anywhere.
import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUpstream, FAST_RETRY_POLICY, InProcessBudget, type Upstream } from '../../../src/upstream/index.ts';
import { WarehouseRecorder } from '../../../src/store/books/request-log.ts';
import { openWarehouse, type Warehouse } from '../../../src/store/connection.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { patience } from '../../helpers/patience.ts';
import { canaryKey, createTestLogger, withServerClockOffset } from '../../helpers/services.ts';

const APP_KEY = canaryKey('app');
const GW_KEY = canaryKey('gw');
const RUN_ID = '7f1d7c1e-5a6b-4c1d-9e2f-0a1b2c3d4e5f';

const fx = useSimAndWarehouse({ appKeys: { [APP_KEY]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [GW_KEY] });

// A recorder a failed test left open must not write into the next test's tables.
const open: WarehouseRecorder[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

beforeEach(async () => {
  fx.sim.clearFaults();
  fx.sim.resetRequests();
  // The archive refuses to be emptied (src/store/sql/history.sql): a test's reset goes around its guard.
  await fx.warehouse.db.transaction(async (tx) => {
    await tx.execute(sql`set local session_replication_role = replica`);
    await tx.execute(sql`truncate sync.requests, sync.raw_responses`);
  });
});

function setup(options: { batchRows?: number; flushIntervalMs?: number } = {}) {
  const log = createTestLogger([APP_KEY, GW_KEY]);
  const recorder = new WarehouseRecorder(fx.warehouse, log.logger, options);
  open.push(recorder);
  const upstream: Upstream = createUpstream({
    config: {
      app: { url: fx.sim.url, apiKey: APP_KEY },
      gateway: { url: fx.sim.url, apiKey: GW_KEY },
      requestTimeoutMs: 3_000,
      maxResponseBytes: 1 << 20,
      maxAttempts: 4,
      maxRateWaitMs: 10_000,
    },
    budget: new InProcessBudget(),
    recorder,
    logger: log.logger,
    retry: FAST_RETRY_POLICY,
  });
  return { upstream, recorder, lines: log.lines };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = patience(5_000)): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

type RequestRow = { run_id: string | null; source: string; bucket: string; path: string; http_status: number | null; attempt: number; duration_ms: number; rate_limit_remaining: number | null; problem_code: string | null; request_id: string | null; error: string | null };

describe('WarehouseRecorder', () => {
  it('records every attempt with status, attempt number, budget, problem code and request id', async () => {
    fx.sim.script('/v1/tokens', [{ status: 503 }, { status: 0 }]);
    const { upstream, recorder } = setup();
    await upstream.get({ route: 'gateway.tokens', runId: RUN_ID });
    await upstream.get({ route: 'app.token', params: { slug: 'no-such-token' }, runId: RUN_ID }).catch(() => {});
    await recorder.flush();

    const rows = await fx.warehouse.query<RequestRow>(sql`select * from sync.requests order by id`);
    expect(rows.map((r) => [r.source, r.bucket, r.path, r.http_status, r.attempt, r.problem_code])).toEqual([
      ['gateway', 'gateway', '/v1/tokens', 503, 1, 'service-unavailable'],
      ['gateway', 'gateway', '/v1/tokens', null, 2, null],
      ['gateway', 'gateway', '/v1/tokens', 200, 3, null],
      ['app', 'app-public', '/api/v1/tokens/no-such-token', 404, 1, 'token_not_found'],
    ]);
    expect(rows.every((r) => r.run_id === RUN_ID && r.duration_ms >= 0)).toBe(true);
    expect(rows[0]?.request_id).toMatch(/^sim-/);
    expect(rows[1]?.error).toBeTruthy();
    expect(rows[2]?.rate_limit_remaining).toBeGreaterThan(0);
  });

  it('stores identical bodies once (servedAt aside), keeps changed ones, never a host or a key', async () => {
    const { upstream, recorder } = setup();
    const a = await upstream.get({ route: 'app.metrics' });
    await new Promise((r) => setTimeout(r, 5)); // a later servedAt
    const b = await upstream.get({ route: 'app.metrics' });
    expect(a.text).not.toBe(b.text);
    expect(a.sha256).toBe(b.sha256);
    await upstream.get({ route: 'app.bundle', params: { slug: 'aurora' } });
    await upstream.get({ route: 'gateway.openapi' });
    await recorder.flush();
    // The same body in a later batch: still one row, seen later.
    await upstream.get({ route: 'app.metrics' });
    await recorder.close();

    const rows = await fx.warehouse.query<{ path: string; sha256: string; fetched_at: Date; last_seen_at: Date; status: string; body: unknown; body_text: string | null }>(
      sql`select path, sha256, fetched_at, last_seen_at, status, body, body_text from sync.raw_responses order by id`,
    );
    expect(rows.map((r) => r.path)).toEqual(['/api/v1/metrics', '/api/v1/tokens/aurora/full', '/openapi-product.json']);
    const metrics = rows[0]!;
    expect(metrics.sha256).toBe(a.sha256);
    expect(new Date(metrics.last_seen_at).getTime()).toBeGreaterThan(new Date(metrics.fetched_at).getTime());
    expect(rows.every((r) => r.status === 'ok' && r.body !== null && r.body_text === null)).toBe(true);

    const everything = JSON.stringify(await fx.warehouse.query(sql`select * from sync.requests`)) + JSON.stringify(await fx.warehouse.query(sql`select * from sync.raw_responses`));
    expect(everything).not.toContain(APP_KEY);
    expect(everything).not.toContain(GW_KEY);
    expect(everything).not.toContain('127.0.0.1');
  });

  it('keeps numbers exact in jsonb', async () => {
    const big = '123456789012345678901234567890.123456789';
    fx.sim.script('/api/v1/screener', [{ status: 200, body: `{"data":[{"v":${big},"s":"0.000000000000000000000000001","n":-0.5}],"meta":{"servedAt":"x"}}` }]);
    const { upstream, recorder } = setup();
    await upstream.get({ route: 'app.screener' });
    await recorder.flush();
    const [row] = await fx.warehouse.query<{ v: string; s: string; n: string }>(
      sql`select body->'data'->0->>'v' as v, body->'data'->0->>'s' as s, (body->'data'->0->>'n')::numeric::text as n from sync.raw_responses`,
    );
    expect(row).toEqual({ v: big, s: '0.000000000000000000000000001', n: '-0.5' });
  });

  it('keeps a body that is not JSON as text, marked invalid', async () => {
    fx.sim.setFaults({ invalidJsonRate: 1, pathFilter: '/api/v1/tokens' });
    const { upstream, recorder } = setup();
    await expect(upstream.get({ route: 'app.tokens' })).rejects.toThrow(/invalid JSON/);
    await recorder.flush();
    const rows = await fx.warehouse.query<{ status: string; body: unknown; body_text: string }>(sql`select status, body, body_text from sync.raw_responses`);
    // Three attempts, one identical body.
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'invalid', body: null });
    expect(rows[0]?.body_text).toContain('<!DOCTYPE html>');
    const [count] = await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from sync.requests where error like 'invalid JSON%'`);
    expect(count?.n).toBe(3);
  });

  it('a body jsonb refuses (\\u0000) is refused, kept as text as served, without losing the batch', async () => {
    fx.sim.script('/api/v1/screener', [{ status: 200, body: '{"data":["a\\u0000b"],"meta":{}}' }]);
    const { upstream, recorder } = setup();
    await expect(upstream.get({ route: 'app.screener' })).rejects.toThrow(/not understood: data\[0\] holds U\+0000/);
    await upstream.get({ route: 'app.metrics' });
    await recorder.flush();
    const rows = await fx.warehouse.query<{ path: string; body_text: string | null; body: unknown }>(sql`select path, body_text, body from sync.raw_responses order by path`);
    expect(rows.map((r) => [r.path, r.body === null, r.body_text !== null])).toEqual([
      ['/api/v1/metrics', false, false],
      ['/api/v1/screener', true, true],
    ]);
  });

  it('writes in batches: when a batch is full, and when a row has waited long enough', async () => {
    const count = async () => (await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from sync.requests`))[0]?.n ?? 0;
    const bySize = setup({ batchRows: 5, flushIntervalMs: 60_000 });
    // Each request is two rows (attempt + body): the third request fills a batch of five.
    for (let i = 0; i < 4; i++) await bySize.upstream.get({ route: 'app.tokens' });
    await waitFor(async () => (await count()) === 3);
    expect(await count()).toBe(3); // the fourth waits for its batch
    await bySize.recorder.close();
    expect(await count()).toBe(4);

    const byTime = setup({ batchRows: 1000, flushIntervalMs: 50 });
    await byTime.upstream.get({ route: 'app.tokens' });
    await waitFor(async () => (await count()) === 5);
    await byTime.recorder.close();
  });

  it('places a request on the server clock where it happened, even when the write waits for a connection', async () => {
    // Every connection of the pool (two) held when the batch is written, on a server whose
    // clock is an hour ahead; each hold ends by reading that clock.
    const busy = await openWarehouse({ databaseUrl: withServerClockOffset(fx.databaseUrl, '1 hour'), dataDir: '', maxConnections: 2 });
    const serverMs = sql`(extract(epoch from sync.server_clock()) * 1000)::float8`;
    try {
      const recorder = new WarehouseRecorder(busy, createTestLogger([]).logger, { flushIntervalMs: 60_000 });
      open.push(recorder);
      const startedAt = new Date(Date.now() - 2_000);
      recorder.request({ source: 'app', bucket: 'app-public', path: '/api/v1/metrics', httpStatus: 200, attempt: 1, startedAt, durationMs: 12 });
      const hold = () => busy.query<{ ms: number }>(sql`select ${serverMs} as ms from pg_sleep(0.6)`);
      const holding = Promise.all([hold(), hold()]);
      await waitFor(async () => {
        const [sleeping] = await fx.warehouse.query<{ n: number }>(
          sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state = 'active' and query like '%pg_sleep(0.6)%'`,
        );
        return sleeping!.n === 2;
      });
      await recorder.flush();
      const [flushed] = await busy.query<{ ms: number }>(sql`select ${serverMs} as ms`);
      const [[a], [b]] = await holding;
      const [row] = await fx.warehouse.query<{ started_ms: string }>(sql`select (extract(epoch from started_at) * 1000)::bigint::text as started_ms from sync.requests`);
      const placedMs = Number(row!.started_ms) - (startedAt.getTime() + 3_600_000);
      // The recorder reads the server's clock only once a connection is free, and places the
      // request within half that round trip: within half the time from the first connection
      // freed to the flush's end (and a few whole-millisecond roundings), not shifted by the
      // time spent waiting before.
      const freedToFlushedMs = flushed!.ms - Math.min(a!.ms, b!.ms);
      expect(Math.abs(placedMs)).toBeLessThanOrEqual(freedToFlushedMs / 2 + 3);
    } finally {
      await busy.close();
    }
  });

  it('a failing warehouse is logged and never fails the sync', async () => {
    const log = createTestLogger();
    const fail = () => Promise.reject(new Error('connection refused'));
    const statement = { then: (ok: () => void, ko: (e: unknown) => void) => fail().then(ok, ko), onConflictDoUpdate: fail };
    const broken = { db: { insert: () => ({ values: () => statement }) } } as unknown as Warehouse;
    const recorder = new WarehouseRecorder(broken, log.logger);
    const upstream = createUpstream({
      config: { app: { url: fx.sim.url, apiKey: undefined }, gateway: undefined, requestTimeoutMs: 3_000, maxResponseBytes: 1 << 20, maxAttempts: 2, maxRateWaitMs: 10_000 },
      budget: new InProcessBudget(),
      recorder,
      logger: log.logger,
    });
    const res = await upstream.get({ route: 'app.metrics' });
    expect(res.status).toBe(200);
    await expect(recorder.close()).resolves.toBeUndefined();
    expect(log.lines().some((l) => l.includes('could not record'))).toBe(true);
  });
});
