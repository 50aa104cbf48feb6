// A key refused on every request that needs it: judged from a run's answers per bucket, named
// by its variable, and the run's status (both runners decide with finalRunStatus).
import { describe, expect, it } from 'vitest';
import { finalRunStatus } from '../../../src/engine/run/run-stats.ts';
import { emptyStats } from '../../../src/ports/run-ledger.ts';
import { describeKeyRefusal, judgeKeyRefusals, type BucketAnswers, type RequestSummary } from '../../../src/store/books/request-summary.ts';

const row = (bucket: string, httpStatus: number | null, n: number, problemCode: string | null = null): BucketAnswers => ({ bucket, httpStatus, problemCode, n });

describe('judgeKeyRefusals', () => {
  it('names the key refused by every answer that speaks about it', () => {
    expect(judgeKeyRefusals([row('app-key', 401, 12, 'unauthorized'), row('app-public', 200, 40), row('gateway', 200, 30)])).toEqual([
      { variable: 'TE_APP_API_KEY', source: 'app', bucket: 'app-key', refused: 12, answers: { '401 unauthorized': 12 } },
    ]);
    expect(judgeKeyRefusals([row('gateway', 401, 3, 'unauthorized'), row('gateway', 403, 2), row('gateway', 503, 4), row('gateway', 429, 1), row('gateway', null, 1)])).toEqual([
      { variable: 'TE_GATEWAY_API_KEY', source: 'gateway', bucket: 'gateway', refused: 5, answers: { '401 unauthorized': 3, '403': 2 } },
    ]);
  });

  it('is quiet when one answer took the key, or nothing answered about it', () => {
    expect(judgeKeyRefusals([row('app-key', 401, 11, 'unauthorized'), row('app-key', 200, 1)])).toEqual([]);
    // No credits for one token: the key itself was accepted.
    expect(judgeKeyRefusals([row('app-key', 403, 5, 'missing_scope'), row('app-key', 402, 1, 'no_credits_for_token')])).toEqual([]);
    expect(judgeKeyRefusals([row('app-key', 503, 5), row('app-key', 429, 2), row('app-key', null, 1)])).toEqual([]);
    expect(judgeKeyRefusals([row('app-public', 401, 5)])).toEqual([]);
    expect(judgeKeyRefusals([])).toEqual([]);
  });

  it('says it in one line with the variable and the count, never a key', () => {
    const [r] = judgeKeyRefusals([row('app-key', 401, 12, 'unauthorized')]);
    expect(describeKeyRefusal(r!)).toBe(
      'the app host refused the key in TE_APP_API_KEY on every request that needs it (12 requests; 401 unauthorized: 12): research bundles were not fetched; check the key',
    );
  });
});

describe('finalRunStatus', () => {
  const requests = (over: Partial<RequestSummary> = {}): RequestSummary => ({ total: 52, byStatus: { '200': 40, '401': 12 }, rateLimited: 0, failedAttempts: 0, ...over });
  const done = { ...emptyStats(), planned: 52, done: 52, byGroup: { 'app.tokens': { ok: 40 }, 'app.bundle': { unauthorized: 12 } } };
  const refusal = judgeKeyRefusals([row('app-key', 401, 12, 'unauthorized')]);

  it('is partial, not succeeded, when a key was refused on every request that needs it', () => {
    expect(finalRunStatus(done, requests())).toBe('succeeded');
    expect(finalRunStatus(done, requests({ keyRefusals: [] }))).toBe('succeeded');
    expect(finalRunStatus(done, requests({ keyRefusals: refusal }))).toBe('partial');
  });

  it('keeps the other statuses: failed when every request was refused, failed or partial by the walk', () => {
    expect(finalRunStatus(done, requests({ total: 12, byStatus: { '401': 12 }, keyRefusals: refusal }))).toBe('failed');
    expect(finalRunStatus({ ...done, done: 0, failed: 52 }, requests({ keyRefusals: refusal }))).toBe('failed');
    expect(finalRunStatus({ ...done, done: 50, failed: 2 }, requests())).toBe('partial');
  });
});
