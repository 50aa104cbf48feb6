// Lists in pages (contract: "Lists may come in pages"; issue 30). Against the simulator serving
// the token lists, screeners and chart catalogs in pages, in each next-page form and at page
// sizes 1, 7 and beyond the list, every table equals a sync of the same data served whole; a
// list whose pages carry no total is complete when its last page names no next one. In every
// form, the complete list of the next epoch delists exactly the one token upstream dropped.
// A list whose `meta.total` says more than its pages hold is incomplete (`partial`, the sign
// named), one whose next link loops is refused (`invalid`, every page's body kept); neither
// delists anything, and the complete list that follows delists exactly the one token upstream
// dropped.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_FORMS, PAGED_ROUTES, type PageForm } from '../../../sim/index.ts';
import type { Warehouse } from '../../../src/store/connection.ts';
import { freshWarehouse, useSimAndWarehouse, useTestWarehouse } from '../../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../../helpers/services.ts';
import { syncOnce } from '../../helpers/sync.ts';
import { warehouseDigest } from '../../helpers/warehouse-compare.ts';
import { readPageSignals } from '../../../src/engine/fetch/next-page.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const log = createTestLogger([appKey, gatewayKey], 'warn');
const TOKENS = 9;

// The simulator, and the warehouse of the whole lists each case's warehouse is compared with.
const fx = useSimAndWarehouse({ tokens: TOKENS, historyDays: 5, chartsPerToken: 2, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
let whole: Awaited<ReturnType<typeof warehouseDigest>>;
/**
 * The token whose own resources each sync walks: one with charts on both hosts, whose chart
 * catalogs come in pages too. The lists are read whole, every token in them, whatever the
 * walk's tokens: the paging is theirs, and the other tokens' histories and charts would only
 * repeat work no page changes.
 */
let walked: string[];

beforeAll(async () => {
  walked = [fx.sim.data.appTokens().find((t) => (fx.sim.data.appCharts(t.slug) ?? []).length > 1 && (fx.sim.data.gatewayCharts(t.slug) ?? []).length > 1)!.slug];
  expect((await sync(fx.warehouse)).status).toBe('succeeded');
  whole = await warehouseDigest(fx.warehouse);
  expect(whole['app.tokens']!.rows).toBe(TOKENS);
});

/** A warehouse of the case's own, dropped when it ends. */
const fresh = async () => (await freshWarehouse()).warehouse;
const sync = (w: Warehouse) => syncOnce(fx.sim, w, log.logger, { appKey, gatewayKey }, ['app', 'gateway'], { tokens: walked });
const q = <T>(w: Warehouse, query: ReturnType<typeof sql>) => w.query<T>(query);
const requestsTo = (path: string) => fx.sim.requests.filter((r) => r.path.split('?')[0] === path);
const delistedIn = async (w: Warehouse, table: string) => (await q<{ slug: string }>(w, sql.raw(`select slug from ${table} where delisted_at is not null order by slug`))).map((r) => r.slug);
const stateIn = async (w: Warehouse, source: string, resource: string) =>
  (await q<{ status: string; last_error: string | null; incomplete: string | null }>(
    w,
    sql`select status, last_error, details->>'incomplete' as incomplete from sync.resource_state where source = ${source} and resource = ${resource}`,
  ))[0];
const screenerSlugsIn = async (w: Warehouse) =>
  (await q<{ slug: string }>(w, sql`select token_slug as slug from app.screener_rows union all select token_slug from gateway.screener_rows`)).map((r) => r.slug);

/**
 * A sync at epoch 1 in pages (upstream has dropped one token): exactly that token delisted, by
 * both sources. Returns the lengths of the token lists it read.
 */
async function expectExactlyDroppedDelisted(w: Warehouse): Promise<{ app: number; gateway: number }> {
  const gone = fx.sim.data.epochChanges.delistedSlug!;
  expect(gone).toBe('cobalt-dex');
  expect(await screenerSlugsIn(w)).toContain(gone);
  expect(await delistedIn(w, 'app.tokens')).toEqual([]);
  fx.sim.setEpoch(1);
  const lengths = { app: fx.sim.data.appTokens().length, gateway: fx.sim.data.gatewayTokens().length };
  try {
    expect((await sync(w)).status).toBe('succeeded');
  } finally {
    fx.sim.setEpoch(0);
  }
  expect(await delistedIn(w, 'app.tokens')).toEqual([gone]);
  expect(await delistedIn(w, 'gateway.tokens')).toEqual([gone]);
  for (const source of ['app', 'gateway']) {
    expect((await stateIn(w, source, 'tokens'))?.status, source).toBe('ok');
    expect((await stateIn(w, source, 'screener'))?.status, source).toBe('ok');
  }
  expect(await screenerSlugsIn(w)).not.toContain(gone);
  return lengths;
}

/** The warehouses synced at page size 1, one per form, kept for the epoch that delists (`synced`: those the sync filled). */
const atSizeOne = new Map(PAGE_FORMS.map((form) => [form, useTestWarehouse()]));
const synced = new Set<PageForm>();

describe('a list in pages is read whole', () => {
  const sizes: [number, PageForm][] = [...PAGE_FORMS.flatMap((form): [number, PageForm][] => [[1, form], [7, form]]), [TOKENS + 1, 'linkHeader']];
  it("each of the simulator's forms names the next page in a place of the reader's own, no two in the same", async () => {
    const places: Record<string, string[]> = {};
    try {
      for (const form of PAGE_FORMS) {
        fx.sim.setPaging({ pageSize: 1, form });
        const res = await fetch(`${fx.sim.url}/api/v1/tokens`);
        const signals = readPageSignals(await res.json(), Object.fromEntries(res.headers));
        places[form] = signals.nexts.map((n) => n.where);
        expect(signals.more, form).toBe(form === 'topCursor');
      }
    } finally {
      fx.sim.setPaging({ pageSize: 0 });
    }
    expect(places).toEqual({
      metaNext: ['meta.next'],
      linksNext: ['links.next'],
      linkHeader: ['Link header'],
      cursor: ['meta.nextCursor'],
      topNext: ['next'],
      topCursor: ['next_cursor'],
    });
  });
  it.each(sizes)('page size %i, %s: every table as a sync of the whole lists, row for row', async (pageSize, form) => {
    const w = pageSize === 1 ? atSizeOne.get(form)! : await fresh();
    fx.sim.setPaging({ pageSize, form });
    fx.sim.resetRequests();
    try {
      expect((await sync(w)).status).toBe('succeeded');
    } finally {
      fx.sim.setPaging({ pageSize: 0 });
    }
    // Every page was asked, each once, and each page is a request of its own on the budget.
    const pagesOf = (n: number) => Math.max(1, Math.ceil(n / pageSize));
    const lists = { '/api/v1/tokens': fx.sim.data.appTokens().length, '/v1/tokens': fx.sim.data.gatewayTokens().length, '/api/v1/screener': fx.sim.data.appScreenerRows().length };
    for (const [path, n] of Object.entries(lists)) expect(requestsTo(path).map((r) => r.status), path).toEqual(Array(pagesOf(n)).fill(200));
    const [requests] = await q<{ n: string }>(w, sql`select count(*)::text as n from sync.requests where path like '/api/v1/tokens%' and path not like '/api/v1/tokens/%'`);
    expect(Number(requests!.n)).toBe(pagesOf(lists['/api/v1/tokens']));
    // Every page's body archived.
    const [bodies] = await q<{ n: string }>(w, sql`select count(distinct path)::text as n from sync.raw_responses where path like '/v1/screener%' and status = 'ok'`);
    expect(Number(bodies!.n)).toBe(pagesOf(fx.sim.data.gatewayScreenerRows().length));
    expect(await warehouseDigest(w)).toEqual(whole);
    // Each row links to the page it was read from: the archived body that carries it.
    for (const [table, key, field] of [
      ['app.tokens', 'slug', 'slug'],
      ['gateway.tokens', 'slug', 'slug'],
      ['gateway.screener_rows', 'token_slug', 'slug'],
    ] as const) {
      const links = await q<{ key: string; carried: boolean }>(
        w,
        sql.raw(`select t.${key} as key, coalesce(r.body->'data' @> jsonb_build_array(jsonb_build_object('${field}', t.${key})), false) as carried from ${table} t left join sync.raw_responses r on r.id = t.raw_response_id`),
      );
      expect(links.filter((l) => !l.carried).map((l) => l.key), table).toEqual([]);
    }
    if (pageSize === 1) synced.add(form);
  });

  it('pages that carry no total: the list complete when the last page names no next one, written whole, and it delists', async () => {
    const w = await fresh();
    try {
      fx.sim.setPaging({ pageSize: 4, form: 'linkHeader', total: 'none' });
      fx.sim.resetRequests();
      expect((await sync(w)).status).toBe('succeeded');
      // Nothing but the Link header and each page's own count said anything of the list.
      const [first] = await q<{ meta: Record<string, unknown>; top: string[] }>(
        w,
        sql`select body->'meta' as meta, array(select jsonb_object_keys(body) order by 1) as top from sync.raw_responses where path = '/api/v1/tokens' order by id limit 1`,
      );
      expect(first!.meta).not.toHaveProperty('total');
      expect(first!.top).toEqual(['data', 'meta']);
      expect(requestsTo('/api/v1/tokens')).toHaveLength(Math.ceil(fx.sim.data.appTokens().length / 4));
      expect(await warehouseDigest(w)).toEqual(whole);
      for (const source of ['app', 'gateway']) for (const resource of ['tokens', 'screener']) expect((await stateIn(w, source, resource))?.status, `${source} ${resource}`).toBe('ok');
      await expectExactlyDroppedDelisted(w);
    } finally {
      fx.sim.setPaging({ pageSize: 0, total: 'exact' });
    }
  });
});

describe('a complete list in pages delists exactly the token upstream dropped, in every form', () => {
  afterAll(async () => {
    fx.sim.setPaging({ pageSize: 0, form: 'metaNext', total: 'exact', loop: false });
    fx.sim.setEpoch(0);
  });

  it.each(PAGE_FORMS)('complete pages, %s at page size 1: exactly the dropped token delisted, its screener rows gone', async (form) => {
    fx.sim.setPaging({ pageSize: 1, form, total: 'exact', loop: false });
    // The warehouse the row-for-row test synced in this form at page size 1 (a fresh one when run alone).
    let w: Warehouse | undefined = synced.has(form) ? atSizeOne.get(form) : undefined;
    if (!w) {
      w = await fresh();
      expect((await sync(w)).status).toBe('succeeded');
    }
    fx.sim.resetRequests();
    const lengths = await expectExactlyDroppedDelisted(w);
    // Read in pages of one: every page of both token lists asked, once each.
    expect(lengths.app).toBe(TOKENS - 1);
    expect(requestsTo('/api/v1/tokens').map((r) => r.status)).toEqual(Array(lengths.app).fill(200));
    expect(requestsTo('/v1/tokens').map((r) => r.status)).toEqual(Array(lengths.gateway).fill(200));
  });
});

describe('a list that is not whole is refused and delists nothing', () => {
  const w = useTestWarehouse();
  const delisted = (table: string) => delistedIn(w, table);
  const state = (source: string, resource: string) => stateIn(w, source, resource);

  const invalidBodies = async () => q<{ id: number; path: string }>(w, sql`select id, path from sync.raw_responses where status = 'invalid' order by id`);
  const screenerSlugs = () => screenerSlugsIn(w);

  beforeAll(async () => {
    fx.sim.setEpoch(0);
    fx.sim.setPaging({ pageSize: 4, form: 'cursor', total: 'exact', loop: false });
    expect((await sync(w)).status).toBe('succeeded');
    // Upstream drops one token: a complete list would delist it.
    fx.sim.setEpoch(1);
  });
  afterAll(() => {
    fx.sim.setPaging({ pageSize: 0, total: 'exact', loop: false, form: 'metaNext' });
    fx.sim.setEpoch(0);
  });

  it('a meta.total larger than the pages hold: the token lists partial, the sign named, nothing delisted, no page kept invalid', async () => {
    fx.sim.setPaging({ total: 'larger', loop: false, form: 'metaNext' });
    const keptBefore = (await invalidBodies()).length;
    await sync(w);
    for (const source of ['app', 'gateway']) {
      const s = await state(source, 'tokens');
      expect(s?.status, source).toBe('partial');
      expect(s?.incomplete, source).toMatch(/^meta\.total = (\d+), \d+ items read$/);
    }
    expect(await delisted('app.tokens')).toEqual([]);
    expect(await delisted('gateway.tokens')).toEqual([]);
    expect((await invalidBodies()).length).toBe(keptBefore);
  });

  it.each([['a next link that loops', { loop: true, form: 'linksNext' }, /loop/]] as const)('%s: the token lists invalid, every page kept, nothing delisted', async (_what, paging, reason) => {
    fx.sim.setPaging({ total: 'exact', ...paging });
    const before = await warehouseDigest(w);
    const keptBefore = await invalidBodies();
    await sync(w);
    for (const source of ['app', 'gateway']) {
      const s = await state(source, 'tokens');
      expect(s?.status, source).toBe('invalid');
      expect(s?.last_error, source).toMatch(reason);
    }
    expect(await delisted('app.tokens')).toEqual([]);
    expect(await delisted('gateway.tokens')).toEqual([]);
    // Nothing written from a refused list: the tokens and their history as they were.
    const after = await warehouseDigest(w);
    for (const t of ['app.tokens', 'gateway.tokens', 'app.tokens_history', 'gateway.tokens_history']) expect(after[t], t).toEqual(before[t]);
    // Every page's body kept as the answer that was refused: all of both lists' pages.
    const seen = new Set(keptBefore.map((b) => b.id));
    const kept = (await invalidBodies()).filter((b) => !seen.has(b.id) && /^\/(api\/)?v1\/tokens(\?|$)/.test(b.path)).map((b) => b.path);
    expect(kept.length).toBeGreaterThanOrEqual(Math.ceil(fx.sim.data.appTokens().length / 4) + Math.ceil(fx.sim.data.gatewayTokens().length / 4));
    expect(kept).toContain('/api/v1/tokens');
    expect(kept).toContain('/v1/tokens?page=2');
  });

  it('a next link to another host, another route or a private one is never requested: the list refused', async () => {
    const hits: string[] = [];
    const other = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('{"data":[],"meta":{}}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const port = (other.address() as AddressInfo).port;
    fx.sim.setPaging({ pageSize: 0, loop: false, total: 'exact' });
    try {
      for (const link of [`http://127.0.0.1:${port}/v1/tokens?page=2`, '/v1/screener?page=2', '/v1/internal/tokens?page=2', '//127.0.0.1:1/v1/tokens?page=2']) {
        fx.sim.resetRequests();
        fx.sim.script('/v1/tokens', [{ status: 200, headers: { Link: `<${link}>; rel="next"` } }]);
        await syncOnce(fx.sim, w, log.logger, { gatewayKey }, ['gateway']);
        const s = await state('gateway', 'tokens');
        expect(s?.status, link).toBe('invalid');
        expect(s?.last_error, link).toMatch(/not followed/);
        // The walk goes on below the refused list (planned from the stored one), but the link
        // itself is never requested.
        expect(fx.sim.requests.map((r) => r.path).filter((p) => p.includes('page=2') || p.includes('/internal/')), link).toEqual([]);
      }
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
    expect(hits).toEqual([]);
    expect(await delisted('gateway.tokens')).toEqual([]);
    expect(log.lines().join('\n')).not.toContain(gatewayKey);
  });

  it('a page that is not understood refuses the whole list, the pages before it kept too', async () => {
    fx.sim.setPaging({ pageSize: 4, form: 'metaNext', loop: false, total: 'exact' });
    const before = new Set((await invalidBodies()).map((b) => b.id));
    fx.sim.script('/v1/tokens?page=2', [{ status: 200, body: '{"data":{"not":"a list"},"meta":{"count":1}}' }]);
    try {
      await syncOnce(fx.sim, w, log.logger, { gatewayKey }, ['gateway']);
    } finally {
      fx.sim.setPaging({ pageSize: 0 });
    }
    expect((await state('gateway', 'tokens'))?.status).toBe('invalid');
    const kept = (await invalidBodies()).filter((b) => !before.has(b.id)).map((b) => b.path);
    expect(kept).toEqual(expect.arrayContaining(['/v1/tokens', '/v1/tokens?page=2']));
    expect(await delisted('gateway.tokens')).toEqual([]);
  });

  it('a screener whose next link loops is refused and removes no row, while the whole token lists delist', async () => {
    const gone = fx.sim.data.epochChanges.delistedSlug!;
    expect(gone).toBe('cobalt-dex');
    fx.sim.setPaging({ pageSize: 4, routes: ['app.screener', 'gateway.screener'], loop: true, total: 'exact', form: 'cursor' });
    try {
      expect(await screenerSlugs()).toContain(gone);
      await sync(w);
      expect(await delisted('app.tokens')).toEqual([gone]);
      expect(await delisted('gateway.tokens')).toEqual([gone]);
      for (const source of ['app', 'gateway']) expect((await state(source, 'screener'))?.status, source).toBe('invalid');
      expect(await screenerSlugs()).toContain(gone);
    } finally {
      fx.sim.setPaging({ routes: [...PAGED_ROUTES], loop: false });
    }
  });

  it('complete pages after the refused ones: exactly the dropped token delisted, its screener rows gone', async () => {
    fx.sim.setPaging({ pageSize: 1, form: 'linkHeader', total: 'exact', loop: false });
    expect((await sync(w)).status).toBe('succeeded');
    const gone = fx.sim.data.epochChanges.delistedSlug!;
    expect(await delisted('app.tokens')).toEqual([gone]);
    expect(await delisted('gateway.tokens')).toEqual([gone]);
    for (const source of ['app', 'gateway']) {
      expect((await state(source, 'tokens'))?.status, source).toBe('ok');
      expect((await state(source, 'screener'))?.status, source).toBe('ok');
    }
    expect(await screenerSlugs()).not.toContain(gone);
  });
});
