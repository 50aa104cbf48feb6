// The upstream client against the simulator over real HTTP: auth rules, retries, typed
// errors, safe URLs and links, response bounds, and 429 waits shared by concurrent callers.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  InvalidResponseError,
  ProblemError,
  RateLimitedError,
  ResponseTooLargeError,
  TransientError,
  UnsafeRequestError,
  UpstreamNotConfiguredError,
  UpstreamServerError,
  UpstreamTimeoutError,
} from '../../src/lib/errors.ts';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { createUpstream, FAST_RETRY_POLICY, InProcessBudget, MemoryRecorder, type UpstreamConfig, type UpstreamOptions } from '../../src/upstream/index.ts';
import { DEFAULT_BUDGET_POLICY } from '../../src/upstream/budget/budget-state.ts';
import { recordingSleep } from '../helpers/fast-clock.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';
import { waitFor } from '../helpers/workers.ts';

const APP_KEY = canaryKey('app');
const NARROW_KEY = canaryKey('narrow');
const GW_KEY = canaryKey('gw');

let sim: Simulator;
let evil: Server;
let evilUrl: string;
let evilHits = 0;

beforeAll(async () => {
  sim = await startSimulator({
    tokens: 12,
    appKeys: { [APP_KEY]: { scopes: ['tokens:read'], credits: 'all' }, [NARROW_KEY]: { scopes: ['tokens:read:cobalt-dex'], credits: 'all' } },
    gatewayKeys: [GW_KEY],
  });
  // Another host: any request reaching it is a leak.
  evil = createServer((_req, res) => {
    evilHits++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[],"meta":{}}');
  });
  await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
  evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await sim?.close();
  await new Promise((r) => evil?.close(r));
});

beforeEach(() => {
  sim.clearFaults();
  sim.clearRedirects();
  sim.setOutage(null);
  sim.setForms({ hostileLinks: false });
  sim.resetRequests();
  evilHits = 0;
});

/** A client whose budget and retries sleep for real; `waits` keeps every wait they decided on. */
function client(config: Partial<UpstreamConfig> = {}, options: Partial<UpstreamOptions> = {}) {
  const recorder = new MemoryRecorder();
  const { sleep, waits } = recordingSleep();
  const budget = new InProcessBudget({ sleep });
  const log = createTestLogger([APP_KEY, GW_KEY, NARROW_KEY]);
  const upstream = createUpstream({
    sleep,
    config: {
      app: { url: sim.url, apiKey: APP_KEY },
      gateway: { url: sim.url, apiKey: GW_KEY },
      // Only ends a hung request: no test here times its answers.
      requestTimeoutMs: patience(3_000),
      maxResponseBytes: 1024 * 1024,
      maxAttempts: 4,
      maxRateWaitMs: 20_000,
      ...config,
    },
    budget,
    recorder,
    logger: log.logger,
    retry: FAST_RETRY_POLICY,
    ...options,
  });
  return { upstream, recorder, budget, waits, lines: log.lines };
}

/** The gateway bucket as the budget shows it. */
const gatewayOf = (budget: InProcessBudget) => budget.snapshot().find((b) => b.bucket === 'gateway');

const pathsSeen = () => sim.requests.map((r) => r.path);
/** An hour: what a test makes wait so long that an answer at all shows something else ended it. */
const HOUR_MS = 3600_000;

describe('credentials', () => {
  it('sends the key only to routes that need it, and never records or logs it', async () => {
    const { upstream, recorder, lines } = client();
    await upstream.get({ route: 'app.metrics' });
    await upstream.get({ route: 'app.tokens' });
    await upstream.get({ route: 'app.token', params: { slug: 'aurora' } });
    await upstream.get({ route: 'app.screener', query: { sort: '-effectiveMarketCap' } });
    await upstream.get({ route: 'app.history', params: { slug: 'aurora' } });
    await upstream.get({ route: 'app.charts', params: { slug: 'aurora' } });
    await upstream.get({ route: 'app.bundle', params: { slug: 'aurora' } });
    await upstream.get({ route: 'gateway.tokens' });
    await upstream.get({ route: 'gateway.token', params: { slug: 'aurora' } });
    await upstream.get({ route: 'gateway.openapi' });

    const seen = sim.requests;
    expect(seen).toHaveLength(10);
    for (const r of seen) {
      expect(r.headers.accept).toBe('application/json');
      if (r.bucket === 'app-public') expect(r.headers.authorization).toBeUndefined();
      else if (r.bucket === 'app-key') expect(r.headers.authorization).toBe(`Bearer ${APP_KEY}`);
      else expect(r.headers.authorization).toBe(`Bearer ${GW_KEY}`);
    }
    expect(seen.filter((r) => r.bucket === 'app-public')).toHaveLength(6);
    expect(seen.every((r) => r.status === 200)).toBe(true);

    const recorded = JSON.stringify([recorder.requests, recorder.responses.map((r) => ({ ...r, text: '' }))]);
    for (const key of [APP_KEY, GW_KEY]) {
      expect(recorded).not.toContain(key);
      expect(lines().join('\n')).not.toContain(key);
    }
    expect(recorder.requests.every((r) => r.path.startsWith('/') && !r.path.includes('127.0.0.1'))).toBe(true);
  });

  it('refuses a keyed route when no key is configured, before sending anything', async () => {
    const { upstream } = client({ app: { url: sim.url, apiKey: undefined } });
    await expect(upstream.get({ route: 'app.bundle', params: { slug: 'aurora' } })).rejects.toBeInstanceOf(UpstreamNotConfiguredError);
    const off = client({ gateway: undefined });
    await expect(off.upstream.get({ route: 'gateway.tokens' })).rejects.toThrow(/gateway source is not configured/);
    expect(sim.requests).toHaveLength(0);
  });

  it('a key that is not a valid header value is refused once, without quoting it', async () => {
    const badKey = `${GW_KEY}\r\nX-Injected: 1`;
    const { upstream } = client({ gateway: { url: sim.url, apiKey: badKey } });
    const err = await upstream.get({ route: 'gateway.tokens' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeRequestError);
    expect((err as Error).message).not.toContain(GW_KEY);
    expect(sim.requests).toHaveLength(0);
  });

  it('an ETag that is not a valid header value is not sent', async () => {
    const { upstream } = client();
    await upstream.get({ route: 'gateway.tokens', etag: '"v1"\r\nX-Injected: 1' });
    expect(sim.requests[0]?.headers['if-none-match']).toBeUndefined();
    expect(sim.requests[0]?.headers['x-injected']).toBeUndefined();
  });
});

describe('retries', () => {
  it('a 503 twice then 200 succeeds on the third attempt', async () => {
    sim.script('/api/v1/metrics', [{ status: 503, code: 'engine_data_unavailable' }, { status: 503 }]);
    const { upstream, recorder } = client();
    const res = await upstream.get({ route: 'app.metrics' });
    expect(res.status).toBe(200);
    expect(pathsSeen()).toEqual(['/api/v1/metrics', '/api/v1/metrics', '/api/v1/metrics']);
    expect(recorder.requests.map((r) => [r.attempt, r.httpStatus, r.problemCode])).toEqual([
      [1, 503, 'engine_data_unavailable'],
      [2, 503, 'engine_data_unavailable'],
      [3, 200, undefined],
    ]);
  });

  it('gives up on a persistent 5xx after maxAttempts, with the request id', async () => {
    sim.script('/v1/screener', Array.from({ length: 4 }, () => ({ status: 500 })));
    const { upstream } = client({ maxAttempts: 4 });
    const err = await upstream.get({ route: 'gateway.screener' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamServerError);
    expect(err).toMatchObject({ status: 500, code: 'internal-error' });
    expect((err as UpstreamServerError).requestId).toMatch(/^sim-/);
    expect(sim.requests).toHaveLength(4);
  });

  it('retries a connection reset', async () => {
    sim.script('/api/v1/tokens', [{ status: 0 }]);
    const { upstream, recorder } = client();
    await upstream.get({ route: 'app.tokens' });
    expect(recorder.requests.map((r) => r.httpStatus)).toEqual([null, 200]);
    expect(recorder.requests[0]?.error).toMatch(/fetch failed|socket|ECONNRESET/i);
  });

  it.each([
    [400, 'invalid_metric'],
    [401, 'unauthorized'],
    [402, 'no_credits_for_token'],
    [403, 'missing_scope'],
    [404, 'token_not_found'],
  ])('a %i is tried once and surfaces its code', async (status, code) => {
    sim.script('/api/v1/tokens/aurora', [{ status, code }]);
    const { upstream } = client();
    const err = await upstream.get({ route: 'app.history', params: { slug: 'aurora' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProblemError);
    expect(err).toMatchObject({ status, code });
    expect(sim.requests).toHaveLength(1);
  });

  it('real 4xx from upstream: unknown token, missing scope (with its extension), bad key', async () => {
    const { upstream } = client();
    await expect(upstream.get({ route: 'app.token', params: { slug: 'no-such-token' } })).rejects.toMatchObject({ status: 404, code: 'token_not_found' });
    const narrow = client({ app: { url: sim.url, apiKey: NARROW_KEY } });
    const err = await narrow.upstream.get({ route: 'app.bundle', params: { slug: 'aurora' } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 403, code: 'missing_scope' });
    expect((err as ProblemError).scope).toMatch(/^tokens:read/);
    const badKey = client({ gateway: { url: sim.url, apiKey: 'te_wrong_key_123' } });
    await expect(badKey.upstream.get({ route: 'gateway.tokens' })).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    expect(sim.requests).toHaveLength(3);
  });

  it('invalid JSON on a 200 is retried a couple of times, then kept as InvalidResponseError with the raw text', async () => {
    sim.setFaults({ invalidJsonRate: 1, pathFilter: '/api/v1/metrics' });
    const { upstream, recorder } = client({ maxAttempts: 5 });
    const err = await upstream.get({ route: 'app.metrics' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as InvalidResponseError).rawBody).toContain('<!DOCTYPE html>');
    expect(sim.requests).toHaveLength(3);
    expect(recorder.responses.map((r) => r.status)).toEqual(['invalid', 'invalid', 'invalid']);
  });

  it('a truncated body (cut connection, or a short body that is not JSON) is retried, then fails clearly', async () => {
    sim.setFaults({ truncateRate: 1, pathFilter: '/api/v1/tokens' });
    const { upstream, recorder } = client({ maxAttempts: 4, requestTimeoutMs: patience(1_000) });
    const err = await upstream.get({ route: 'app.tokens' }).catch((e: unknown) => e);
    expect(err instanceof TransientError || err instanceof InvalidResponseError).toBe(true);
    // The simulator alternates the two forms: both were seen, and both were retried.
    expect(sim.requests.length).toBeGreaterThanOrEqual(3);
    expect(recorder.requests.some((r) => r.httpStatus === null && /body ended early/.test(r.error ?? ''))).toBe(true);
    expect(recorder.requests.some((r) => r.httpStatus === 200 && /invalid JSON/.test(r.error ?? ''))).toBe(true);
  });

  it('sends If-None-Match and reports a 304 as not modified', async () => {
    sim.script('/v1/tokens', [{ status: 304, headers: { ETag: '"v1"' } }]);
    const { upstream } = client();
    const res = await upstream.get({ route: 'gateway.tokens', etag: '"v1"' });
    expect(res).toMatchObject({ status: 304, notModified: true, etag: '"v1"', body: undefined });
    expect(sim.requests[0]?.headers['if-none-match']).toBe('"v1"');
  });
});

describe('safe URLs', () => {
  const HOSTILE = ['..', '.', '%2e%2e', 'a/b', '?x=1', '#', '', 'x'.repeat(10_000), '../../v1/internal/tokens', 'a%2Fb', 'a b', 'ä'];

  it('hostile path parameters never reach the wire', async () => {
    const { upstream } = client();
    for (const bad of HOSTILE) {
      await expect(upstream.get({ route: 'app.token', params: { slug: bad } })).rejects.toBeInstanceOf(UnsafeRequestError);
      await expect(upstream.get({ route: 'gateway.chart', params: { slug: 'aurora', chartKey: bad } })).rejects.toBeInstanceOf(UnsafeRequestError);
      await expect(upstream.get({ route: 'app.bundle', params: { slug: bad } })).rejects.toBeInstanceOf(UnsafeRequestError);
    }
    expect(sim.requests).toHaveLength(0);
  });

  it('links off the base URL or into /v1/internal/ are never requested: the documented path is used', async () => {
    sim.setForms({ hostileLinks: true, chartLinkField: 'href' });
    const { upstream, lines } = client();
    const catalog = await upstream.get({ route: 'gateway.charts', params: { slug: 'aurora' } });
    const items = (catalog.body as { data: { href: string; id?: string; key?: string; chartKey?: string }[] }).data;
    expect(items[0]?.href).toMatch(/^http:\/\/evil\.invalid/);
    expect(items[1]?.href).toMatch(/^\/v1\/internal\//);
    const keyOf = (i: (typeof items)[number] | undefined) => String(i?.id ?? i?.key ?? i?.chartKey);
    const cases: [string, string][] = [
      [keyOf(items[0]), String(items[0]?.href)],
      [keyOf(items[1]), String(items[1]?.href)],
      [keyOf(items[0]), `${evilUrl}/v1/tokens/aurora/charts/${keyOf(items[0])}`],
      [keyOf(items[0]), `//127.0.0.1:${new URL(evilUrl).port}/v1/tokens/aurora/charts/${keyOf(items[0])}`],
    ];
    for (const [chartKey, link] of cases) {
      const res = await upstream.get({ route: 'gateway.chart', params: { slug: 'aurora', chartKey }, link, query: { timeframe: 'all' } });
      expect(res.path).toBe(`/v1/tokens/aurora/charts/${chartKey}?timeframe=all`);
    }
    expect(evilHits).toBe(0);
    expect(pathsSeen().some((p) => p.includes('/internal'))).toBe(false);
    expect(pathsSeen().every((p) => p.startsWith('/v1/tokens/aurora/charts'))).toBe(true);
    expect(lines().some((l) => l.includes('upstream link not followed'))).toBe(true);
  });

  it('a safe link is followed, with its query', async () => {
    const { upstream } = client();
    const res = await upstream.get({ route: 'app.chart', params: { slug: 'aurora' }, link: '/api/v1/tokens/aurora/charts/buybacks?x=1' });
    expect(res.path).toBe('/api/v1/tokens/aurora/charts/buybacks?x=1');
  });
});

describe('redirects', () => {
  it('a same-origin 307 on chart data is followed: both hops on the budget and in the log, the response under the path asked for', async () => {
    sim.redirect({ from: '/api/v1/tokens/aurora/charts/buybacks', times: 1 });
    const { upstream, recorder } = client();
    const res = await upstream.get({ route: 'app.chart', params: { slug: 'aurora', chartKey: 'buybacks' } });
    expect(res.status).toBe(200);
    expect(res.path).toBe('/api/v1/tokens/aurora/charts/buybacks');
    expect(pathsSeen()).toEqual(['/api/v1/tokens/aurora/charts/buybacks', '/api/v1/tokens/aurora/charts/buybacks?moved=1']);
    expect(recorder.requests.map((r) => [r.path, r.httpStatus, r.attempt, r.bucket])).toEqual([
      ['/api/v1/tokens/aurora/charts/buybacks', 307, 1, 'app-public'],
      ['/api/v1/tokens/aurora/charts/buybacks?moved=1', 200, 1, 'app-public'],
    ]);
    expect(recorder.requests[0]?.error).toBe('redirect 307 followed to /api/v1/tokens/aurora/charts/buybacks?moved=1');
    expect(recorder.responses.map((r) => [r.path, r.httpStatus, r.status])).toEqual([['/api/v1/tokens/aurora/charts/buybacks', 200, 'ok']]);
  });

  it.each([301, 302, 303, 308])('a same-origin %i on a keyed gateway route is followed, the key sent to the base URL only', async (status) => {
    sim.redirect({ from: '/v1/tokens/aurora/charts', status, times: 1 });
    const { upstream } = client();
    const res = await upstream.get({ route: 'gateway.charts', params: { slug: 'aurora' } });
    expect(res.status).toBe(200);
    expect(sim.requests.map((r) => [r.path, r.status, r.headers.authorization])).toEqual([
      ['/v1/tokens/aurora/charts', status, `Bearer ${GW_KEY}`],
      ['/v1/tokens/aurora/charts?moved=1', 200, `Bearer ${GW_KEY}`],
    ]);
  });

  it('a keyed bundle moved (307) to a public path goes there without the key, on the public bucket', async () => {
    sim.script('/api/v1/tokens/aurora/full', [{ status: 307, headers: { Location: '/api/v1/tokens/aurora' } }]);
    const { upstream, recorder } = client();
    const res = await upstream.get({ route: 'app.bundle', params: { slug: 'aurora' } });
    expect(res).toMatchObject({ status: 200, path: '/api/v1/tokens/aurora/full' });
    expect(sim.requests.map((r) => [r.path, r.status, r.headers.authorization ?? 'no key', r.bucket])).toEqual([
      ['/api/v1/tokens/aurora/full', 307, `Bearer ${APP_KEY}`, 'app-key'],
      ['/api/v1/tokens/aurora', 200, 'no key', 'app-public'],
    ]);
    expect(recorder.requests.map((r) => [r.path, r.httpStatus, r.bucket])).toEqual([
      ['/api/v1/tokens/aurora/full', 307, 'app-key'],
      ['/api/v1/tokens/aurora', 200, 'app-public'],
    ]);
  });

  it('a public route moved (307) to a keyed path does not gain the key: upstream refuses it, and that is recorded', async () => {
    sim.script('/api/v1/tokens/aurora', [{ status: 307, headers: { Location: '/api/v1/tokens/aurora/full' } }]);
    const { upstream, recorder } = client();
    await expect(upstream.get({ route: 'app.token', params: { slug: 'aurora' } })).rejects.toMatchObject({ status: 401, path: '/api/v1/tokens/aurora' });
    expect(sim.requests.map((r) => [r.path, r.headers.authorization ?? 'no key'])).toEqual([
      ['/api/v1/tokens/aurora', 'no key'],
      ['/api/v1/tokens/aurora/full', 'no key'],
    ]);
    expect(recorder.requests.map((r) => [r.path, r.httpStatus, r.bucket])).toEqual([
      ['/api/v1/tokens/aurora', 307, 'app-public'],
      ['/api/v1/tokens/aurora/full', 401, 'app-public'],
    ]);
  });

  it('a 302 to another host is never requested: failed with its status and the host only; the key in no record, error or log line', async () => {
    // The Location even carries the key, as a careless upstream might put it there.
    sim.script('/v1/tokens', [{ status: 302, headers: { Location: `${evilUrl}/v1/tokens?api_key=${GW_KEY}` }, body: `Redirecting to ${evilUrl}/v1/tokens?api_key=${GW_KEY}` }]);
    const { upstream, recorder, lines } = client();
    const err = await upstream.get({ route: 'gateway.tokens' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProblemError);
    const host = new URL(evilUrl).host;
    expect(err).toMatchObject({ status: 302, path: '/v1/tokens', title: `redirect to ${host} not followed: off the base URL` });
    expect(evilHits).toBe(0);
    expect(sim.requests).toHaveLength(1);
    expect(recorder.requests.map((r) => [r.path, r.httpStatus])).toEqual([['/v1/tokens', 302]]);
    const everything = JSON.stringify([String(err), err, recorder.requests, recorder.responses, lines()]);
    expect(everything).not.toContain(GW_KEY);
    expect(everything).not.toContain('api_key');
  });

  it('an off-route same-origin target (another prefix, /v1/internal/) is not requested', async () => {
    sim.script('/v1/tokens', [{ status: 307, headers: { Location: '/v1/internal/keys' } }, { status: 301, headers: { Location: '/api/v2/tokens' } }]);
    const { upstream } = client();
    await expect(upstream.get({ route: 'gateway.tokens' })).rejects.toMatchObject({ status: 307, title: expect.stringMatching(/not followed: off the route prefix$/) });
    await expect(upstream.get({ route: 'gateway.tokens' })).rejects.toMatchObject({ status: 301, title: expect.stringMatching(/not followed: off the route prefix$/) });
    expect(pathsSeen()).toEqual(['/v1/tokens', '/v1/tokens']);
  });

  it('a loop (A to B to A) is refused at the first repeat, and so is one hop past the bound', async () => {
    sim.script('/v1/tokens/aurora/charts', [{ status: 307, headers: { Location: '/v1/tokens/aurora/charts?b=1' } }, { status: 307, headers: { Location: '/v1/tokens/aurora/charts' } }]);
    const { upstream } = client();
    await expect(upstream.get({ route: 'gateway.charts', params: { slug: 'aurora' } })).rejects.toMatchObject({ status: 307, title: expect.stringMatching(/a redirect loop$/) });
    expect(pathsSeen()).toEqual(['/v1/tokens/aurora/charts', '/v1/tokens/aurora/charts?b=1']);

    sim.resetRequests();
    sim.script('/v1/screener', Array.from({ length: 8 }, (_, i) => ({ status: 302, headers: { Location: `/v1/screener?n=${i + 1}` } })));
    const bounded = client({}, { retry: { ...FAST_RETRY_POLICY, maxRedirects: 3 } });
    await expect(bounded.upstream.get({ route: 'gateway.screener' })).rejects.toMatchObject({ status: 302, title: expect.stringMatching(/more than 3 redirects$/) });
    expect(sim.requests).toHaveLength(4);
  });

  it('a 3xx that is not a redirect tesync follows (300) fails with its status', async () => {
    sim.script('/v1/tokens', [{ status: 300, headers: { Location: '/v1/tokens?x=1' } }]);
    const { upstream } = client();
    await expect(upstream.get({ route: 'gateway.tokens' })).rejects.toMatchObject({ status: 300, title: `redirect to ${new URL(sim.url).host} not followed: a 300 is not a redirect tesync follows` });
    expect(sim.requests).toHaveLength(1);
  });
});

describe('response bounds', () => {
  it('an oversized body fails with a clear error and is not retried', async () => {
    sim.setFaults({ hugeBodyBytes: 3 * 1024 * 1024, pathFilter: '/api/v1/metrics' });
    const { upstream } = client({ maxResponseBytes: 1024 * 1024 });
    const err = await upstream.get({ route: 'app.metrics' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect((err as Error).message).toMatch(/exceeds the limit of 1048576 bytes/);
    expect(sim.requests).toHaveLength(1);
  });

  it('an endless body is cut at the size limit', async () => {
    sim.setFaults({ endlessBody: true, pathFilter: '/v1/screener' });
    const { upstream } = client({ maxResponseBytes: 256 * 1024, requestTimeoutMs: patience(20_000) });
    const err = await upstream.get({ route: 'gateway.screener' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
  });

  it('a stalled body times out (and is retried up to maxAttempts)', async () => {
    // The body would come in an hour: an answer now is the timeout's.
    sim.setFaults({ stallMs: HOUR_MS, pathFilter: '/api/v1/tokens' });
    const { upstream, recorder } = client({ requestTimeoutMs: 400, maxAttempts: 2 });
    const err = await upstream.get({ route: 'app.tokens' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamTimeoutError);
    expect(err).toMatchObject({ phase: 'body', timeoutMs: 400 });
    expect(recorder.requests).toHaveLength(2);
    // Each attempt ended by the timeout, not by the stall.
    for (const r of recorder.requests) expect(r.error).toMatch(/no complete response within 400 ms \(timed out waiting for the body/);
  });

  it('a server that never sends headers times out', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const { upstream } = client({ app: { url, apiKey: undefined }, requestTimeoutMs: 300, maxAttempts: 1 });
      await expect(upstream.get({ route: 'app.tokens' })).rejects.toMatchObject({ name: 'UpstreamTimeoutError', phase: 'headers' });
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });
});

describe('429', () => {
  /** Requests to a bucket after the 429, as the simulator saw them arrive. */
  function afterBlock(bucket: string) {
    const seen = sim.requests.filter((r) => r.bucket === bucket);
    const first = seen[0];
    expect(first?.status).toBe(429);
    return { t429: first?.at ?? 0, rest: seen.slice(1) };
  }

  it('Retry-After: 3 holds all 8 concurrent callers off the bucket for 3 s, then the work completes', async () => {
    sim.script('/api/v1/tokens', [{ status: 429, code: 'rate_limited', retryAfter: '3' }]);
    const { upstream, recorder } = client({ maxAttempts: 1 });
    const results = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const a = await upstream.get({ route: 'app.token', params: { slug: i % 2 ? 'aurora' : 'cobalt-dex' } });
        const b = await upstream.get({ route: 'app.tokens' });
        return [a.status, b.status];
      }),
    );
    expect(results.flat().every((s) => s === 200)).toBe(true);
    const { t429, rest } = afterBlock('app-public');
    expect(rest).toHaveLength(16);
    for (const r of rest) expect(r.at - t429).toBeGreaterThanOrEqual(3000);
    // The 429 did not spend the only attempt each request had.
    expect(recorder.requests.find((r) => r.httpStatus === 429)?.retryAfterMs).toBe(3000);
  });

  it('Retry-After as an HTTP-date holds the bucket just the same', async () => {
    const date = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3000).toUTCString();
    sim.script('/v1/tokens', [{ status: 429, retryAfter: date }]);
    const { upstream } = client();
    await Promise.all(Array.from({ length: 8 }, () => upstream.get({ route: 'gateway.tokens' })));
    const { rest } = afterBlock('gateway');
    expect(rest).toHaveLength(8);
    // Until the date itself: the simulator's Date header has whole seconds, so the wait read
    // against it ends no sooner, however long the 429 took to come.
    for (const r of rest) expect(r.at).toBeGreaterThanOrEqual(Date.parse(date));
  });

  it('an unusable Retry-After falls back to backoff, and 429s spend no attempts', async () => {
    sim.script('/v1/tokens', [
      { status: 429, retryAfter: 'soon' },
      { status: 429, retryAfter: '0' },
      { status: 429 },
    ]);
    const { upstream, recorder } = client({ maxAttempts: 1 });
    const res = await upstream.get({ route: 'gateway.tokens' });
    expect(res.status).toBe(200);
    expect(recorder.requests.map((r) => r.httpStatus)).toEqual([429, 429, 429, 200]);
  });

  it('a 429 after the attempts are used up is still waited out, not counted', async () => {
    sim.script('/v1/tokens', [{ status: 503 }, { status: 429, retryAfter: 'later' }, { status: 200 }]);
    const { upstream, recorder } = client({ maxAttempts: 2 });
    await expect(upstream.get({ route: 'gateway.tokens' })).resolves.toMatchObject({ status: 200 });
    expect(recorder.requests.map((r) => r.httpStatus)).toEqual([503, 429, 200]);
  });

  it('a caller that gives up stops waiting at once', async () => {
    sim.script('/v1/screener', [{ status: 429, retryAfter: '10' }]);
    const { upstream, budget } = client();
    const ac = new AbortController();
    const pending = upstream.get({ route: 'gateway.screener', signal: ac.signal });
    await waitFor('the caller to wait out the 429', () => gatewayOf(budget)?.waiters === 1 || undefined, 5_000, 10);
    ac.abort(new Error('shutting down'));
    await expect(pending).rejects.toThrow('shutting down');
    expect(sim.requests).toHaveLength(1);
  });

  it('a wait longer than maxRateWaitMs fails fast with RateLimitedError', async () => {
    sim.script('/v1/screener', [{ status: 429, retryAfter: '3600' }]);
    const { upstream, budget, waits } = client({ maxRateWaitMs: 10_000 });
    const err = await upstream.get({ route: 'gateway.screener' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ bucket: 'gateway' });
    expect((err as RateLimitedError).waitMs).toBeGreaterThan(3_000_000);
    // Fast: it did not wait at all.
    expect(waits).toEqual([]);
    // Every other caller of the bucket is told the same, without a request.
    await expect(upstream.get({ route: 'gateway.tokens' })).rejects.toBeInstanceOf(RateLimitedError);
    expect(sim.requests).toHaveLength(1);
    expect(budget.snapshot().find((b) => b.bucket === 'gateway')?.reason).toBe('retry-after');
  });
});

describe('Retry-After on any status', () => {
  /** Requests of the bucket that arrived inside an outage after the answer that began it. */
  function insideOutage(bucket: string) {
    const [w] = sim.outages.slice(-1);
    expect(w?.bucket).toBe(bucket);
    return sim.requests.filter((r) => r.bucket === bucket && r.at > w!.startedAt && r.at < w!.endsAt);
  }

  it('a 503 + Retry-After: 2 holds all 8 concurrent callers off the bucket for 2 s, spending no attempt', async () => {
    sim.setOutage({ bucket: 'gateway', seconds: 2 });
    const { upstream, recorder, lines } = client({ maxAttempts: 1 });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => upstream.get({ route: 'gateway.token', params: { slug: i % 2 ? 'aurora' : 'cobalt-dex' } })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(insideOutage('gateway')).toEqual([]);
    const outage = recorder.requests.filter((r) => r.httpStatus === 503);
    expect(outage.length).toBeGreaterThanOrEqual(1);
    expect(outage[0]).toMatchObject({ problemCode: 'service-unavailable', retryAfterMs: 2000 });
    // Other buckets go on.
    await expect(upstream.get({ route: 'app.metrics' })).resolves.toMatchObject({ status: 200 });
    expect(lines().some((l) => l.includes('announced when to come back'))).toBe(true);
  });

  it("an HTTP-date Retry-After is read against the response's Date header, not our clock", async () => {
    // Upstream's clock is a minute behind ours: against our clock the date would be past.
    const serverNow = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    sim.script('/v1/screener', [{ status: 503, retryAfter: new Date(serverNow + 2000).toUTCString(), headers: { Date: new Date(serverNow).toUTCString() } }]);
    const { upstream, recorder } = client({ maxAttempts: 1 });
    await expect(upstream.get({ route: 'gateway.screener' })).resolves.toMatchObject({ status: 200 });
    expect(recorder.requests.map((r) => [r.httpStatus, r.retryAfterMs])).toEqual([
      [503, 2000],
      [200, undefined],
    ]);
    const [first, second] = sim.requests;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(2000 - 5);
  });

  it('a 5xx without Retry-After keeps its backoff, spends attempts, and holds no other caller', async () => {
    sim.script('/v1/screener', [{ status: 503 }, { status: 503 }]);
    // The jitter drawn at its top: the backoff before the second attempt is the whole first step.
    const { upstream, budget, lines } = client({ maxAttempts: 2 }, { random: () => 1, retry: { ...FAST_RETRY_POLICY, baseDelayMs: 400, maxDelayMs: 400 } });
    await expect(upstream.get({ route: 'gateway.screener' })).rejects.toBeInstanceOf(UpstreamServerError);
    expect(budget.snapshot().find((b) => b.bucket === 'gateway')?.reason).toBeUndefined();
    expect(sim.requests).toHaveLength(2);
    expect(sim.requests[1]!.at - sim.requests[0]!.at).toBeGreaterThanOrEqual(400);
    expect(lines().some((l) => l.includes('"delayMs":400'))).toBe(true);
  });

  it("an HTTP-date Retry-After on a 503, read against a Date a minute and a half ahead of ours, holds every concurrent caller of the bucket for its 2 s", async () => {
    // Against our clock the date would be 92 s away: past maxRateWaitMs, every caller would fail.
    const serverNow = Math.floor(Date.now() / 1000) * 1000 + 90_000;
    sim.script('/v1/screener', [{ status: 503, code: 'service-unavailable', retryAfter: new Date(serverNow + 2000).toUTCString(), headers: { Date: new Date(serverNow).toUTCString() } }]);
    const { upstream, recorder, waits } = client({ maxAttempts: 1 });
    const first = upstream.get({ route: 'gateway.screener' });
    const others = Array.from({ length: 7 }, (_, i) => (i % 2 ? upstream.get({ route: 'gateway.tokens' }) : upstream.get({ route: 'gateway.token', params: { slug: 'aurora' } })));
    const results = await Promise.all([first, ...others]);
    expect(results.every((r) => r.status === 200)).toBe(true);
    const [outage, ...rest] = sim.requests.filter((r) => r.bucket === 'gateway');
    expect(outage).toMatchObject({ path: '/v1/screener', status: 503 });
    expect(rest).toHaveLength(8);
    for (const r of rest) expect(r.at - outage!.at).toBeGreaterThanOrEqual(2000);
    // Held for those 2 s and its jitter, never the 92 s our clock would make of the date.
    expect(Math.max(...waits)).toBeLessThanOrEqual(2000 + DEFAULT_BUDGET_POLICY.jitterMaxMs);
    expect(recorder.requests.filter((r) => r.httpStatus === 503).map((r) => r.retryAfterMs)).toEqual([2000]);
  });

  it('holds the bucket from the moment the headers arrive, not once a slow body has ended', async () => {
    let screener = 0;
    let headersSentAt = 0;
    let endBody: (() => void) | undefined;
    const arrivals: { path: string; at: number }[] = [];
    const gw = createServer((req, res) => {
      arrivals.push({ path: req.url ?? '', at: Date.now() });
      if (req.url === '/v1/screener' && screener++ === 0) {
        res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '2' });
        res.flushHeaders();
        headersSentAt = Date.now();
        // The body comes when the test has seen the hold.
        endBody = () => res.end('{"type":"about:blank","status":503,"code":"service-unavailable"}');
        return;
      }
      // No rate-limit headers: the bucket is unmetered, requests go side by side.
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[],"meta":{}}');
    });
    await new Promise<void>((r) => gw.listen(0, '127.0.0.1', r));
    try {
      const { upstream, recorder, budget } = client({ gateway: { url: `http://127.0.0.1:${(gw.address() as AddressInfo).port}`, apiKey: GW_KEY } });
      await upstream.get({ route: 'gateway.tokens' });
      const slow = upstream.get({ route: 'gateway.screener' });
      // The headers are in, the body is not: the bucket is held already, and the next caller waits.
      await waitFor('the hold of the 503 headers', () => gatewayOf(budget)?.reason === 'retry-after' || undefined, 5_000, 5);
      const next = upstream.get({ route: 'gateway.token', params: { slug: 'aurora' } });
      await waitFor('the next caller to wait', () => gatewayOf(budget)?.waiters === 1 || undefined, 5_000, 5);
      endBody!();
      await next;
      await slow;
      const after = arrivals.filter((a) => a.at > headersSentAt);
      expect(after.map((a) => a.path).sort()).toEqual(['/v1/screener', '/v1/tokens/aurora']);
      for (const a of after) expect(a.at - headersSentAt).toBeGreaterThanOrEqual(2000);
      expect(recorder.requests.find((r) => r.httpStatus === 503)).toMatchObject({ retryAfterMs: 2000 });
    } finally {
      await new Promise((r) => gw.close(r));
    }
  });

  it('a Retry-After longer than maxRateWaitMs on a 503 fails fast as rate limited, for every caller of the bucket', async () => {
    sim.script('/v1/screener', [{ status: 503, retryAfter: '3600' }]);
    const { upstream } = client({ maxRateWaitMs: 5_000 });
    await expect(upstream.get({ route: 'gateway.screener' })).rejects.toBeInstanceOf(RateLimitedError);
    await expect(upstream.get({ route: 'gateway.tokens' })).rejects.toBeInstanceOf(RateLimitedError);
    expect(sim.requests).toHaveLength(1);
  });

  it('a Retry-After on a 4xx holds the bucket too, and the 4xx is not retried', async () => {
    sim.script('/v1/tokens/aurora', [{ status: 403, code: 'forbidden', retryAfter: '3600' }]);
    const { upstream } = client({ maxRateWaitMs: 5_000 });
    await expect(upstream.get({ route: 'gateway.token', params: { slug: 'aurora' } })).rejects.toMatchObject({ status: 403 });
    await expect(upstream.get({ route: 'gateway.tokens' })).rejects.toBeInstanceOf(RateLimitedError);
    expect(sim.requests).toHaveLength(1);
  });
});
