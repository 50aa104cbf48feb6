// A walk's failure entries: typed fields from judgeFailure, and older entries still readable.
import { describe, expect, it } from 'vitest';
import { ProblemError, RateLimitedError } from '../../src/lib/errors.ts';
import { judgeFailure } from '../../src/lib/failure.ts';
import { walkFailure } from '../../src/engine/run/run-stats.ts';
import { readWalkFailure } from '../../src/ports/run-ledger.ts';

const job = { name: 'gateway.charts', source: 'gateway' };

describe('walkFailure', () => {
  it('carries source, status, class, code, HTTP status and bucket; the message only as error', () => {
    const err = new ProblemError({ status: 403, code: 'missing_scope', type: undefined, title: undefined, detail: undefined, instance: undefined, scope: 's', requestId: undefined, extensions: {}, path: '/v1/x' });
    expect(walkFailure(job, 'token/aave/charts', { ...judgeFailure(err), bucket: 'gateway' })).toEqual({
      job: 'gateway.charts',
      resource: 'token/aave/charts',
      source: 'gateway',
      status: 'failed',
      type: 'ProblemError',
      code: 'missing_scope',
      httpStatus: 403,
      bucket: 'gateway',
      error: 'ProblemError: GET /v1/x failed with 403 missing_scope',
    });
    expect(walkFailure(job, 'charts', judgeFailure(new RateLimitedError('gateway', 10, 'reset')))).toMatchObject({ status: 'rate_limited', type: 'RateLimitedError', bucket: 'gateway' });
  });
});

describe('readWalkFailure', () => {
  it('reads an entry back as written (JSON round trip)', () => {
    const f = walkFailure(job, 'charts', { ...judgeFailure(new Error('boom')), bucket: 'gateway' });
    expect(readWalkFailure(JSON.parse(JSON.stringify(f)))).toEqual(f);
  });

  it('reads entries from before failures were data, taking the source from the job name', () => {
    expect(readWalkFailure({ job: 'app.tokens', resource: 'tokens', error: 'ProblemError: GET /api/v1/tokens failed with 500' })).toEqual({
      job: 'app.tokens',
      resource: 'tokens',
      source: 'app',
      error: 'ProblemError: GET /api/v1/tokens failed with 500',
    });
  });

  it('does not trust what it reads: wrong types are left out, garbage still gives an entry', () => {
    expect(readWalkFailure({ job: 'app.tokens', resource: 'tokens', error: 'e', status: 'exploded', httpStatus: '401', type: 7 })).toEqual({ job: 'app.tokens', resource: 'tokens', source: 'app', error: 'e' });
    expect(readWalkFailure('not json')).toEqual({ job: '?', resource: '?', error: 'not json' });
    expect(readWalkFailure(null)).toEqual({ job: '?', resource: '?', error: '' });
  });
});
