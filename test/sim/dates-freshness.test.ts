// `lastDate` moves every date the simulator serves; `freshness` gives every token one verdict.
// Without them the data is as before: last day ANCHOR_DATE, verdicts as seeded.
import { afterEach, describe, expect, it } from 'vitest';
import { ANCHOR_DATE, startSimulator, type Simulator } from '../../sim/index.ts';
import { get } from './support.ts';

const auth = { authorization: 'Bearer gw' };
let sims: Simulator[] = [];
const start = async (o: Parameters<typeof startSimulator>[0]) => {
  const s = await startSimulator({ tokens: 12, historyDays: 10, chartsPerToken: 1, gatewayKeys: ['gw'], ...o });
  sims.push(s);
  return s;
};
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()));
  sims = [];
});

describe('simulator dates and freshness', () => {
  it('serves ANCHOR_DATE as the last day, and verdicts as seeded, by default', async () => {
    const sim = await start({});
    expect(sim.data.lastDate).toBe(ANCHOR_DATE);
    const tokens = (await get(`${sim.url}/api/v1/tokens`)).json;
    expect(tokens.meta.asOf.slice(0, 10)).toBe(ANCHOR_DATE);
    const verdicts = (tokens.data as { slug: string; freshness: { status: string } }[]).map((t) => [t.slug, t.freshness.status]);
    expect(verdicts.filter(([, v]) => v === 'stale').map(([s]) => s)).toEqual(['ferrous']);
  });

  it('lastDate moves the last day, the first day and asOf on both APIs, at every epoch', async () => {
    const sim = await start({ lastDate: '2026-11-20', epoch: 1 });
    expect(sim.data.lastDate).toBe('2026-11-21');
    expect(sim.data.firstDate).toBe('2026-11-11');
    const app = (await get(`${sim.url}/api/v1/tokens/aurora/metrics/history`)).json;
    expect(app.meta.asOf.slice(0, 10)).toBe('2026-11-21');
    const gw = (await get(`${sim.url}/v1/tokens/aurora/metrics/history?period=30d`, auth)).json;
    expect(gw.meta.asOf.slice(0, 10)).toBe('2026-11-21');
    expect(JSON.stringify(gw.data)).toContain('2026-11-21');
    expect(JSON.stringify(gw.data)).not.toContain(ANCHOR_DATE);
  });

  it('freshness gives every token the verdict, on every route that carries one', async () => {
    const sim = await start({ freshness: 'stale' });
    const tokens = (await get(`${sim.url}/api/v1/tokens`)).json.data as { freshness: { status: string } }[];
    expect(new Set(tokens.map((t) => t.freshness.status))).toEqual(new Set(['stale']));
    const screener = (await get(`${sim.url}/v1/screener`, auth)).json.data as { dataFreshness: string }[];
    expect(screener.length).toBeGreaterThan(5);
    expect(new Set(screener.map((r) => r.dataFreshness))).toEqual(new Set(['stale']));
    const fresh = await start({ freshness: 'fresh' });
    const all = (await get(`${fresh.url}/api/v1/tokens`)).json.data as { freshness: { status: string } }[];
    expect(new Set(all.map((t) => t.freshness.status))).toEqual(new Set(['fresh']));
  });

  it('refuses a date that is not a calendar day, and an unknown verdict', async () => {
    await expect(startSimulator({ lastDate: '2026-02-30' })).rejects.toThrow(/lastDate must be a date YYYY-MM-DD/);
    await expect(startSimulator({ freshness: 'old' as 'stale' })).rejects.toThrow(/freshness must be 'fresh' or 'stale'/);
  });
});
