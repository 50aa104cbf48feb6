// judgeFailure: the one place that says what a failed job means for its resource.
import { describe, expect, it } from 'vitest';
import { InvalidResponseError, ProblemError, UpstreamServerError } from '../../../src/errors.ts';
import { judgeFailure } from '../../../src/runner/failure.ts';

const problem = (status: number, code: string | undefined) =>
  new ProblemError({ status, code, type: undefined, title: 'Not Found', detail: undefined, instance: undefined, scope: undefined, requestId: undefined, extensions: {}, path: '/x' });

describe('judgeFailure', () => {
  it('records a token or chart that does not exist as not_found, not retried', () => {
    for (const code of ['token_not_found', 'chart_not_found', 'token-not-found', 'chart-item-not-found']) {
      expect(judgeFailure(problem(404, code)), code).toMatchObject({ status: 'not_found', retryable: false });
    }
  });

  it('keeps other problems failed: a missing route is a bug to see, not a state', () => {
    expect(judgeFailure(problem(404, 'not_found'))).toMatchObject({ status: 'failed', retryable: false });
    expect(judgeFailure(problem(404, 'not-found'))).toMatchObject({ status: 'failed', retryable: false });
    expect(judgeFailure(problem(400, 'stream_not_found'))).toMatchObject({ status: 'failed', retryable: false });
    expect(judgeFailure(problem(404, undefined))).toMatchObject({ status: 'failed', retryable: false });
  });

  it('still tells invalid bodies and retryable errors apart', () => {
    expect(judgeFailure(new InvalidResponseError('x'))).toMatchObject({ status: 'invalid', retryable: false });
    const server = new UpstreamServerError({ status: 500, code: 'internal-error', type: undefined, title: undefined, detail: undefined, instance: undefined, scope: undefined, requestId: undefined, extensions: {}, path: '/x' });
    expect(judgeFailure(server)).toMatchObject({ status: 'failed', retryable: true });
  });
});
