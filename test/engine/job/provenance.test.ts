// linkProvisionally and linkToBodies (src/engine/job/provenance.ts), with the simulator and real
// raw responses: each row links to its own page's body, else its write's, else the last the job
// read; no archived body, no link; a table without the column keeps its rows as they are. And a
// body the archive cannot keep, through whole syncs.
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { afterAll, describe, expect, it } from 'vitest';
import { fetchData } from '../../../src/engine/fetch/fetch.ts';
import { linkProvisionally, linkToBodies } from '../../../src/engine/job/provenance.ts';
import { into, type TableWrite } from '../../../src/engine/kit/types.ts';
import { metricCatalog } from '../../../src/schema/upstream/app.ts';
import { metrics } from '../../../src/schema/warehouse/app.ts';
import { resourceState } from '../../../src/schema/warehouse/sync.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { jobContext, testRun } from '../../helpers/job-context.ts';
import { createTestLogger } from '../../helpers/services.ts';

const sa = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1 });
let close: (() => Promise<void>) | undefined;
afterAll(async () => close?.());

const rows = () => [
  { slug: 'm1', payload: {} },
  { slug: 'm2', payload: {} },
];
const linksOf = (w: TableWrite<any>) => (w.rows as { rawResponseId?: number | null }[]).map((r) => r.rawResponseId);
const sending = (writes: readonly TableWrite<any>[]) => writes.map((w) => w.rows as Record<string, unknown>[]);

describe('linkToBodies', () => {
  it('links each row to its own body, its write\'s, or the last read; nothing where no archived body is named', async () => {
    const t = testRun(sa.sim, sa.warehouse);
    close = () => t.recorder.close();
    const ctx = jobContext(t.run);
    const catalog = (await fetchData(ctx, { route: 'app.metrics' }, metricCatalog)).response;
    const list = (await fetchData(ctx, { route: 'app.tokens' }, z.array(z.unknown()))).response;
    const ids = await t.recorder.rawResponseIds('app', [catalog, list]);
    const [catalogId, listId] = [ids.get(`${catalog.path}\u0000${catalog.sha256}`), ids.get(`${list.path}\u0000${list.sha256}`)];
    expect(catalogId).toEqual(expect.any(Number));
    expect(listId).toEqual(expect.any(Number));
    expect(catalogId).not.toBe(listId);

    const writes: TableWrite<any>[] = [
      into(metrics, rows()),
      into(metrics, rows(), { from: catalog }),
      into(metrics, rows(), { from: catalog, fromEach: [list, undefined] }),
      into(metrics, rows(), { from: null }),
      into(metrics, rows(), { from: { path: '/api/v1/metrics?unchanged', sha256: '' } }),
      into(resourceState, [{ source: 'app', resource: 'x', status: 'ok' }]),
    ];
    // Before the write, rows name their bodies by place (no id is negative): rows of two bodies stay apart.
    const links = linkProvisionally(ctx.findings.understood, writes);
    expect(links.bodies.map((b) => b.path)).toEqual(['/api/v1/tokens', '/api/v1/metrics']);
    expect(linksOf(writes[2]!)).toEqual([-1, -2]);

    // Per write: the body that also closes what it removes.
    expect(linkToBodies(links, ids, sending(writes))).toEqual([listId, catalogId, catalogId, null, null, listId]);
    expect(writes.slice(0, 5).map(linksOf)).toEqual([
      [listId, listId],
      [catalogId, catalogId],
      [listId, catalogId],
      [null, null],
      [null, null],
    ]);
    expect(writes[5]!.rows[0]).not.toHaveProperty('rawResponseId');

    // A body read but not in the archive refuses the write: no row without its body.
    const lost: TableWrite<any> = into(metrics, rows(), { from: catalog, fromEach: [{ path: '/api/v1/metrics?lost', sha256: 'f'.repeat(64) }, undefined] });
    const lostLinks = linkProvisionally(ctx.findings.understood, [lost]);
    expect(() => linkToBodies(lostLinks, ids, sending([lost]))).toThrow(/could not be archived \(\/api\/v1\/metrics\?lost\): nothing written/);
  });

  it('links nothing when the job read nothing', async () => {
    const t = testRun(sa.sim, sa.warehouse);
    const ctx = jobContext(t.run);
    const w: TableWrite<any> = into(metrics, rows());
    const links = linkProvisionally(ctx.findings.understood, [w]);
    expect(links.bodies).toEqual([]);
    expect(linkToBodies(links, new Map(), sending([w]))).toEqual([null]);
    expect(linksOf(w)).toEqual([null, null]);
    await t.recorder.close();
  });
});

describe('a body the archive could not keep', () => {
  const sb = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1 });
  const HISTORY = '/api/v1/tokens/aurora/metrics/history?stream=all';

  it('refuses the rows read from it; the next sync writes them, each linked to its body', async () => {
    const w = sb.warehouse;
    // The archive refuses one token's history body (a full disk, a lost connection, ...).
    await w.query(sql.raw(`create function sync.test_refuse_body() returns trigger language plpgsql as $$
      begin if new.path = '${HISTORY}' then raise exception 'test: archive unavailable'; end if; return new; end $$`));
    await w.query(sql.raw(`create trigger test_refuse_body before insert on sync.raw_responses for each row execute function sync.test_refuse_body()`));
    const log = createTestLogger([], 'info');
    const history = async () => (await w.query<{ slug: string; n: number; unlinked: number }>(
      sql`select token_slug as slug, count(*)::int as n, count(*) filter (where raw_response_id is null)::int as unlinked from app.metric_history group by 1 order by 1`,
    ));

    // The histories alone (and the token list that plans them): the other resources read no body the archive refuses.
    const first = await sb.sync(log.logger, {}, ['app'], { only: ['history'] });
    expect(first.status).toBe('partial');
    const [state] = await w.query<{ status: string; last_error: string }>(sql`select status, last_error from sync.resource_state where source = 'app' and resource = 'token/aurora/history'`);
    expect(state?.status).toBe('failed');
    expect(state?.last_error).toContain(`could not be archived (${HISTORY}): nothing written`);
    // The other tokens' histories were written, each row with its body; aurora's not at all.
    const before = await history();
    expect(before.map((r) => r.slug)).toEqual(['basalt-finance', 'cobalt-dex']);
    expect(before.every((r) => r.n > 0 && r.unlinked === 0)).toBe(true);

    await w.query(sql.raw(`drop trigger test_refuse_body on sync.raw_responses; drop function sync.test_refuse_body()`));
    const second = await sb.sync(log.logger, {}, ['app'], { only: ['history'] });
    expect(second.status).toBe('succeeded');
    const after = await history();
    expect(after.map((r) => r.slug)).toEqual(['aurora', 'basalt-finance', 'cobalt-dex']);
    expect(after.every((r) => r.n > 0 && r.unlinked === 0)).toBe(true);
  });
});
