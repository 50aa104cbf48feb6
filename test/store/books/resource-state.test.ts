// A failure recorded as data in sync.resource_state: its columns, `details.problem` for every
// source (merged, the rest of `details` kept), cleared by a success; and `tesync status`
// counting failing resources by those columns.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { ProblemError, UpstreamServerError, UpstreamTimeoutError } from '../../../src/lib/errors.ts';
import { judgeFailure } from '../../../src/lib/failure.ts';
import { readState, writeFailure, writeSuccess, writeUnchanged } from '../../../src/store/books/resource-state.ts';
import { readStatus } from '../../../src/store/read/status.ts';
import { useTestWarehouse } from '../../helpers/mirror-fixture.ts';

const runId = '00000000-0000-4000-8000-000000000001';
const at = new Date('2026-11-24T00:00:00Z');
const problem = (status: number, code: string, over: Partial<ConstructorParameters<typeof ProblemError>[0]> = {}) => ({
  status,
  code,
  type: undefined,
  title: undefined,
  detail: 'the detail',
  instance: '/v1/x#1',
  scope: undefined,
  requestId: 'r-1',
  extensions: {},
  path: '/v1/x',
  ...over,
});

describe('writeFailure', () => {
  const w = useTestWarehouse();

  const columns = async (source: string, resource: string) =>
    (
      await w.query<Record<string, unknown>>(
        sql`select status, last_error, error_type, error_code, http_status, bucket, consecutive_failures, details from sync.resource_state where source = ${source} and resource = ${resource}`,
      )
    )[0];

  it('stores the failure fields in their columns and the problem in details.problem, for either source', async () => {
    for (const source of ['app', 'gateway']) {
      const failure = { ...judgeFailure(new ProblemError(problem(403, 'missing_scope'))), bucket: 'app-key' };
      await writeFailure(w.db, { source, resource: 'token/aave/bundle', kind: 'bundle', runId, at, failure });
      expect(await columns(source, 'token/aave/bundle')).toEqual({
        status: 'failed',
        last_error: 'ProblemError: GET /v1/x failed with 403 missing_scope (request id r-1)',
        error_type: 'ProblemError',
        error_code: 'missing_scope',
        http_status: 403,
        bucket: 'app-key',
        consecutive_failures: 1,
        details: { problem: { code: 'missing_scope', status: 403, instance: '/v1/x#1', requestId: 'r-1', detail: 'the detail', path: '/v1/x' } },
      });
    }
  });

  it('merges into details: what was there stays, the problem is replaced, extra details are added', async () => {
    await writeSuccess(w.db, { source: 'gateway', resource: 'token/aave/chart/c/30d', kind: 'charts', status: 'ok', runId, at, rowCount: 3, details: { form: 'per-stream' } });
    await writeFailure(w.db, { source: 'gateway', resource: 'token/aave/chart/c/30d', kind: 'charts', runId, at, failure: judgeFailure(new UpstreamServerError(problem(503, 'service-unavailable'))) });
    const failed = await columns('gateway', 'token/aave/chart/c/30d');
    expect(failed).toMatchObject({ status: 'failed', error_type: 'UpstreamServerError', error_code: 'service-unavailable', http_status: 503, bucket: null, consecutive_failures: 1 });
    expect(failed!.details).toEqual({ form: 'per-stream', problem: { code: 'service-unavailable', status: 503, instance: '/v1/x#1', requestId: 'r-1', detail: 'the detail', path: '/v1/x' } });

    // Upstream's not_found answer (what the gateway kept through onProblem): marker merged, counted as no failure.
    const notFound = judgeFailure(new ProblemError(problem(404, 'chart-item-not-found', { requestId: undefined, detail: undefined })));
    await writeFailure(w.db, { source: 'gateway', resource: 'token/aave/chart/c/30d', kind: 'charts', runId, at, failure: notFound, details: { notFoundMarker: 'asof-1' } });
    const answered = await columns('gateway', 'token/aave/chart/c/30d');
    expect(answered).toMatchObject({ status: 'not_found', error_type: 'ProblemError', error_code: 'chart-item-not-found', http_status: 404, consecutive_failures: 1 });
    expect(answered!.details).toEqual({
      form: 'per-stream',
      notFoundMarker: 'asof-1',
      problem: { code: 'chart-item-not-found', status: 404, instance: '/v1/x#1', requestId: null, detail: null, path: '/v1/x' },
    });

    // A failure with no response: no problem of its own, so the previous one goes.
    await writeFailure(w.db, { source: 'gateway', resource: 'token/aave/chart/c/30d', kind: 'charts', runId, at, failure: { ...judgeFailure(new UpstreamTimeoutError('/v1/x', 10, 'body')), bucket: 'gateway' } });
    const timedOut = await columns('gateway', 'token/aave/chart/c/30d');
    expect(timedOut).toMatchObject({ status: 'failed', error_type: 'UpstreamTimeoutError', error_code: null, http_status: null, bucket: 'gateway', consecutive_failures: 2 });
    expect(timedOut!.details).toEqual({ form: 'per-stream', notFoundMarker: 'asof-1' });
  });

  it('a first not_found is inserted with its marker and no failure counted', async () => {
    const failure = judgeFailure(new ProblemError(problem(404, 'token-not-found')));
    await writeFailure(w.db, { source: 'gateway', resource: 'token/gone/page', kind: 'pages', runId, at, failure, details: { notFoundMarker: null } });
    const row = await columns('gateway', 'token/gone/page');
    expect(row).toMatchObject({ status: 'not_found', consecutive_failures: 0, error_code: 'token-not-found' });
    expect(row!.details).toMatchObject({ notFoundMarker: null, problem: { code: 'token-not-found', status: 404 } });
  });

  it('a success, or a confirmed marker, clears the failure columns', async () => {
    await writeSuccess(w.db, { source: 'app', resource: 'token/aave/bundle', kind: 'bundle', status: 'ok', runId, at });
    expect(await columns('app', 'token/aave/bundle')).toMatchObject({ status: 'ok', last_error: null, error_type: null, error_code: null, http_status: null, bucket: null, consecutive_failures: 0, details: null });
    await writeUnchanged(w.db, { source: 'gateway', resource: 'token/aave/bundle', runId, at });
    expect(await columns('gateway', 'token/aave/bundle')).toMatchObject({ status: 'unchanged', error_type: null, error_code: null, http_status: null, bucket: null });
    expect((await readState(w.db, { source: 'gateway', resource: 'token/aave/bundle' }))?.httpStatus).toBeNull();
  });

  it('tesync status counts failing resources by class, HTTP status and code', async () => {
    for (const slug of ['a', 'b']) {
      await writeFailure(w.db, { source: 'app', resource: `token/${slug}/history`, kind: 'history', runId, at, failure: judgeFailure(new ProblemError(problem(401, 'invalid_api_key'))) });
    }
    await writeFailure(w.db, { source: 'app', resource: 'token/c/history', kind: 'history', runId, at, failure: judgeFailure(new UpstreamTimeoutError('/x', 1, 'headers')) });
    await writeSuccess(w.db, { source: 'app', resource: 'token/d/history', kind: 'history', status: 'ok', runId, at });
    const { groups } = await readStatus(w);
    const history = groups.find((g) => g.source === 'app' && g.group === 'history')!;
    expect(history.failing).toBe(3);
    expect(history.failures).toEqual([
      { status: 'failed', type: 'ProblemError', code: 'invalid_api_key', httpStatus: 401, resources: 2 },
      { status: 'failed', type: 'UpstreamTimeoutError', code: null, httpStatus: null, resources: 1 },
    ]);
    // not_found is an answer, not a failing resource.
    expect(groups.find((g) => g.source === 'gateway' && g.group === 'pages')!.failures).toEqual([]);
  });
});
