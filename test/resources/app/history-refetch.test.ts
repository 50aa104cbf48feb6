// TE_HISTORY_FULL_REFETCH_DAYS: a token's history is fetched from the overlap until its last
// whole fetch is older than the setting, then whole again (revisions older than the overlap).
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../sim/index.ts';
import { createTestLogger, createTestWarehouse, type TestWarehouse } from '../../helpers/services.ts';
import { syncOnce } from '../../helpers/sync.ts';

const testLog = createTestLogger([]);

describe('the periodic whole history fetch', () => {
  let sim: Simulator;
  let tw: TestWarehouse;
  beforeAll(async () => {
    sim = await startSimulator({ tokens: 3, historyDays: 20, chartsPerToken: 1 });
    tw = await createTestWarehouse();
  });
  afterAll(async () => {
    await sim?.close();
    await tw?.cleanup();
  });

  /** The history requests of the last sync: whole (no date filter) or from a day. */
  const historyAsks = () => sim.requests.filter((r) => r.path.includes('/metrics/history')).map((r) => (r.path.includes('from=') ? 'from' : 'whole'));
  /** Every token's last whole fetch made `days` ago. */
  const lastWholeFetch = (days: number) =>
    tw.warehouse.query(sql`update sync.resource_state set details = details || jsonb_build_object('lastFullAt', to_jsonb(now() - make_interval(days => ${days}))) where source = 'app' and kind = 'history'`);
  const sync = async (days?: string) => {
    sim.resetRequests();
    const run = await syncOnce(sim, tw.warehouse, testLog.logger, { env: days ? { TE_HISTORY_FULL_REFETCH_DAYS: days } : {} }, ['app'], { full: false });
    expect(run.status).toBe('succeeded');
    return historyAsks();
  };

  it('asks from the overlap while the whole fetch is recent, and whole once it is older than the setting', async () => {
    expect(new Set(await sync())).toEqual(new Set(['whole']));
    // Markers unchanged would skip the histories: make them look changed.
    const unmark = () => tw.warehouse.query(sql`update sync.resource_state set freshness = 'older' where source = 'app' and kind = 'history'`);
    await unmark();
    await lastWholeFetch(2);
    expect(new Set(await sync())).toEqual(new Set(['from']));
    await unmark();
    await lastWholeFetch(2);
    expect(new Set(await sync('1'))).toEqual(new Set(['whole']));
    await unmark();
    await lastWholeFetch(8);
    expect(new Set(await sync())).toEqual(new Set(['whole']));
  });
});
