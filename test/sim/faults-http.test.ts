// Injected faults, as a client sees them on the wire.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { get, rawGet } from './support.ts';

let sim: Simulator;
const auth = { authorization: 'Bearer gw' };

beforeAll(async () => {
  sim = await startSimulator({ gatewayKeys: ['gw'] });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  sim.clearFaults();
  sim.resetRequests();
});

describe('answer-replacing faults', () => {
  it('500 internal_error / internal-error with a request id in body and header', async () => {
    sim.setFaults({ errorRate: 1 });
    const a = await get(`${sim.url}/api/v1/tokens`);
    expect(a.status).toBe(500);
    expect(a.headers.get('content-type')).toBe('application/problem+json');
    expect(a.json).toMatchObject({ status: 500, code: 'internal_error' });
    expect(a.json.requestId).toBeTruthy();
    expect(a.json.requestId).toBe(a.headers.get('x-request-id'));
    const g = await get(`${sim.url}/v1/tokens`, auth);
    expect(g.json).toMatchObject({ status: 500, code: 'internal-error', instance: '/v1/tokens' });
    expect(g.headers.get('x-request-id')).toBe(g.json.requestId);
  });

  it('503 engine_data_unavailable / service-unavailable', async () => {
    sim.setFaults({ unavailableRate: 1 });
    expect((await get(`${sim.url}/api/v1/screener`)).json).toMatchObject({ status: 503, code: 'engine_data_unavailable' });
    expect((await get(`${sim.url}/v1/screener`, auth)).json).toMatchObject({ status: 503, code: 'service-unavailable' });
  });

  it('only hits paths matching pathFilter, and setFaults merges', async () => {
    sim.setFaults({ errorRate: 1, pathFilter: '/metrics/history' });
    sim.setFaults({ stallMs: 0 });
    expect((await get(`${sim.url}/api/v1/tokens`)).status).toBe(200);
    expect((await get(`${sim.url}/api/v1/tokens/aurora/metrics/history?limit=1`)).status).toBe(500);
    sim.clearFaults();
    expect((await get(`${sim.url}/api/v1/tokens/aurora/metrics/history?limit=1`)).status).toBe(200);
  });

  it('hits a share of requests, deterministically by sequence', async () => {
    sim.setFaults({ errorRate: 0.5 });
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await get(`${sim.url}/api/v1/metrics`)).status);
    const errors = statuses.filter((s) => s === 500).length;
    expect(errors).toBeGreaterThan(5);
    expect(errors).toBeLessThan(25);
    // a second simulator with the same seed fails the same request numbers
    const twin = await startSimulator({ faults: { errorRate: 0.5 } });
    try {
      const lead = sim.requests[0]?.seq ?? 1;
      for (let i = 1; i < lead; i++) await get(`${twin.url}/api/v1/metrics`);
      const twinStatuses: number[] = [];
      for (let i = 0; i < 30; i++) twinStatuses.push((await get(`${twin.url}/api/v1/metrics`)).status);
      expect(twinStatuses).toEqual(statuses);
    } finally {
      await twin.close();
    }
  });

  it('resets the connection without a response, recorded as status 0', async () => {
    sim.setFaults({ resetRate: 1 });
    const r = await rawGet(`${sim.url}/api/v1/tokens`);
    expect(r.status).toBe(0);
    expect(r.error).toBeTruthy();
    expect(sim.requests.at(-1)?.status).toBe(0);
  });
});

describe('body faults on 200 answers', () => {
  it('truncates with a matching Content-Length or mid-chunk', async () => {
    sim.setFaults({ truncateRate: 1 });
    const results = [await rawGet(`${sim.url}/api/v1/screener`), await rawGet(`${sim.url}/api/v1/screener`)];
    const byLength = results.find((r) => r.headers['content-length'] !== undefined);
    const chunked = results.find((r) => r.headers['transfer-encoding'] === 'chunked');
    expect(byLength?.status).toBe(200);
    expect(byLength?.error).toBeNull();
    expect(byLength?.body.length).toBe(Number(byLength?.headers['content-length']));
    expect(() => JSON.parse(byLength?.body.toString() ?? '')).toThrow();
    expect(chunked?.status).toBe(200);
    expect(chunked?.error).toBeTruthy();
    expect(chunked?.body.length).toBeGreaterThan(0);
    // errors are not truncated
    expect((await get(`${sim.url}/api/v1/tokens/nope`)).json.code).toBe('token_not_found');
  });

  it('serves invalid JSON and schema violations with status 200', async () => {
    sim.setFaults({ invalidJsonRate: 1 });
    const bad = await get(`${sim.url}/api/v1/tokens`);
    expect(bad.status).toBe(200);
    expect(bad.json).toBeUndefined();
    sim.setFaults({ invalidJsonRate: 0, schemaViolationRate: 1 });
    const wrong = await get(`${sim.url}/v1/tokens`, auth);
    expect(wrong.status).toBe(200);
    expect(typeof wrong.json.data).toBe('string');
  });

  it('stalls between the headers and the body', async () => {
    // Stalled for an hour: the headers come, the body does not.
    sim.setFaults({ stallMs: 3600_000 });
    const ac = new AbortController();
    const headers = await fetch(`${sim.url}/api/v1/metrics`, { signal: ac.signal });
    expect(headers.status).toBe(200);
    ac.abort();
    // Stalled for 400 ms: the whole body follows, no sooner.
    sim.setFaults({ stallMs: 400 });
    const r = await rawGet(`${sim.url}/api/v1/metrics`);
    expect(r.status).toBe(200);
    expect(r.msToEnd).toBeGreaterThanOrEqual(380);
    expect(JSON.parse(r.body.toString()).data.length).toBeGreaterThan(0);
  });

  it('pads bodies to a huge size, still valid JSON', async () => {
    sim.setFaults({ hugeBodyBytes: 3_000_000 });
    const r = await rawGet(`${sim.url}/api/v1/metrics`);
    expect(r.body.length).toBe(3_000_000);
    expect(Number(r.headers['content-length'])).toBe(3_000_000);
    expect(JSON.parse(r.body.toString()).meta.count).toBeGreaterThan(0);
  });

  it('streams an endless body until the client hangs up, and keeps serving', async () => {
    sim.setFaults({ endlessBody: true, pathFilter: '/api/v1/screener' });
    const ac = new AbortController();
    const res = await fetch(`${sim.url}/api/v1/screener`, { signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = res.body?.getReader();
    let bytes = 0;
    while (reader && bytes < 2_000_000) {
      const { value, done } = await reader.read();
      if (done) break;
      bytes += value.length;
    }
    ac.abort();
    expect(bytes).toBeGreaterThanOrEqual(2_000_000);
    expect((await get(`${sim.url}/api/v1/tokens`)).status).toBe(200);
  });

  it('skews the Date header', async () => {
    sim.setFaults({ dateSkewMs: 3_600_000 });
    const before = Date.now();
    const r = await get(`${sim.url}/api/v1/metrics`);
    const after = Date.now();
    // An hour ahead of the moment it answered (in whole seconds), somewhere in the request.
    const date = Date.parse(r.headers.get('date') ?? '');
    expect(date).toBeGreaterThanOrEqual(Math.floor((before + 3_600_000) / 1000) * 1000);
    expect(date).toBeLessThanOrEqual(after + 3_600_000);
  });
});
