// Recomputations (sim/recompute.ts): every asOf and generatedAt moved, nothing else; and over
// HTTP, two responses of one epoch that differ in those instants (and servedAt) alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'lossless-json';
import { movedInstant, recomputed } from '../../sim/recompute.ts';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { num } from '../../sim/json.ts';

/** `v` with every asOf, generatedAt and servedAt replaced by a placeholder. */
function withoutInstants(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutInstants);
  if (v === null || typeof v !== 'object' || Object.getPrototypeOf(v) !== Object.prototype) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, ['asOf', 'generatedAt', 'servedAt'].includes(k) ? '*' : withoutInstants(x)]));
}

describe('recomputed (pure)', () => {
  it('moves every asOf and generatedAt, a date-only one as that day\'s timestamp, and nothing else', () => {
    const n = num('1.50');
    const body = { data: [{ value: n, asOf: '2026-06-30T00:00:00.000Z', freshness: { generatedAt: '2026-06-30T06:10:00.000Z', status: 'fresh' }, lastDate: '2026-06-30' }], meta: { asOf: '2026-06-30', servedAt: 's', count: 1 } };
    const out = recomputed(body, 3) as typeof body;
    expect(out.data[0]!.asOf).toBe('2026-06-30T00:03:00.000Z');
    expect(out.data[0]!.freshness.generatedAt).toBe('2026-06-30T06:13:00.000Z');
    expect(out.meta.asOf).toBe('2026-06-30T00:03:00.000Z');
    expect(out.data[0]!.value).toBe(n);
    expect(withoutInstants(out)).toEqual(withoutInstants(body));
    expect(recomputed(body, 0)).toBe(body);
    expect(movedInstant('not a time', 5)).toBe('not a time');
  });
});

describe('recomputations over HTTP', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ tokens: 3, historyDays: 5, chartsPerToken: 1, gatewayKeys: ['sim_gw_key_0001'] });
  });
  afterAll(async () => sim?.close());
  const get = async (path: string) => parse(await (await fetch(`${sim.url}${path}`, { headers: { Authorization: 'Bearer sim_gw_key_0001' } })).text());

  it('serves the same data under moved instants, per recomputation and per response', async () => {
    for (const path of ['/api/v1/tokens', '/api/v1/screener', '/api/v1/tokens/aurora', '/v1/screener', '/v1/tokens/aurora']) {
      sim.setRecomputation(0);
      const a = await get(path);
      sim.setRecomputation(1);
      const b = await get(path);
      sim.setRecomputation('eachResponse');
      const [c, d] = [await get(path), await get(path)];
      expect(JSON.stringify(b), path).not.toBe(JSON.stringify(a));
      expect(JSON.stringify(c), path).not.toBe(JSON.stringify(d));
      for (const x of [b, c, d]) expect(withoutInstants(x), path).toEqual(withoutInstants(a));
    }
  });
});
