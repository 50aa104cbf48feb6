// fetchList (src/engine/fetch/fetch-list.ts), against the simulator: next pages followed (a link, a
// cursor) to the last, each item with its page; a response without a list as it is; a list
// whose links or bodies loop refused whole, every page's body kept in the findings (a repeated
// body not archived twice); a list that says it holds more, or runs past the bound on pages
// or its byte budget, returned incomplete, naming why, nothing refused.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { beforeEach, describe, expect, it } from 'vitest';
import { disagreement, fetchList, MAX_PAGES } from '../../../src/engine/fetch/fetch-list.ts';
import { sql } from 'drizzle-orm';
import { InvalidResponseError, ResponseTooLargeError } from '../../../src/lib/errors.ts';
import { useSimAndWarehouse } from '../../helpers/mirror-fixture.ts';
import { useTestRuns } from '../../helpers/job-context.ts';

const sa = useSimAndWarehouse({ tokens: 3, historyDays: 5, chartsPerToken: 1 });
const start = useTestRuns(sa);
beforeEach(() => sa.sim.resetRequests());

const LIST = z.array(z.unknown());
const page = (data: unknown[], rest: Record<string, unknown> = {}) => [{ status: 200, body: JSON.stringify({ data, ...rest, meta: { asOf: '2026-06-30T00:00:00Z', ...(rest.meta as object) } }) }];
const tokens = (...slugs: string[]) => slugs.map((slug) => ({ slug }));
const requested = () => sa.sim.requests.map((r) => r.path);

describe('fetchList', () => {
  it('follows a next link, then a cursor, to the page that names none: the items in order, each with its page', async () => {
    const t = start();
    sa.sim.script('/api/v1/tokens?page=2', page(tokens('c', 'd'), { nextCursor: 'p3' }));
    sa.sim.script('/api/v1/tokens?cursor=p3', page(tokens('e')));
    sa.sim.script('/api/v1/tokens', page(tokens('a', 'b'), { meta: { next: '/api/v1/tokens?page=2', count: 2 } }));
    const list = await fetchList(t.ctx, { route: 'app.tokens' }, LIST);
    expect(requested()).toEqual(['/api/v1/tokens', '/api/v1/tokens?page=2', '/api/v1/tokens?cursor=p3']);
    expect(list.items).toEqual(tokens('a', 'b', 'c', 'd', 'e'));
    expect(list.pages.map((p) => p.path)).toEqual(requested());
    expect(list.count).toBe(5);
    expect(list.meta.count).toBe(2);
    expect(list.meta.raw.next).toBe('/api/v1/tokens?page=2');
    expect(list.sha256).toBe(createHash('sha256').update(list.pages.map((p) => p.sha256).join('\n')).digest('hex'));
    expect(list.items!.map((i) => list.pageOf(i)?.path)).toEqual(['/api/v1/tokens', '/api/v1/tokens', '/api/v1/tokens?page=2', '/api/v1/tokens?page=2', '/api/v1/tokens?cursor=p3']);
    expect(list.pageOf({ slug: 'a' })).toBeUndefined();
    expect(t.ctx.findings.understood).toEqual(list.pages);
    expect(t.ctx.findings.refused).toEqual([]);
  });

  it('returns a single response without a list as it is: no items, its own hash', async () => {
    const t = start();
    const list = await fetchList(t.ctx, { route: 'app.token', params: { slug: 'aurora' } }, z.looseObject({}), () => undefined);
    expect(list.items).toBeUndefined();
    expect(list.pages.map((p) => p.path)).toEqual(['/api/v1/tokens/aurora']);
    expect(list.sha256).toBe(list.pages[0]!.sha256);
    expect((list.body.data as { token?: { slug?: string } }).token?.slug).toBe('aurora');
  });

  it('refuses a list whose next link loops, before asking again: both pages kept, one warning', async () => {
    const t = start();
    sa.sim.script('/api/v1/tokens?page=2', page(tokens('b'), { links: { next: '/api/v1/tokens?page=2' } }));
    sa.sim.script('/api/v1/tokens', page(tokens('a'), { links: { next: '/api/v1/tokens?page=2' } }));
    const err = await fetchList(t.ctx, { route: 'app.tokens' }, LIST).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as Error).message).toBe('/api/v1/tokens?page=2: page 2 names a next page named before: the next links loop');
    expect(requested()).toEqual(['/api/v1/tokens', '/api/v1/tokens?page=2']);
    expect(t.ctx.findings.refused.map((r) => r.path)).toEqual(['/api/v1/tokens', '/api/v1/tokens?page=2']);
    expect(t.log.lines().filter((l) => l.includes('"level":40'))).toHaveLength(1);
  });

  it('a list read to its end that says it holds more, or whose last page or the object holding its items says more exist: incomplete, nothing refused', async () => {
    const t = start();
    sa.sim.script('/api/v1/tokens?page=2', page(tokens('c'), { meta: { total: 4 } }));
    sa.sim.script('/api/v1/tokens', page(tokens('a', 'b'), { meta: { next: '/api/v1/tokens?page=2', total: 4 } }));
    const list = await fetchList(t.ctx, { route: 'app.tokens' }, LIST);
    expect(list.items).toEqual(tokens('a', 'b', 'c'));
    expect(list.incomplete).toBe('meta.total = 4, 3 items read');
    expect(t.ctx.findings.refused).toEqual([]);

    const u = start();
    sa.sim.script('/api/v1/tokens', page(tokens('a'), { meta: { hasMore: true } }));
    expect((await fetchList(u.ctx, { route: 'app.tokens' }, LIST)).incomplete).toBe('meta.hasMore = true');

    const v = start();
    sa.sim.script('/api/v1/tokens/aurora/charts', page([], { data: undefined }).map((r) => ({ ...r, body: JSON.stringify({ data: { items: [{ key: 'k' }], nextPageCursor: 'c2' }, meta: {} }) })));
    const charts = await fetchList(v.ctx, { route: 'app.charts', params: { slug: 'aurora' } }, z.unknown(), (d) => (d as { items: unknown[] }).items);
    expect(charts.items).toEqual([{ key: 'k' }]);
    expect(charts.incomplete).toBe('data.nextPageCursor = "c2"');
  });

  it('a list whose distinct next links never end stops at the bound on pages: incomplete, what was read returned, nothing refused', async () => {
    expect(MAX_PAGES).toBe(1000);
    const t = start();
    const bound = 4;
    // Each page names a next page never seen before; the bound is all that stops the reading.
    for (let n = 1; n <= bound; n++) sa.sim.script(n === 1 ? '/api/v1/tokens' : `/api/v1/tokens?page=${n}`, page(tokens(`t${n}`), { links: { next: `/api/v1/tokens?page=${n + 1}` } }));
    const list = await fetchList(t.ctx, { route: 'app.tokens' }, LIST, undefined, { maxPages: bound });
    expect(list.incomplete).toBe('page 4 names a next page: the list has more than 4 pages (the bound on pages), read no further');
    expect(list.items).toEqual(tokens('t1', 't2', 't3', 't4'));
    expect(requested()).toEqual(['/api/v1/tokens', '/api/v1/tokens?page=2', '/api/v1/tokens?page=3', '/api/v1/tokens?page=4']);
    expect(t.ctx.findings.refused).toEqual([]);
  });

  it('stops at its byte budget: the page past it neither read nor archived, the list incomplete', async () => {
    const t = start();
    const bodies: string[] = [];
    for (let n = 1; n <= 6; n++) {
      const body = JSON.stringify({ data: tokens(`budget-${n}`), links: { next: `/api/v1/tokens?page=${n + 1}` }, meta: { asOf: '2026-06-30T00:00:00Z' } });
      bodies.push(body);
      sa.sim.script(n === 1 ? '/api/v1/tokens' : `/api/v1/tokens?page=${n}`, [{ status: 200, body }]);
    }
    // Room for three pages and a half: the fourth is larger than what is left.
    const budget = bodies.slice(0, 3).reduce((a, b) => a + Buffer.byteLength(b), 0) + Math.floor(Buffer.byteLength(bodies[3]!) / 2);
    const list = await fetchList(t.ctx, { route: 'app.tokens' }, LIST, undefined, { maxBytes: budget });
    expect(list.items).toEqual(tokens('budget-1', 'budget-2', 'budget-3'));
    expect(list.incomplete).toBe(`the list's bodies reached its byte budget of ${budget} bytes (TE_MAX_LIST_BYTES) after page 3: read no further`);
    await t.recorder.flush();
    const archived = await sa.warehouse.query<{ path: string; n: number }>(sql`select path, count(*)::int as n from sync.raw_responses where run_id = ${t.run.runId} group by path order by path`);
    expect(t.log.lines().filter((l) => l.includes('could not')), 'recorded').toEqual([]);
    expect(archived).toEqual(['/api/v1/tokens', '/api/v1/tokens?page=2', '/api/v1/tokens?page=3'].map((path) => ({ path, n: 1 })));

    // A first page larger than the whole budget: nothing to store, the list fails naming the budget.
    const u = start();
    const err = await fetchList(u.ctx, { route: 'app.tokens' }, LIST, undefined, { maxBytes: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResponseTooLargeError);
    expect((err as Error).message).toMatch(/exceeds the limit of 10 bytes \(TE_MAX_LIST_BYTES\)$/);
  });

  it('refuses a list whose page repeats an earlier page\'s body: a loop, the repeated body not archived again', async () => {
    const t = start();
    const body = JSON.stringify({ data: tokens('loop-a'), links: { next: '/api/v1/tokens?page=2' }, meta: { asOf: '2026-06-30T00:00:00Z' } });
    // Page 2 answers with page 1's very body (a server that ignores the page asked).
    sa.sim.script('/api/v1/tokens?page=2', [{ status: 200, body }]);
    sa.sim.script('/api/v1/tokens', [{ status: 200, body }]);
    const err = await fetchList(t.ctx, { route: 'app.tokens' }, LIST).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as Error).message).toBe("/api/v1/tokens: page 2 (/api/v1/tokens?page=2) is page 1's body again: the pages loop");
    expect(requested()).toEqual(['/api/v1/tokens', '/api/v1/tokens?page=2']);
    expect(t.ctx.findings.refused.map((r) => r.path)).toEqual(['/api/v1/tokens']);
    await t.recorder.flush();
    const archived = await sa.warehouse.query<{ path: string }>(sql`select path from sync.raw_responses where run_id = ${t.run.runId} and status = 'ok'`);
    expect(archived.map((r) => r.path)).toEqual(['/api/v1/tokens']);
  });
});

describe('disagreement: pages of one read that say the list changed', () => {
  const page = (items: unknown[], total?: number) => ({ items, signals: { nexts: [], more: false, total } });
  const slug = (i: unknown) => (i as { slug: string }).slug;
  it('agreeing pages, or a single one, are no disagreement', () => {
    expect(disagreement([page([{ slug: 'a' }], 3)])).toBeNull();
    expect(disagreement([page([{ slug: 'a' }], 2), page([{ slug: 'b' }], 2)], slug)).toBeNull();
  });
  it('totals that differ between pages', () => {
    expect(disagreement([page([{ slug: 'a' }], 14), page([{ slug: 'b' }], 13)])).toBe("its pages disagree on the list's total (14 vs 13)");
  });
  it('one key on two pages, found only when the list says how to key its items', () => {
    const pages = [page([{ slug: 'a' }, { slug: 'b' }]), page([{ slug: 'b' }, { slug: 'c' }])];
    expect(disagreement(pages)).toBeNull();
    expect(disagreement(pages, slug)).toBe('item "b" is on page 1 and on page 2');
  });
});
