// TE_HISTORY_FULL_REFETCH_DAYS: a token's history is fetched from the overlap until its last
// whole fetch is older than the setting, then whole again (revisions older than the overlap).
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { createTestLogger } from '../../helpers/services.ts';

const testLog = createTestLogger([]);

describe('the periodic whole history fetch', () => {
  const fx = useSimAndWarehouse({ tokens: 3, historyDays: 20, chartsPerToken: 1 });

  /** The history requests of the last sync: whole (no date filter) or from a day. */
  const historyAsks = () => fx.sim.requests.filter((r) => r.path.includes('/metrics/history')).map((r) => (r.path.includes('from=') ? 'from' : 'whole'));
  /** Every token's last whole fetch made `days` ago. */
  const lastWholeFetch = (days: number) =>
    fx.warehouse.query(sql`update sync.resource_state set details = details || jsonb_build_object('lastFullAt', to_jsonb(now() - make_interval(days => ${days}))) where source = 'app' and kind = 'history'`);
  const sync = async (days?: string) => {
    fx.sim.resetRequests();
    const run = await fx.sync(testLog.logger, { env: days ? { TE_HISTORY_FULL_REFETCH_DAYS: days } : {} }, ['app'], { full: false });
    expect(run.status).toBe('succeeded');
    return historyAsks();
  };

  it('asks from the overlap while the whole fetch is recent, and whole once it is older than the setting', async () => {
    expect(new Set(await sync())).toEqual(new Set(['whole']));
    // Markers unchanged would skip the histories: make them look changed.
    const unmark = () => fx.warehouse.query(sql`update sync.resource_state set freshness = 'older' where source = 'app' and kind = 'history'`);
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
