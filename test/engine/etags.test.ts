// ETags (issue 44): a resource read from one response keeps its ETag; the next sync sends it
// as If-None-Match, and upstream's 304 confirms the resource (`last_success_at`, `unchanged`)
// without writing a row, a version or a set, and a list answered 304 still plans its children
// (from what it stored) and closes nothing. On Postgres, through the simulator's ETags.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectAppMirror } from '../helpers/app-mirror.ts';
import { expectGatewayMirror } from '../helpers/gateway-mirror.ts';
import { patience } from '../helpers/patience.ts';
import { recordFigure } from '../helpers/fault-figures.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';
import { warehouseDigest } from '../helpers/warehouse-compare.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const log = createTestLogger([appKey, gatewayKey], 'warn');

describe('If-None-Match and 304', () => {
  const fx = useSimAndWarehouse({ tokens: 6, historyDays: 5, chartsPerToken: 1, etags: true, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });

  const sync = (full = false) => syncOnce(fx.sim, fx.warehouse, log.logger, { appKey, gatewayKey }, ['app', 'gateway'], { full });
  const state = async (source: string, resource: string) =>
    (await fx.warehouse.query<{ status: string; etag: string | null; last_success_at: string; last_run_id: string }>(
      sql`select status, etag, to_char(last_success_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as last_success_at, last_run_id::text from sync.resource_state where source = ${source} and resource = ${resource}`,
    ))[0]!;
  const versions = async () => Number((await fx.warehouse.query<{ n: string }>(sql`select sum(n)::text as n from (select count(*) as n from app.tokens_history union all select count(*) from app.metrics_history union all select count(*) from gateway.tokens_history union all select count(*) from app.token_snapshots_history) v`))[0]!.n);

  it('the second sync of an unchanged upstream sends If-None-Match, gets 304s, and writes nothing', async () => {
    const first = await sync();
    expect(first.status).toBe('succeeded');
    const tokens1 = await state('app', 'tokens');
    const metrics1 = await state('app', 'metrics');
    // The ETag each one-response resource saw, kept.
    const served = fx.sim.requests.find((r) => r.path === '/api/v1/tokens' && r.status === 200);
    expect(tokens1.etag).toBeTruthy();
    expect(metrics1.etag).toBeTruthy();
    const digest = await warehouseDigest(fx.warehouse);
    const v0 = await versions();
    expect(served).toBeDefined();

    fx.sim.resetRequests();
    const second = await sync();
    expect(second.status).toBe('succeeded');
    // The request log: If-None-Match with the tag kept, answered 304.
    const asked = fx.sim.requests.filter((r) => r.path === '/api/v1/tokens');
    expect(asked).toHaveLength(1);
    expect(asked[0]!.ifNoneMatch).toBe(tokens1.etag);
    expect(asked[0]!.status).toBe(304);
    const gatewayList = fx.sim.requests.filter((r) => r.path === '/v1/tokens');
    expect(gatewayList[0]!.status).toBe(304);
    const notModified = fx.sim.requests.filter((r) => r.status === 304).length;
    expect(notModified).toBeGreaterThanOrEqual(3);
    recordFigure('etags: second sync of an unchanged upstream', { requests: fx.sim.requests.length, notModified, paths: fx.sim.requests.map((r) => r.path) });
    // Confirmed: unchanged, last_success_at moved on, by this run.
    for (const [source, resource, before] of [['app', 'tokens', tokens1], ['app', 'metrics', metrics1]] as const) {
      const after = await state(source, resource);
      expect(after.status).toBe('unchanged');
      expect(after.last_run_id).toBe(second.runId);
      expect(after.last_success_at > before.last_success_at, `${after.last_success_at} after ${before.last_success_at}`).toBe(true);
      expect(after.etag).toBe(before.etag);
    }
    // No row, no version, no set touched; the children were still planned (they ran in this run).
    expect(await warehouseDigest(fx.warehouse)).toEqual(digest);
    expect(await versions()).toBe(v0);
    const children = await fx.warehouse.query<{ n: number }>(sql`select count(*)::int as n from sync.resource_state where source = 'app' and resource like 'token/%' and last_run_id = ${second.runId}::uuid`);
    expect(children[0]!.n).toBeGreaterThan(0);
    await expectAppMirror(fx.warehouse, fx.sim.data, { bundles: 'ok' });
    await expectGatewayMirror(fx.warehouse, fx.sim.data);
  }, patience(120_000));

  it('a changed upstream answers 200 to the old tag: the list is read and written again', async () => {
    const before = await state('app', 'tokens');
    fx.sim.setEpoch(1);
    fx.sim.resetRequests();
    const run = await sync();
    expect(run.status).toBe('succeeded');
    const asked = fx.sim.requests.find((r) => r.path === '/api/v1/tokens')!;
    expect(asked.ifNoneMatch).toBe(before.etag);
    expect(asked.status).toBe(200);
    const after = await state('app', 'tokens');
    expect(after.status).toBe('ok');
    expect(after.etag).not.toBe(before.etag);
    // Epoch 1 delists one token: written by the 200.
    await expectAppMirror(fx.warehouse, fx.sim.data, { bundles: 'ok' });
  }, patience(120_000));

  it('a full sync sends no If-None-Match', async () => {
    fx.sim.resetRequests();
    expect((await sync(true)).status).toBe('succeeded');
    expect(fx.sim.requests.filter((r) => r.ifNoneMatch !== undefined)).toHaveLength(0);
  }, patience(120_000));
});
