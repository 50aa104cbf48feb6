// Job labels: a failure says why with a few bounded values, read from its fields; /healthz
// says why a check failed.
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { healthCause, startMetricsServer } from '../../../src/runners/metrics/server.ts';
import { patience } from '../../helpers/patience.ts';
import { createTestLogger } from '../../helpers/services.ts';
import { ProblemError, UpstreamTimeoutError } from '../../../src/lib/errors.ts';
import { createMetrics, jobLabels } from '../../../src/runners/metrics/metrics.ts';
import { judgeFailure } from '../../../src/lib/failure.ts';

const job = { source: 'gateway', group: 'charts' };
const problem = (status: number, code: string | undefined) =>
  new ProblemError({ status, code, type: undefined, title: undefined, detail: undefined, instance: undefined, scope: undefined, requestId: undefined, extensions: {}, path: '/v1/x' });

describe('jobLabels', () => {
  it('a success: source, group, status only', () => {
    expect(jobLabels(job, 'ok')).toEqual({ source: 'gateway', group: 'charts', status: 'ok' });
  });

  it('a failure: error class, upstream code and HTTP status', () => {
    const f = judgeFailure(problem(403, 'missing_scope'));
    expect(jobLabels(job, f.status, f)).toEqual({ source: 'gateway', group: 'charts', status: 'failed', type: 'ProblemError', code: 'missing_scope', http_status: '403' });
    const t = judgeFailure(new UpstreamTimeoutError('/v1/x', 10, 'headers'));
    expect(jobLabels(job, t.status, t)).toEqual({ source: 'gateway', group: 'charts', status: 'failed', type: 'UpstreamTimeoutError' });
  });

  it('keeps label values bounded: what does not look like a class name, code or status is `other`', () => {
    expect(jobLabels(job, 'failed', { type: 'Not a class name!', code: `x${'y'.repeat(100)}`, httpStatus: 1234 })).toMatchObject({ type: 'other', code: 'other', http_status: 'other' });
    expect(jobLabels(job, 'failed', { type: 'ProblemError', code: 'token/aave is gone' })).toMatchObject({ code: 'other' });
  });

  it('the job counter takes them, and a success without failure labels', async () => {
    const m = createMetrics({ queueCounts: async () => [], lastSuccess: async () => [], budgets: () => [] });
    m.jobs.inc(jobLabels(job, 'ok'));
    const f = judgeFailure(problem(401, 'unauthorized'));
    m.jobs.inc(jobLabels(job, f.status, f));
    const text = await m.registry.getSingleMetricAsString('tesync_jobs_processed_total');
    expect(text).toContain('tesync_jobs_processed_total{source="gateway",group="charts",status="ok"} 1');
    expect(text).toContain('tesync_jobs_processed_total{source="gateway",group="charts",status="failed",type="ProblemError",code="unauthorized",http_status="401"} 1');
  });
});

describe('coverage gauges', () => {
  it('per source and group: promised, held, and held per promised (1 when nothing is promised)', async () => {
    let reads = 0;
    const coverage = async () => {
      reads++;
      return [
        { source: 'app', group: 'snapshot', expected: 200, covered: 47 },
        { source: 'gateway', group: 'contract', expected: 0, covered: 0 },
      ];
    };
    const m = createMetrics({ queueCounts: async () => [], lastSuccess: async () => [], budgets: () => [], coverage });
    const text = await m.registry.metrics();
    expect(text).toContain('tesync_coverage_expected_resources{source="app",group="snapshot"} 200');
    expect(text).toContain('tesync_coverage_held_resources{source="app",group="snapshot"} 47');
    expect(text).toContain('tesync_coverage_ratio{source="app",group="snapshot"} 0.235');
    expect(text).toContain('tesync_coverage_ratio{source="gateway",group="contract"} 1');
    // One read of the warehouse per scrape, for the three gauges.
    expect(reads).toBe(1);
  });
});

describe('/healthz', () => {
  it('says why a check failed, in one line: the cause under the query wrapper, with its code', async () => {
    // A Postgres nothing listens for, through the same drizzle path as the worker's check.
    // connect_timeout is in seconds: a hang guard; a refusal comes at once.
    const client = postgres('postgres://nobody@127.0.0.1:9/none', { max: 1, connect_timeout: patience(2_000) / 1000, onnotice: () => {} });
    const db = drizzle({ client });
    const server = await startMetricsServer({
      port: 0,
      registry: new Registry(),
      checks: { postgres: async () => void (await db.execute(sql`select 1`)), queues: async () => {} },
      logger: createTestLogger().logger,
    });
    try {
      const r = await fetch(`http://127.0.0.1:${server.port}/healthz`);
      expect(r.status).toBe(503);
      const body = (await r.json()) as Record<string, string>;
      expect(body.queues).toBe('ok');
      expect(body.postgres).toMatch(/^unreachable: .*ECONNREFUSED/);
      expect(body.postgres).not.toMatch(/Failed query|params|\n/);
    } finally {
      await server.close();
      await client.end({ timeout: 1 });
    }
  });

  it('healthCause: wrappers unwrapped, codes added once, one line', () => {
    const cause = Object.assign(new Error('password authentication failed for user "x"'), { code: '28P01' });
    expect(healthCause(new Error('Failed query: select 1\nparams: ', { cause }))).toBe('password authentication failed for user "x" (28P01)');
    expect(healthCause(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }))).toBe('connect ECONNREFUSED 127.0.0.1:9');
    expect(healthCause('no answer')).toBe('no answer');
  });
});
