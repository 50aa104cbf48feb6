// The replay leg (replay-leg.ts) on a few tokens: a first sync with nothing to wait for, its
// archive replayed into another database, timed, and the replay compared with the warehouse.
// The figure itself comes from the bench's 100 tokens (npm run bench); here only that it is
// measured, of what, and that the replay it times is equal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../sim/index.ts';
import { patience } from '../helpers/patience.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/services.ts';
import { replayLine, REPLAY_LIMIT, runReplayLeg } from './replay-leg.ts';
import { DEFAULT_SCENARIO, simOptions, type Scenario } from './scenario.ts';

const scenario: Scenario = { ...DEFAULT_SCENARIO, tokens: 3, historyDays: 20, chartsPerToken: 1, latencyMs: [0, 0], pageSize: 0, budgets: { appPublic: null, appKey: null, gateway: null } };

describe('the replay leg', () => {
  let sim: Simulator;
  let source: TestDatabase;
  let target: TestDatabase;
  beforeAll(async () => {
    sim = await startSimulator(simOptions(scenario));
    source = await createTestDatabase({ migrated: true });
    target = await createTestDatabase({ migrated: true });
  }, patience(60_000));
  afterAll(async () => {
    await source?.drop();
    await target?.drop();
    await sim?.close();
  });

  it('times the replay of a first sync against the sync, and finds the replay equal', async () => {
    const lines: string[] = [];
    const r = await runReplayLeg({ scenario, simUrl: sim.url, sourceUrl: source.databaseUrl, targetUrl: target.databaseUrl, check: true, log: (l) => lines.push(l) });
    console.log(replayLine(r));
    expect(r).toMatchObject({ tokens: 3, syncStatus: 'succeeded', limit: REPLAY_LIMIT, equal: true });
    expect(r.writes).toBeGreaterThan(20);
    expect(r.bodies).toBeGreaterThan(20);
    expect(r.syncMs).toBeGreaterThan(0);
    expect(r.replayMs).toBeGreaterThan(0);
    expect(r.ratio).toBeCloseTo(r.replayMs / r.syncMs, 6);
    expect(r.met).toBe(r.ratio <= REPLAY_LIMIT);
    expect(replayLine(r)).toMatch(/^replay of the first sync of 3 tokens: [\d.]+ s against the sync's [\d.]+ s, ratio [\d.]+ \(limit 1\.5, equal(, FAILED)?\)$/);
    expect(lines.at(-1)).toMatch(/^replay: \d+ writes of \d+ bodies replayed in [\d.]+ s$/);
  }, patience(180_000));
});
