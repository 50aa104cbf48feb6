// failureHints: chosen by the failure's fields, never by its text.
import { describe, expect, it } from 'vitest';
import { failureHints } from '../../src/cli/hints.ts';
import type { Config } from '../../src/lib/config.ts';
import { ProblemError, UpstreamNetworkError, UpstreamTimeoutError } from '../../src/lib/errors.ts';
import { judgeFailure } from '../../src/lib/failure.ts';
import { walkFailure } from '../../src/engine/run/run-stats.ts';
import { emptyStats, type WalkFailure } from '../../src/ports/run-ledger.ts';
import { UpstreamBadPortError, UpstreamRefusedError, UpstreamTlsError } from '../../src/upstream/connect-errors.ts';

const config = { app: { url: 'http://app.test', apiKey: undefined }, gateway: { url: 'http://gateway.test', apiKey: 'k' } } as Config;
const hints = (...failures: WalkFailure[]) => failureHints({ ...emptyStats(), failures }, config);
const entry = (over: Partial<WalkFailure>): WalkFailure => ({ job: 'gateway.screener', resource: 'screener', source: 'gateway', status: 'failed', type: 'ProblemError', error: 'x', ...over });

describe('failureHints', () => {
  it('a 401 names the key variable, whatever the message says', () => {
    const expected = ['The gateway refused the API key in TE_GATEWAY_API_KEY (401 unauthorized): check the key.'];
    expect(hints(entry({ httpStatus: 401, code: 'unauthorized', error: 'ProblemError: GET /v1/screener failed with 401 unauthorized' }))).toEqual(expected);
    // Reworded (or translated) message: the hint stays; the old regex on "failed with 401" lost it.
    expect(hints(entry({ httpStatus: 401, error: 'ProblemError: the key was turned away' }))).toEqual(expected);
    expect(hints(entry({ httpStatus: 401, error: '' }))).toEqual(expected);
    // And text that looks like a 401 is not one.
    expect(hints(entry({ httpStatus: 403, error: 'ProblemError: GET /v1/x failed with 401 unauthorized' }))).toEqual([]);
  });

  it('from the error itself: judgeFailure and walkFailure carry the status through', () => {
    const err = new ProblemError({ status: 401, code: 'invalid_api_key', type: undefined, title: 'Unauthorized', detail: undefined, instance: undefined, scope: undefined, requestId: undefined, extensions: {}, path: '/api/v1/tokens' });
    const f = walkFailure({ name: 'app.tokens', source: 'app' }, 'tokens', judgeFailure(err));
    expect(f).toMatchObject({ source: 'app', status: 'failed', type: 'ProblemError', code: 'invalid_api_key', httpStatus: 401 });
    expect(hints({ ...f, error: 'reworded' })).toEqual(['The app host refused the API key in TE_APP_API_KEY (401 unauthorized): check the key.']);
  });

  it('network errors and timeouts by class name, with the reason for people', () => {
    const net = walkFailure({ name: 'app.tokens', source: 'app' }, 'tokens', judgeFailure(new UpstreamNetworkError('/api/v1/tokens', 'connection refused')));
    expect(hints(net)).toEqual(['Could not reach the app host at http://app.test (TE_APP_URL): GET /api/v1/tokens: connection refused']);
    expect(hints({ ...net, error: 'something else entirely' })).toEqual(['Could not reach the app host at http://app.test (TE_APP_URL): something else entirely']);
    const slow = walkFailure({ name: 'gateway.screener', source: 'gateway' }, 'screener', judgeFailure(new UpstreamTimeoutError('/v1/screener', 1000, 'headers')));
    expect(hints(slow)[0]).toMatch(/^Could not reach the gateway at http:\/\/gateway\.test \(TE_GATEWAY_URL\): /);
  });

  it('a refused connection and a blocked port: the cause, the address, the variable, what to do; one line for many resources', () => {
    const refused = (resource: string) => walkFailure({ name: 'app.tokens', source: 'app' }, resource, judgeFailure(new UpstreamRefusedError(`/api/v1/${resource}`, '127.0.0.1:45433', 'TE_APP_URL')));
    expect(hints(refused('metrics'), refused('tokens'))).toEqual([
      'Could not connect to the app host: connection refused by 127.0.0.1:45433 (TE_APP_URL); is it running there, and is TE_APP_URL its base URL?',
    ]);
    const blocked = walkFailure({ name: 'gateway.tokens', source: 'gateway' }, 'tokens', judgeFailure(new UpstreamBadPortError('/v1/tokens', 6000, 'TE_GATEWAY_URL')));
    expect(hints(blocked)).toEqual([
      "Could not connect to the gateway: port 6000 is one Node's fetch refuses to use (TE_GATEWAY_URL); serve it on another port (or behind a proxy) and point TE_GATEWAY_URL there.",
    ]);
    // Chosen by the class, not the words.
    expect(hints({ ...blocked, error: 'reworded' })[0]).toMatch(/^Could not connect to the gateway: reworded; serve it on another port/);
  });

  it('a certificate Node refused: the reason, the address, the variable, what to check', () => {
    const tls = walkFailure({ name: 'app.tokens', source: 'app' }, 'tokens', judgeFailure(new UpstreamTlsError('/api/v1/tokens', 'app.test:443', 'CERT_HAS_EXPIRED', 'TLS certificate not accepted: certificate has expired', 'TE_APP_URL')));
    expect(hints(tls)).toEqual([
      "Could not connect to the app host: TLS certificate not accepted: certificate has expired from app.test:443 (CERT_HAS_EXPIRED) (TE_APP_URL); check the server's certificate, or that TE_APP_URL has the scheme and host it is issued for.",
    ]);
    expect(judgeFailure(new UpstreamTlsError('/api/v1/tokens', 'app.test:443', 'CERT_HAS_EXPIRED', 'x', 'TE_APP_URL')).retryable).toBe(false);
  });

  it('unreachable kinds keep "could not reach", with the reason that says which', () => {
    const dns = walkFailure({ name: 'app.tokens', source: 'app' }, 'metrics', judgeFailure(new UpstreamNetworkError('/api/v1/metrics', 'DNS name not found: app.test (ENOTFOUND)')));
    expect(hints(dns)).toEqual(['Could not reach the app host at http://app.test (TE_APP_URL): GET /api/v1/metrics: DNS name not found: app.test (ENOTFOUND)']);
    const slow = walkFailure({ name: 'app.tokens', source: 'app' }, 'metrics', judgeFailure(new UpstreamTimeoutError('/api/v1/metrics', 30_000, 'headers')));
    expect(hints(slow)[0]).toMatch(/: GET \/api\/v1\/metrics: no complete response within 30000 ms \(timed out waiting for the headers; TE_REQUEST_TIMEOUT_MS\)$/);
  });

  it('a 404 on the first routes suggests a base URL with the prefix in it', () => {
    expect(hints(entry({ resource: 'tokens', httpStatus: 404, error: 'reworded' }))).toEqual([
      'The gateway at http://gateway.test has no tokens route: is TE_GATEWAY_URL the base URL, without the /api/v1 or /v1 prefix?',
    ]);
    expect(hints(entry({ resource: 'token/aave/history', httpStatus: 404 }))).toEqual([]);
  });

  it('a refused redirect says which URL variable to look at, once for many resources', () => {
    const expected = [
      'The gateway at http://gateway.test redirected requests where tesync does not follow (302; only redirects to a documented /v1 route on TE_GATEWAY_URL are followed): if the API moved, point TE_GATEWAY_URL at its new base URL.',
    ];
    expect(hints(entry({ resource: 'token/aave/chart/fees/all', httpStatus: 302 }), entry({ resource: 'token/aave/chart/tvl/all', httpStatus: 302 }))).toEqual(expected);
    expect(hints(entry({ job: 'app.chart', source: 'app', httpStatus: 307 }))[0]).toMatch(/^The app host at http:\/\/app\.test redirected .*\(307; .*documented \/api\/v1 route on TE_APP_URL/);
    expect(hints(entry({ httpStatus: 200 }))).toEqual([]);
  });

  it('entries from before failures were data give no hint but do not break', () => {
    expect(hints({ job: 'gateway.screener', resource: 'screener', error: 'ProblemError: GET /v1/screener failed with 401 unauthorized' })).toEqual([]);
  });
});
