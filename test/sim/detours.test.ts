// Redirects and announced outages, as a client sees them on the wire.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { get } from './support.ts';

let sim: Simulator;
let other: Server;
let otherUrl: string;
let otherHits = 0;
const auth = { authorization: 'Bearer gw_key_0001' };

beforeAll(async () => {
  sim = await startSimulator({ gatewayKeys: ['gw_key_0001'], tokens: 4, historyDays: 10 });
  other = createServer((_req, res) => {
    otherHits++;
    res.end('{}');
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await sim.close();
  await new Promise((r) => other.close(r));
});
beforeEach(() => {
  sim.clearRedirects();
  sim.setOutage(null);
  sim.resetRequests();
  otherHits = 0;
});

/** One request, redirects not followed. */
async function manual(path: string, headers: Record<string, string> = {}) {
  const r = await fetch(`${sim.url}${path}`, { headers, redirect: 'manual' });
  return { status: r.status, location: r.headers.get('location'), retryAfter: r.headers.get('retry-after'), text: await r.text() };
}

/** The data of an answer without its volatile `meta.servedAt`. */
const dataOf = (json: { data: unknown; meta: Record<string, unknown> }) => ({ data: json.data, meta: { ...json.meta, servedAt: undefined } });

describe('redirects', () => {
  it("'alias': a same-origin 307 (relative Location) to the same route with one more query parameter, serving the same answer, not redirected again", async () => {
    const chart = sim.data.appCharts('aurora')![0]!;
    const path = `/api/v1/tokens/aurora/charts/${chart.key}?limit=5`;
    const direct = (await get(`${sim.url}${path}`)).json;
    sim.redirect({ from: '/api/v1/tokens/aurora/charts/' });
    const r = await manual(path);
    expect(r).toMatchObject({ status: 307, location: `/api/v1/tokens/aurora/charts/${chart.key}?limit=5&moved=1` });
    const moved = await get(`${sim.url}${r.location}`);
    expect(moved.status).toBe(200);
    expect(dataOf(moved.json)).toEqual(dataOf(direct));
    expect(sim.requests.map((x) => [x.path, x.status, x.bucket])).toEqual([
      [path, 200, 'app-public'],
      [path, 307, 'app-public'],
      [r.location, 200, 'app-public'],
    ]);
  });

  it('a gateway alias keeps its bucket and needs the key as the route does', async () => {
    sim.redirect({ from: '/v1/tokens/aurora/charts', status: 308 });
    const r = await manual('/v1/tokens/aurora/charts', auth);
    expect(r).toMatchObject({ status: 308, location: '/v1/tokens/aurora/charts?moved=1' });
    expect((await get(`${sim.url}${r.location}`, auth)).status).toBe(200);
    expect((await get(`${sim.url}${r.location}`)).status).toBe(401);
    expect(sim.requests.every((x) => x.bucket === 'gateway')).toBe(true);
  });

  it('to another host: an absolute Location there with the same path and query; `times` bounds it', async () => {
    sim.redirect({ from: '/v1/tokens', status: 302, to: otherUrl, times: 1 });
    const r = await manual('/v1/tokens?x=1', auth);
    expect(r).toMatchObject({ status: 302, location: `${otherUrl}/v1/tokens?x=1` });
    expect(r.text).toContain(otherUrl);
    expect((await manual('/v1/tokens?x=1', auth)).status).toBe(200);
    expect(otherHits).toBe(0);
  });

  it('refuses options it cannot serve', () => {
    expect(() => sim.redirect({ from: '/v1/tokens', status: 304 })).toThrow(/status/);
    expect(() => sim.redirect({ from: 'v1/tokens' })).toThrow(/from/);
    expect(() => sim.redirect({ from: '/v1/tokens', to: 'ftp://x' })).toThrow(/to/);
  });
});

describe('outage', () => {
  it('after N requests of the bucket, 503 + Retry-After counting down for its seconds, other buckets untouched; then it serves again', async () => {
    sim.setOutage({ bucket: 'gateway', seconds: 2, after: 1 });
    expect((await manual('/v1/tokens', auth)).status).toBe(200);
    const first = await manual('/v1/tokens', auth);
    expect(first.status).toBe(503);
    expect(first.retryAfter).toBe('2');
    expect(JSON.parse(first.text)).toMatchObject({ status: 503, code: 'service-unavailable' });
    expect((await manual('/api/v1/tokens')).status).toBe(200);
    const [window] = sim.outages;
    expect(window).toMatchObject({ bucket: 'gateway', seconds: 2 });
    expect(window!.endsAt - window!.startedAt).toBe(2000);
    // Waits for the end by the simulator's own record, not a guess.
    await new Promise((r) => setTimeout(r, Math.max(0, window!.endsAt - Date.now()) + 20));
    expect((await manual('/v1/tokens', auth)).status).toBe(200);
    expect(sim.outages).toHaveLength(1);
  });

  it('an app outage speaks the app dialect, and Retry-After may be an HTTP-date', async () => {
    const s = await startSimulator({ tokens: 2, historyDays: 5, retryAfterForm: 'http-date', outage: { bucket: 'app-public', seconds: 30 } });
    try {
      const r = await fetch(`${s.url}/api/v1/metrics`);
      expect(r.status).toBe(503);
      const body = (await r.json()) as { code: string };
      expect(body.code).toBe('engine_data_unavailable');
      const until = Date.parse(r.headers.get('retry-after')!);
      const served = Date.parse(r.headers.get('date')!);
      expect(until - served).toBeGreaterThanOrEqual(29_000);
      expect(until - served).toBeLessThanOrEqual(31_000);
    } finally {
      await s.close();
    }
  });
});
