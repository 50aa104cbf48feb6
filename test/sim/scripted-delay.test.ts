// A scripted answer held back (`ScriptedResponse.delayMs`): that one request waits, unanswered
// and recorded as pending, then gets its answer; the requests after it are not held.
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { patience } from '../helpers/patience.ts';
import { get } from './support.ts';

// expect.poll gives up after a second unless told: a hang guard, scaled like every other.
const POLL = { timeout: patience(5_000) };

const sims: Simulator[] = [];
afterEach(async () => {
  for (const s of sims.splice(0)) await s.close();
});

async function start(): Promise<Simulator> {
  const sim = await startSimulator({ tokens: 3, historyDays: 5 });
  sims.push(sim);
  return sim;
}

describe('a held scripted answer', () => {
  it('holds only its own request, at least delayMs, then answers it as scripted (a 2xx without body: normally)', async () => {
    const sim = await start();
    const HOLD_MS = 400;
    sim.script('/api/v1/tokens', [{ status: 200, delayMs: HOLD_MS, headers: { 'X-Held': 'yes' } }]);
    const order: string[] = [];
    const sent = Date.now();
    const held = get(`${sim.url}/api/v1/tokens`).then((r) => (order.push('held'), { r, at: Date.now() }));
    // The held request is in, waiting: recorded with no status yet.
    await expect.poll(() => sim.requests.map((r) => r.status), POLL).toEqual([0]);
    const next = await get(`${sim.url}/api/v1/tokens`);
    order.push('next');
    expect(next.status).toBe(200);
    expect(next.headers.get('x-held')).toBeNull();
    const { r, at } = await held;
    // The one after it was answered first: only the scripted request waits.
    expect(order).toEqual(['next', 'held']);
    // A lower bound: the hold is the behaviour, and a slower machine only lengthens it (less a
    // little for timers that round to the millisecond).
    expect(at - sent).toBeGreaterThanOrEqual(HOLD_MS - 5);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-held')).toBe('yes');
    expect(r.json.data).toEqual(next.json.data);
    expect(sim.requests.map((x) => x.status)).toEqual([200, 200]);
  });

  it('holds a scripted problem the same way', async () => {
    const sim = await start();
    sim.script('/api/v1/screener', [{ status: 429, retryAfter: '1', delayMs: 200 }]);
    const held = get(`${sim.url}/api/v1/screener`);
    await expect.poll(() => sim.requests.map((r) => r.status), POLL).toEqual([0]);
    const r = await held;
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('1');
  });

  it('close() ends a hold: the request is never answered', async () => {
    const sim = await start();
    sim.script('/api/v1/tokens', [{ status: 200, delayMs: 600_000 }]);
    const held = fetch(`${sim.url}/api/v1/tokens`).then(
      (r) => r.status,
      () => 'no answer',
    );
    await expect.poll(() => sim.requests.length, POLL).toBe(1);
    await sim.close();
    expect(await held).toBe('no answer');
    expect(sim.requests[0]!.status).toBe(0);
  });

  it('refuses a delay that is not a whole number of milliseconds >= 0', async () => {
    const sim = await start();
    expect(() => sim.script('/api/v1/tokens', [{ status: 200, delayMs: -1 }])).toThrow(RangeError);
    expect(() => sim.script('/api/v1/tokens', [{ status: 200, delayMs: 1.5 }])).toThrow(RangeError);
  });
});
