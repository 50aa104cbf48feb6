// linkToBodies (src/engine/provenance.ts), with the simulator and a real archive: each row links
// to its own page's body, else its write's, else the last the job read; no archived body, no
// link; a table without the column keeps its rows as they are.
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { afterAll, describe, expect, it } from 'vitest';
import { fetchData } from '../../src/engine/fetch.ts';
import { linkToBodies } from '../../src/engine/provenance.ts';
import { into, type TableWrite } from '../../src/engine/types.ts';
import { metricCatalog } from '../../src/schema/upstream/app.ts';
import { metrics } from '../../src/schema/warehouse/app.ts';
import { resourceState } from '../../src/schema/warehouse/sync.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { jobContext, testRun } from '../helpers/job-context.ts';

const sa = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1 });
let close: (() => Promise<void>) | undefined;
afterAll(async () => close?.());

const rows = () => [
  { slug: 'm1', payload: {} },
  { slug: 'm2', payload: {} },
];
const linksOf = (w: TableWrite<any>) => (w.rows as { rawResponseId?: number | null }[]).map((r) => r.rawResponseId);

describe('linkToBodies', () => {
  it('links each row to its own body, its write\'s, or the last read; nothing where no archived body is named', async () => {
    const t = testRun(sa.sim, sa.warehouse);
    close = () => t.recorder.close();
    const ctx = jobContext(t.run);
    const catalog = (await fetchData(ctx, { route: 'app.metrics' }, metricCatalog)).response;
    const list = (await fetchData(ctx, { route: 'app.tokens' }, z.array(z.unknown()))).response;
    // The archive the recorder wrote (archivedIds writes what is pending first).
    const idOf = async (path: string) => (await sa.warehouse.query<{ id: number }>(sql`select id::int as id from sync.raw_responses where path = ${path} and status = 'ok'`))[0]?.id;

    const writes: TableWrite<any>[] = [
      into(metrics, rows()),
      into(metrics, rows(), { from: catalog }),
      into(metrics, rows(), { from: catalog, fromEach: [list, undefined] }),
      into(metrics, rows(), { from: null }),
      into(metrics, rows(), { from: { path: '/api/v1/metrics?never', sha256: 'f'.repeat(64) } }),
      into(resourceState, [{ source: 'app', resource: 'x', status: 'ok' }]),
    ];
    const ids = await linkToBodies(ctx, 'app', writes);
    const [catalogId, listId] = [await idOf('/api/v1/metrics'), await idOf('/api/v1/tokens')];
    expect(catalogId).toEqual(expect.any(Number));
    expect(listId).toEqual(expect.any(Number));
    expect(catalogId).not.toBe(listId);

    // Per write: the body that also closes what it removes.
    expect(ids).toEqual([listId, catalogId, catalogId, null, null, listId]);
    expect(writes.slice(0, 5).map(linksOf)).toEqual([
      [listId, listId],
      [catalogId, catalogId],
      [listId, catalogId],
      [null, null],
      [null, null],
    ]);
    expect(writes[5]!.rows[0]).not.toHaveProperty('rawResponseId');
  });

  it('links nothing when the job read nothing', async () => {
    const t = testRun(sa.sim, sa.warehouse);
    const ctx = jobContext(t.run);
    const w: TableWrite<any> = into(metrics, rows());
    expect(await linkToBodies(ctx, 'app', [w])).toEqual([null]);
    expect(linksOf(w)).toEqual([null, null]);
    await t.recorder.close();
  });
});
