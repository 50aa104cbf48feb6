// Advisory locks belong to one database: syncs of other warehouses on the same server, holding
// the same source's lock there, are never named as the holder here.
import { afterAll, describe, expect, it } from 'vitest';
import { lockSources, type SourceLocks } from '../../../src/store/books/source-lock.ts';
import { useTestWarehouse, type BlockWarehouse } from '../../helpers/mirror-fixture.ts';
import { createTestLogger } from '../../helpers/services.ts';

describe('the sync lock of one warehouse among several on a server', () => {
  const warehouses = [1, 2, 3, 4].map(() => useTestWarehouse());
  const held: SourceLocks[] = [];
  const { logger } = createTestLogger();
  afterAll(async () => {
    for (const l of held) await l.release();
  });

  it("names this warehouse's holder, whatever the others hold", async () => {
    const [here, ...others] = warehouses as [BlockWarehouse, ...BlockWarehouse[]];
    // One sync here holds the app lock, then three other warehouses' syncs hold theirs.
    const holder = await lockSources(here, ['app'], { runId: 'holder-here', logger });
    held.push(holder);
    expect(holder.held).toEqual(['app']);
    for (const [i, w] of others.entries()) {
      const l = await lockSources(w, ['app'], { runId: `elsewhere-${i}`, logger });
      held.push(l);
      expect(l.held).toEqual(['app']);
    }
    const second = await lockSources(here, ['app'], { runId: 'second-here', logger });
    held.push(second);
    expect(second.held).toEqual([]);
    expect(second.busy.map((b) => ({ source: b.source, runId: b.runId }))).toEqual([{ source: 'app', runId: 'holder-here' }]);
  });
});
