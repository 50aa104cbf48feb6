// judgeFailure: the one place that says what a failed job means for its resource.
import { describe, expect, it } from 'vitest';
import { InvalidResponseError, NotUnderstoodError, ProblemError, RateLimitedError, UpstreamNetworkError, UpstreamServerError, UpstreamTimeoutError } from '../../src/lib/errors.ts';
import { judgeFailure } from '../../src/lib/failure.ts';
import { UpstreamBadPortError, UpstreamRefusedError } from '../../src/upstream/connect-errors.ts';

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

describe('judgeFailure records the failure as data', () => {
  const fields = { type: undefined, title: 'Unauthorized', detail: 'key revoked', instance: '/v1/screener#1', scope: undefined, requestId: 'r-1', extensions: {}, path: '/v1/screener' };

  it('an upstream problem: class, code, HTTP status and the problem fields', () => {
    const f = judgeFailure(new ProblemError({ ...fields, status: 401, code: 'unauthorized' }));
    expect(f).toEqual({
      status: 'failed',
      retryable: false,
      type: 'ProblemError',
      code: 'unauthorized',
      httpStatus: 401,
      requestId: 'r-1',
      instance: '/v1/screener#1',
      detail: 'key revoked',
      path: '/v1/screener',
      message: 'ProblemError: GET /v1/screener failed with 401 unauthorized: Unauthorized (request id r-1)',
    });
    expect(judgeFailure(new UpstreamServerError({ ...fields, status: 503, code: 'service-unavailable' }))).toMatchObject({ type: 'UpstreamServerError', code: 'service-unavailable', httpStatus: 503, retryable: true });
    expect(judgeFailure(problem(404, 'token_not_found'))).toMatchObject({ status: 'not_found', answered: true, type: 'ProblemError', code: 'token_not_found', httpStatus: 404 });
  });

  it('other errors: their class name, the bucket of a rate limit, no HTTP status', () => {
    expect(judgeFailure(new RateLimitedError('gateway', 1500, 'Retry-After'))).toMatchObject({ status: 'rate_limited', type: 'RateLimitedError', bucket: 'gateway' });
    const timeout = judgeFailure(new UpstreamTimeoutError('/v1/screener', 1000, 'body'));
    expect(timeout).toMatchObject({ status: 'failed', retryable: true, type: 'UpstreamTimeoutError', path: '/v1/screener' });
    expect(timeout.httpStatus).toBeUndefined();
    expect(judgeFailure(new UpstreamNetworkError('/x', 'reset'))).toMatchObject({ type: 'UpstreamNetworkError' });
    expect(judgeFailure(new NotUnderstoodError('two rows for one key'))).toMatchObject({ status: 'invalid', type: 'NotUnderstoodError' });
    expect(judgeFailure(new Error('connection terminated'))).toMatchObject({ status: 'failed', retryable: true, type: 'Error', message: 'Error: connection terminated' });
    expect(judgeFailure('thrown string')).toMatchObject({ status: 'failed', type: 'unknown', message: 'thrown string' });
  });
});

describe('judgeFailure of a request that got no answer, by kind', () => {
  // Shaped as the upstream client throws them (src/upstream/http.ts, connect-errors.ts).
  const refused = new UpstreamRefusedError('/api/v1/metrics', '127.0.0.1:45433', 'TE_APP_URL');
  const badPort = new UpstreamBadPortError('/v1/tokens', 6000, 'TE_GATEWAY_URL');

  it.each([
    ['connection refused', refused, 'UpstreamRefusedError', '/api/v1/metrics', 'UpstreamRefusedError: connection refused by 127.0.0.1:45433 (TE_APP_URL)'],
    ['a port fetch will not use', badPort, 'UpstreamBadPortError', '/v1/tokens', "UpstreamBadPortError: port 6000 is one Node's fetch refuses to use (TE_GATEWAY_URL)"],
  ])('%s: failed, not retried (the same answer every time), with its path and message', (_, err, type, path, message) => {
    expect(judgeFailure(err)).toEqual({ status: 'failed', retryable: false, type, path, message });
  });

  it.each([
    ['DNS name not found', new UpstreamNetworkError('/api/v1/metrics', 'DNS name not found: api.example.test (ENOTFOUND)')],
    ['DNS lookup failed for now', new UpstreamNetworkError('/api/v1/metrics', 'DNS lookup of api.example.test failed for now (EAI_AGAIN)')],
    ['host unreachable', new UpstreamNetworkError('/api/v1/metrics', 'host unreachable: 10.0.0.7:80 (EHOSTUNREACH)')],
    ['network unreachable', new UpstreamNetworkError('/api/v1/metrics', 'network unreachable: 10.0.0.7:80 (ENETUNREACH)')],
    ['connect timed out', new UpstreamNetworkError('/api/v1/metrics', 'timed out connecting to 10.0.0.7:80 (UND_ERR_CONNECT_TIMEOUT)')],
    ['connection reset', new UpstreamNetworkError('/api/v1/metrics', 'connection reset by 10.0.0.7:80 (ECONNRESET)')],
    ['no complete response in time', new UpstreamTimeoutError('/api/v1/metrics', 30_000, 'headers')],
  ])('%s: failed, retryable (it may clear up), the reason in the message', (_, err) => {
    const f = judgeFailure(err);
    expect(f).toMatchObject({ status: 'failed', retryable: true, type: err.name, path: '/api/v1/metrics', message: `${err.name}: ${err.message}` });
    expect(f.httpStatus).toBeUndefined();
  });

  it("another error's path (a file's) is not taken for a request's", () => {
    const fsError = Object.assign(new Error("ENOENT: no such file or directory, open '/tmp/x'"), { code: 'ENOENT', path: '/tmp/x' });
    expect(judgeFailure(fsError).path).toBeUndefined();
  });
});

describe('judgeFailure records only what can be written', () => {
  const unrecordable = (s: string) => /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

  it("an upstream problem's texts and the message: no NUL, no lone surrogate, at most 300 characters", () => {
    const f = judgeFailure(
      new ProblemError({ status: 400, code: 'bad\u0000code', type: undefined, title: `t\ud800${'x'.repeat(4000)}`, detail: `d\u0000${'y'.repeat(4000)}`, instance: 'i\udc00', scope: undefined, requestId: 'r\u0000', extensions: {}, path: '/v1/x' }),
    );
    for (const text of [f.message, f.detail!, f.code!, f.instance!, f.requestId!]) {
      expect(unrecordable(text), text.slice(0, 40)).toBe(false);
      expect(text.length).toBeLessThanOrEqual(300);
    }
    expect(f.code).toBe('bad\\u0000code');
    expect(f.detail).toMatch(/^d\\u0000y+… \(\d+ more characters\)$/);
  });

  it("a failed query: the driver's error and its class, never drizzle's message with the parameters", () => {
    const cause = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { name: 'PostgresError', code: '22021' });
    const err = Object.assign(new Error('Failed query: insert into t (a) values ($1)\nparams: a\u0000b,param_canary'), { query: 'insert into t (a) values ($1)', params: ['a\u0000b', 'param_canary'], cause });
    expect(judgeFailure(err)).toMatchObject({ status: 'failed', type: 'PostgresError', message: 'PostgresError: invalid byte sequence for encoding "UTF8": 0x00' });
  });
});
