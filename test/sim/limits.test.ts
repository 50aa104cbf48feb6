// Rate limits, scripted answers and request recording.
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type SimOptions, type Simulator } from '../../sim/index.ts';
import { get } from './support.ts';

const open: Simulator[] = [];
async function start(o: SimOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({ appKeys: { k: { scopes: ['tokens:read'], credits: 'all' }, k2: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: ['gw'], ...o });
  open.push(sim);
  return sim;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});
const auth = { authorization: 'Bearer gw' };

/** The simulator's clock, moved by the test alone: its windows and Retry-After count on nothing else. */
function heldClock() {
  let t = Date.now();
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

describe('app host rate limits', () => {
  it('counts the public bucket per IP and answers 429 rate_limited with delta-seconds Retry-After', async () => {
    const sim = await start({ rateLimits: { appPublic: { limit: 3, windowMs: 30_000 } }, now: heldClock().now });
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await get(`${sim.url}/api/v1/tokens`);
      expect(r.status).toBe(200);
      remaining.push(r.headers.get('x-ratelimit-remaining') ?? '');
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const limited = await get(`${sim.url}/api/v1/metrics`);
    expect(limited.status).toBe(429);
    expect(limited.json).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(limited.headers.get('content-type')).toBe('application/problem+json');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(29);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    // the key bucket is separate, and counted per key
    expect((await get(`${sim.url}/api/v1/tokens/aurora/full`, { authorization: 'Bearer k' })).status).toBe(200);
    expect(sim.requests.map((r) => r.bucket)).toEqual(['app-public', 'app-public', 'app-public', 'app-public', 'app-key']);
    expect(sim.requests.at(-2)?.status).toBe(429);
  });

  it('limits /full per key and can answer Retry-After as an HTTP-date', async () => {
    const sim = await start({ rateLimits: { appKey: { limit: 1, windowMs: 5_000 } }, retryAfterForm: 'http-date', now: heldClock().now });
    const k = { authorization: 'Bearer k' };
    expect((await get(`${sim.url}/api/v1/tokens/aurora/full`, k)).status).toBe(200);
    const limited = await get(`${sim.url}/api/v1/tokens/aurora/full`, k);
    expect(limited.status).toBe(429);
    const ra = limited.headers.get('retry-after') ?? '';
    expect(ra).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    const wait = Date.parse(ra) - Date.parse(limited.headers.get('date') ?? '');
    expect(wait).toBeGreaterThanOrEqual(5_000);
    expect(wait).toBeLessThanOrEqual(7_000);
    expect((await get(`${sim.url}/api/v1/tokens/aurora/full`, { authorization: 'Bearer k2' })).status).toBe(200);
    // public routes are another bucket
    expect((await get(`${sim.url}/api/v1/tokens`)).status).toBe(200);
  });

  it('starts over after the window and after setRateLimits', async () => {
    const clock = heldClock();
    const sim = await start({ rateLimits: { appPublic: { limit: 1, windowMs: 300 } }, now: clock.now });
    expect((await get(`${sim.url}/api/v1/tokens`)).status).toBe(200);
    const limited = await get(`${sim.url}/api/v1/tokens`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    clock.advance(350);
    expect((await get(`${sim.url}/api/v1/tokens`)).status).toBe(200);
    expect((await get(`${sim.url}/api/v1/tokens`)).status).toBe(429);
    sim.setRateLimits(undefined);
    const free = await get(`${sim.url}/api/v1/tokens`);
    expect(free.status).toBe(200);
    expect(Number(free.headers.get('x-ratelimit-remaining'))).toBeGreaterThan(1000);
  });
});

describe('gateway rate limits', () => {
  it('sends limit, remaining and delta reset on every response, and 429 rate-limit-exceeded', async () => {
    const sim = await start({ rateLimits: { gateway: { limit: 2, windowMs: 10_000 } }, now: heldClock().now });
    const a = await get(`${sim.url}/v1/tokens`, auth);
    expect([a.headers.get('x-ratelimit-limit'), a.headers.get('x-ratelimit-remaining'), a.headers.get('x-ratelimit-reset')]).toEqual(['2', '1', '10']);
    const b = await get(`${sim.url}/v1/tokens`, {});
    expect(b.status).toBe(401);
    expect(b.headers.get('x-ratelimit-remaining')).toBe('0');
    const c = await get(`${sim.url}/v1/tokens`, auth);
    expect(c.status).toBe(429);
    expect(c.json).toMatchObject({ code: 'rate-limit-exceeded', status: 429, instance: '/v1/tokens' });
    expect(c.headers.get('retry-after')).toMatch(/^(9|10)$/);
    for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-request-id', 'x-service-source', 'cache-control']) expect(c.headers.get(h), h).toBeTruthy();
  });

  it('can send the reset as epoch seconds', async () => {
    const clock = heldClock();
    const sim = await start({ rateLimits: { gateway: { limit: 5, windowMs: 60_000 } }, resetForm: 'epoch', now: clock.now });
    const r = await get(`${sim.url}/v1/tokens`, auth);
    const reset = Number(r.headers.get('x-ratelimit-reset'));
    expect(Math.abs(reset - (clock.now() / 1000 + 60))).toBeLessThan(3);
  });
});

describe('scripted answers', () => {
  it('forces 429s with any Retry-After, in order, then serves normally', async () => {
    const sim = await start();
    const date = new Date(Date.now() + 3000).toUTCString();
    sim.script('/api/v1/screener', ['3', date, '0', 'garbage', '3600'].map((retryAfter) => ({ status: 429, retryAfter })));
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await get(`${sim.url}/api/v1/screener?sort=-effectiveMarketCap`);
      expect(r.status).toBe(429);
      expect(r.json.code).toBe('rate_limited');
      seen.push(r.headers.get('retry-after') ?? '');
    }
    expect(seen).toEqual(['3', date, '0', 'garbage', '3600']);
    expect((await get(`${sim.url}/api/v1/screener`)).status).toBe(200);
    expect(sim.requests.map((r) => r.status)).toEqual([429, 429, 429, 429, 429, 200]);
  });

  it('uses the path prefix, the API dialect, codes, extensions, headers, verbatim bodies and resets', async () => {
    const sim = await start();
    sim.script('/v1/screener', [{ status: 429 }, { status: 503 }, { status: 500, code: 'internal-error', extensions: { hint: 'x' } }]);
    sim.script('/api/v1/tokens/aurora', [
      { status: 200, body: '{"data":"not a snapshot"}' },
      { status: 0 },
      { status: 200, headers: { 'X-Extra': 'yes' } },
      { status: 403, code: 'missing_scope', extensions: { scope: 'tokens:read:aurora' } },
    ]);
    expect((await get(`${sim.url}/api/v1/tokens`)).status).toBe(200);
    const a = await get(`${sim.url}/v1/screener`, auth);
    expect(a.json).toMatchObject({ status: 429, code: 'rate-limit-exceeded', instance: '/v1/screener' });
    expect(a.headers.get('retry-after')).toBeNull();
    expect((await get(`${sim.url}/v1/screener`, auth)).json.code).toBe('service-unavailable');
    const c = await get(`${sim.url}/v1/screener`, auth);
    expect(c.json).toMatchObject({ code: 'internal-error', hint: 'x', requestId: c.headers.get('x-request-id') });
    expect((await get(`${sim.url}/v1/screener`, auth)).status).toBe(200);
    const verbatim = await get(`${sim.url}/api/v1/tokens/aurora`);
    expect(verbatim.text).toBe('{"data":"not a snapshot"}');
    await expect(fetch(`${sim.url}/api/v1/tokens/aurora`)).rejects.toThrow();
    const passthrough = await get(`${sim.url}/api/v1/tokens/aurora`);
    expect(passthrough.status).toBe(200);
    expect(passthrough.json.data.token.slug).toBe('aurora');
    expect(passthrough.headers.get('x-extra')).toBe('yes');
    const scoped = await get(`${sim.url}/api/v1/tokens/aurora/charts`);
    expect(scoped.json).toMatchObject({ status: 403, code: 'missing_scope', scope: 'tokens:read:aurora' });
    expect((await get(`${sim.url}/api/v1/tokens/aurora`)).status).toBe(200);
  });
});

describe('request recording', () => {
  it('records every request before answering, with lower-cased headers and buckets', async () => {
    const sim = await start({ rateLimits: { gateway: { limit: 1, windowMs: 60_000 } } });
    await get(`${sim.url}/api/v1/tokens/aurora/metrics/history?limit=2&stream=all`, { 'X-Custom': 'Yes' });
    await get(`${sim.url}/api/v1/tokens/aurora/full`);
    await get(`${sim.url}/v1/tokens`, auth);
    await get(`${sim.url}/v1/tokens`, auth);
    await get(`${sim.url}/v1/internal/secret`, { 'x-api-key': 'x' });
    await get(`${sim.url}/favicon.ico`);
    const r = sim.requests;
    expect(r.map((x) => x.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(r[0]).toMatchObject({ method: 'GET', path: '/api/v1/tokens/aurora/metrics/history?limit=2&stream=all', bucket: 'app-public', status: 200 });
    expect(r[0]?.headers['x-custom']).toBe('Yes');
    expect(r[0]?.remoteAddress).toMatch(/127\.0\.0\.1/);
    expect(r.map((x) => [x.bucket, x.status])).toEqual([
      ['app-public', 200],
      ['app-key', 401],
      ['gateway', 200],
      ['gateway', 429],
      ['gateway', 429],
      ['none', 404],
    ]);
    expect(r[2]?.headers.authorization).toBe('Bearer gw');
    for (const x of r) expect(x.at).toBeLessThanOrEqual(Date.now());
    sim.resetRequests();
    expect(sim.requests).toHaveLength(0);
    await get(`${sim.url}/api/v1/metrics`);
    expect(sim.requests[0]?.seq).toBe(7);
  });

  it('adds latency, fixed or in a seeded range', async () => {
    const sim = await start({ latencyMs: [120, 160] });
    const t0 = Date.now();
    expect((await get(`${sim.url}/api/v1/metrics`)).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(115);
  });
});
