// Upstream faults: storms, stalls, resets, broken and hostile bodies and odd Retry-After
// values (under clock skew: retry-after-skew.test.ts). The run survives each, records what it
// could not read, and one more sync after the faults clear converges to the complete mirror.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../sim/index.ts';
import { performSync } from '../../src/cli/sync-session.ts';
import { DEFAULT_BUDGET_POLICY, FAST_RETRY_POLICY, InProcessBudget } from '../../src/upstream/index.ts';
import { expectAppMirror } from '../helpers/app-mirror.ts';
import { recordingSleep } from '../helpers/fast-clock.ts';
import { patience } from '../helpers/patience.ts';
import { freshSimAndWarehouse, useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { createTestLogger, type TestWarehouse } from '../helpers/services.ts';
import { simConfig, syncOnce } from '../helpers/sync.ts';
import { recordFigure } from '../helpers/fault-figures.ts';

const log = createTestLogger([], 'warn');

async function freshMirror(sim: Simulator, tw: TestWarehouse): Promise<void> {
  sim.clearFaults();
  const run = await syncOnce(sim, tw.warehouse, log.logger, {}, ['app'], { full: true });
  expect(run.status).toBe('succeeded');
  await expectAppMirror(tw.warehouse, sim.data, { bundles: 'skipped' });
}

describe('upstream faults (app source)', () => {
  const fx = useSimAndWarehouse({ tokens: 6, historyDays: 30, chartsPerToken: 2, seed: 101 });

  it('a 20% 5xx storm with resets: retried, and the run completes the mirror', async () => {
    fx.sim.setFaults({ errorRate: 0.1, unavailableRate: 0.1, resetRate: 0.05 });
    const run = await syncOnce(fx.sim, fx.warehouse, log.logger, {}, ['app']);
    const injected = fx.sim.requests.filter((r) => r.status >= 500 || r.status === 0).length;
    expect(injected).toBeGreaterThan(3);
    recordFigure('upstream.storm', { requests: fx.sim.requests.length, injected5xxOrReset: injected, runStatus: run.status });
    // Anything the storm beat is recorded, never silently missing; the next run heals it.
    if (run.status !== 'succeeded') expect(run.stats.failures.length).toBeGreaterThan(0);
    await freshMirror(fx.sim, fx.tw);
  });

  it('stalls past the request timeout fail fast and are retried', async () => {
    fx.sim.resetRequests();
    // One chart stalls: its body would come in an hour; every other answer well within the timeout.
    const timeoutMs = patience(300);
    const slug = fx.sim.data.appTokens()[0]!.slug;
    fx.sim.setFaults({ stallMs: 3600_000, pathFilter: `/tokens/${slug}/charts/${fx.sim.data.appCharts(slug)![0]!.key}` });
    const run = await syncOnce(fx.sim, fx.warehouse, log.logger, { env: { TE_REQUEST_TIMEOUT_MS: String(timeoutMs), TE_MAX_ATTEMPTS: '2' } }, ['app'], { full: true });
    const [timeouts] = await fx.warehouse.query<{ n: number }>(
      sql`select count(*)::int as n from sync.requests where run_id = ${run.runId} and error like ${`%no complete response within ${timeoutMs} ms%`}`,
    );
    expect(timeouts!.n).toBeGreaterThan(0);
    expect(run.status).toBe('partial');
    await freshMirror(fx.sim, fx.tw);
  });

  it('truncated, invalid and schema-violating bodies are recorded invalid with the raw body kept', async () => {
    fx.sim.resetRequests();
    // Per-token routes only, so the walk gets far enough to meet many of them.
    fx.sim.setFaults({ invalidJsonRate: 0.2, schemaViolationRate: 0.2, truncateRate: 0.1, pathFilter: '/api/v1/tokens/' });
    // Which requests the rates hit depends on the order they arrive in; one chart answers every
    // attempt with invalid JSON, so that some resource ends invalid whatever that order.
    const slug = fx.sim.data.appTokens()[0]!.slug;
    fx.sim.script(`/api/v1/tokens/${slug}/charts/${fx.sim.data.appCharts(slug)![0]!.key}`, Array.from({ length: 3 }, () => ({ status: 200, body: '<!DOCTYPE html><html><body>upstream hiccup</body></html>' })));
    const run = await syncOnce(fx.sim, fx.warehouse, log.logger, {}, ['app'], { full: true });
    const [invalid] = await fx.warehouse.query<{ n: number; kept: number }>(
      sql`select count(*)::int as n, count(*) filter (where body_text is not null and length(body_text) > 0)::int as kept from sync.raw_responses where status = 'invalid'`,
    );
    expect(invalid!.n, JSON.stringify(run.stats)).toBeGreaterThan(0);
    expect(invalid!.kept).toBe(invalid!.n);
    const states = await fx.warehouse.query<{ status: string }>(sql`select status from sync.resource_state where last_run_id = ${run.runId} and status = 'invalid'`);
    expect(states.length, JSON.stringify(run.stats)).toBeGreaterThan(0);
    // Every resource recorded invalid has its raw body kept.
    const [kept] = await fx.warehouse.query<{ n: number }>(sql`select count(distinct path)::int as n from sync.raw_responses where status = 'invalid' and run_id = ${run.runId}`);
    expect(kept!.n).toBeGreaterThanOrEqual(states.length);
    recordFigure('upstream.invalidBodies', { invalidKept: invalid!.n, resourcesInvalid: states.length });
    await freshMirror(fx.sim, fx.tw);
  });

  it('a 50 MB body and an endless body fail within their bounds', async () => {
    fx.sim.resetRequests();
    // The size bound, not a timeout, ends both: the request timeout only ends a hang.
    const env = { TE_MAX_RESPONSE_BYTES: String(8 * 1024 * 1024), TE_REQUEST_TIMEOUT_MS: String(patience(30_000)) };
    fx.sim.setFaults({ hugeBodyBytes: 50 * 1024 * 1024, pathFilter: '/api/v1/screener' });
    const huge = await syncOnce(fx.sim, fx.warehouse, log.logger, { env }, ['app'], { full: true });
    expect(huge.stats.failures.some((f) => f.resource === 'screener' && f.error.includes('exceeds the limit'))).toBe(true);
    fx.sim.setFaults({ hugeBodyBytes: 0, endlessBody: true, pathFilter: '/api/v1/screener' });
    const endless = await syncOnce(fx.sim, fx.warehouse, log.logger, { env }, ['app'], { full: true });
    expect(endless.stats.failures.some((f) => f.resource === 'screener' && f.error.includes('exceeds the limit'))).toBe(true);
    await freshMirror(fx.sim, fx.tw);
  });

  it.each([
    ['0', 'seconds'],
    ['garbage', 'garbage'],
    ['Wed, 21 Oct 2015 07:28:00 GMT', 'a past date'],
  ])('Retry-After %s (%s) falls back to backoff and the work completes', async (value) => {
    fx.sim.resetRequests();
    fx.sim.script('/api/v1/screener', [{ status: 429, code: 'rate_limited', retryAfter: value }, { status: 429, code: 'rate_limited', retryAfter: value }]);
    const run = await syncOnce(fx.sim, fx.warehouse, log.logger, {}, ['app'], { full: true });
    expect(run.status).toBe('succeeded');
    expect(fx.sim.requests.filter((r) => r.path.startsWith('/api/v1/screener')).map((r) => r.status)).toEqual([429, 429, 200]);
  });

  it('Retry-After 3600 ends the run cleanly as partial instead of sleeping for an hour', async () => {
    fx.sim.resetRequests();
    fx.sim.script('/api/v1/tokens', [{ status: 429, code: 'rate_limited', retryAfter: '3600' }]);
    const { sleep, waits } = recordingSleep();
    const budget = new InProcessBudget({ sleep });
    const run = await performSync(simConfig(fx.sim, {}, ['app']), log.logger, fx.warehouse, { sources: ['app'], trigger: 'test', retry: FAST_RETRY_POLICY, full: true, budget });
    // It gave up at once: no wait longer than a poll for a probe's answer (TE_MAX_RATE_WAIT_MS would be 2 minutes).
    expect(Math.max(0, ...waits)).toBeLessThanOrEqual(DEFAULT_BUDGET_POLICY.pollMs);
    expect(run.status).toBe('partial');
    const [state] = await fx.warehouse.query<{ status: string }>(sql`select status from sync.resource_state where source = 'app' and resource = 'tokens'`);
    expect(state!.status).toBe('rate_limited');
    // Nothing else was sent to that bucket while it was blocked.
    const after429 = fx.sim.requests.filter((r) => r.bucket === 'app-public' && r.at > fx.sim.requests.find((x) => x.status === 429)!.at);
    expect(after429).toHaveLength(0);
  });

});

describe('upstream faults (gateway source)', () => {
  it('a 20% 5xx storm with resets and truncations, then one clean sync: the complete mirror', async () => {
    const { expectGatewayMirror } = await import('../helpers/gateway-mirror.ts');
    const gatewayKey = 'te_fault_gateway_key_0001';
    const { sim, tw } = await freshSimAndWarehouse({ tokens: 6, historyDays: 30, chartsPerToken: 2, seed: 111, gatewayKeys: [gatewayKey], faults: { errorRate: 0.1, unavailableRate: 0.1, resetRate: 0.03, truncateRate: 0.03 } });
    const stormy = await syncOnce(sim, tw.warehouse, log.logger, { gatewayKey }, ['gateway']);
    const injected = sim.requests.filter((r) => r.status >= 500 || r.status === 0).length;
    expect(injected).toBeGreaterThan(3);
    sim.clearFaults();
    const clean = await syncOnce(sim, tw.warehouse, log.logger, { gatewayKey }, ['gateway']);
    expect(clean.status).toBe('succeeded');
    await expectGatewayMirror(tw.warehouse, sim.data);
    recordFigure('upstream.gatewayStorm', { requests: sim.requests.length, injected5xxOrReset: injected, stormyRun: stormy.status, nextRun: clean.status });
  });
});
