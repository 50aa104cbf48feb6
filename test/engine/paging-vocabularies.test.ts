// Paging vocabularies (contract: "Lists may come in pages"; issue 45, item 2). Against the
// simulator serving the token lists, screeners and chart catalogs in pages of each of
// `VOCABULARY_FORMS`, over real HTTP into a real warehouse that already holds the whole lists:
// a form tesync can follow is read to its last page (every table equal to a sync of the whole
// lists, no token delisted, `tokens_as_of` complete at every instant); a form that says more
// pages or items exist but names no way to ask them is incomplete (`partial`, the sign named in
// its state), nothing delisted, no screener row closed, `tokens_as_of` complete at every instant. A list
// cut short in pages is confirmed by reading the whole list again, every page, not page 1.
import { sql } from 'drizzle-orm';
import { liveAtEveryInstant } from '../helpers/tokens-as-of.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PageForm } from '../../sim/index.ts';
import { VOCABULARY_FORMS } from '../../sim/paging.ts';
import { freshWarehouse, useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger, type TestWarehouse } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';
import { warehouseDigest } from '../helpers/warehouse-compare.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const log = createTestLogger([appKey, gatewayKey], 'warn');
const TOKENS = 9;

// The simulator, and the warehouse of the whole lists each case's warehouse is compared with.
const fx = useSimAndWarehouse({ tokens: TOKENS, historyDays: 5, chartsPerToken: 2, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
let walked: string[];
let whole: Awaited<ReturnType<typeof warehouseDigest>>;

/** The forms tesync follows to the last page, and at what page size (several pages of every paged list). */
const FOLLOWED: [PageForm, number][] = [
  ['pageNumbers', 2],
  ['laravel', 2],
  ['pageToken', 2],
  ['pagination', 4],
];
/** The forms that say more exists and name no way to it: incomplete, the sign named. */
const REFUSED: [PageForm, RegExp][] = [
  ['pagesNoLink', /^meta\.totalPages = \d+, 1 page read$/],
  ['moreNoLink', /^meta\.hasMore = 1$/],
];

beforeAll(async () => {
  walked = [fx.sim.data.appTokens().find((t) => (fx.sim.data.appCharts(t.slug) ?? []).length > 1 && (fx.sim.data.gatewayCharts(t.slug) ?? []).length > 1)!.slug];
  expect((await sync(fx.tw)).status).toBe('succeeded');
  whole = await warehouseDigest(fx.warehouse);
  expect(whole['app.tokens']!.rows).toBe(TOKENS);
});

const sync = (tw: TestWarehouse) => syncOnce(fx.sim, tw.warehouse, log.logger, { appKey, gatewayKey }, ['app', 'gateway'], { tokens: walked });
const q = <T>(tw: TestWarehouse, query: ReturnType<typeof sql>) => tw.warehouse.query<T>(query);
const requestsTo = (path: string) => fx.sim.requests.filter((r) => r.path.split('?')[0] === path);
const delistedIn = async (tw: TestWarehouse, table: string) => (await q<{ slug: string }>(tw, sql.raw(`select slug from ${table} where delisted_at is not null order by slug`))).map((r) => r.slug);
const stateIn = async (tw: TestWarehouse, source: string, resource: string) =>
  (await q<{ status: string; last_error: string | null; details: { incomplete?: string } | null }>(tw, sql`select status, last_error, details from sync.resource_state where source = ${source} and resource = ${resource}`))[0];
const serverNow = async (tw: TestWarehouse) => (await q<{ t: string }>(tw, sql`select "sync"."server_clock"()::text as t`))[0]!.t;
const LISTS = { app: () => fx.sim.data.appTokens().length, gateway: () => fx.sim.data.gatewayTokens().length };


/**
 * A fresh warehouse holding the whole lists (served whole); `since`, the first instant it held
 * them (the first token row known), and `held`, the end of that sync.
 */
async function holdingTheWholeLists(): Promise<{ tw: TestWarehouse; since: string; held: string }> {
  const tw = await freshWarehouse();
  fx.sim.setPaging({ pageSize: 0 });
  expect((await sync(tw)).status).toBe('succeeded');
  expect(await warehouseDigest(tw.warehouse)).toEqual(whole);
  const [first] = await q<{ t: string }>(tw, sql`select max(t)::text as t from (select min(known_from) as t from app.tokens_history union all select min(fetched_at) from app.tokens union all select min(fetched_at) from gateway.tokens) x`);
  return { tw, since: first!.t, held: await serverNow(tw) };
}

afterAll(() => fx.sim.setPaging({ pageSize: 0, form: 'metaNext', total: 'exact' }));

describe('paging vocabularies', () => {
  it('every vocabulary form of the simulator is in the table, once', () => {
    expect([...FOLLOWED.map(([f]) => f), ...REFUSED.map(([f]) => f)].sort()).toEqual([...VOCABULARY_FORMS].sort());
  });

  it.each(FOLLOWED)('%s (pages of %i): followed to the last page, every table as a sync of the whole lists, nothing delisted', async (form, pageSize) => {
    const { tw, since, held } = await holdingTheWholeLists();
    fx.sim.setPaging({ pageSize, form, total: 'none' });
    fx.sim.resetRequests();
    try {
      expect((await sync(tw)).status).toBe('succeeded');
    } finally {
      fx.sim.setPaging({ pageSize: 0, total: 'exact' });
    }
    // Every page of both token lists asked once, each answered (no page asked that does not exist).
    for (const [path, n] of [
      ['/api/v1/tokens', LISTS.app()],
      ['/v1/tokens', LISTS.gateway()],
    ] as const) {
      expect(n).toBeGreaterThan(pageSize);
      expect(requestsTo(path).map((r) => r.status), path).toEqual(Array(Math.ceil(n / pageSize)).fill(200));
    }
    expect(await warehouseDigest(tw.warehouse)).toEqual(whole);
    expect(await delistedIn(tw, 'app.tokens')).toEqual([]);
    expect(await delistedIn(tw, 'gateway.tokens')).toEqual([]);
    for (const source of ['app', 'gateway']) for (const resource of ['tokens', 'screener']) expect((await stateIn(tw, source, resource))?.status, `${source} ${resource}`).toBe('ok');
    for (const schema of ['app', 'gateway'] as const) {
      const live = await liveAtEveryInstant(tw, schema, since, [held]);
      expect(live.length, schema).toBeGreaterThanOrEqual(2);
      expect(new Set(live), schema).toEqual(new Set([LISTS[schema]()]));
    }
  });

  it('a cut list in pages: the removal it implies is confirmed by reading the whole list again, every page of it, and nothing is delisted', async () => {
    const { tw } = await holdingTheWholeLists();
    fx.sim.setPaging({ pageSize: 2, form: 'pageNumbers', total: 'none' });
    fx.sim.setLosses({ omitted: ['tokenListCut'] });
    fx.sim.resetRequests();
    try {
      expect((await sync(tw)).status).toBe('succeeded');
    } finally {
      fx.sim.setPaging({ pageSize: 0, total: 'exact' });
      fx.sim.setLosses({ omitted: [] });
    }
    for (const [path, n] of [
      ['/api/v1/tokens', LISTS.app()],
      ['/v1/tokens', LISTS.gateway()],
    ] as const) {
      // The cut read (page 1, two tokens and no count); the confirming read, whole: every page;
      // the two disagree, and a third whole read decides (two of three).
      const whole = [path, ...Array.from({ length: Math.ceil(n / 2) - 1 }, (_, i) => `${path}?page=${i + 2}`)];
      expect(requestsTo(path).map((r) => r.path), path).toEqual([path, ...whole, ...whole]);
    }
    expect(await delistedIn(tw, 'app.tokens')).toEqual([]);
    expect(await delistedIn(tw, 'gateway.tokens')).toEqual([]);
  });

  it.each(REFUSED)('%s: incomplete, the token lists partial naming the sign, nothing delisted, no screener row closed', async (form, reason) => {
    const { tw, since, held } = await holdingTheWholeLists();
    const screenerTables = ['app.screener_rows', 'app.screener_rows_history', 'gateway.screener_rows', 'gateway.screener_rows_history'];
    const before = await warehouseDigest(tw.warehouse);
    fx.sim.setPaging({ pageSize: 3, form, total: 'none' });
    fx.sim.resetRequests();
    try {
      await sync(tw);
    } finally {
      fx.sim.setPaging({ pageSize: 0, total: 'exact' });
    }
    for (const source of ['app', 'gateway']) {
      const s = await stateIn(tw, source, 'tokens');
      expect(s?.status, source).toBe('partial');
      expect(s?.details?.incomplete, source).toMatch(reason);
      const screener = await stateIn(tw, source, 'screener');
      expect(screener?.status, `${source} screener`).toBe('partial');
      expect(screener?.details?.incomplete, `${source} screener`).toMatch(reason);
    }
    // Page 1 only: tesync never guessed a way to the pages the list says exist.
    expect(requestsTo('/api/v1/tokens').map((r) => [r.path, r.status])).toEqual([['/api/v1/tokens', 200]]);
    expect(requestsTo('/v1/tokens').map((r) => [r.path, r.status])).toEqual([['/v1/tokens', 200]]);
    expect(await delistedIn(tw, 'app.tokens')).toEqual([]);
    expect(await delistedIn(tw, 'gateway.tokens')).toEqual([]);
    const after = await warehouseDigest(tw.warehouse);
    for (const t of ['app.tokens', 'gateway.tokens', 'app.tokens_history', 'gateway.tokens_history', ...screenerTables]) expect(after[t], t).toEqual(before[t]);
    for (const schema of ['app', 'gateway'] as const) {
      const live = await liveAtEveryInstant(tw, schema, since, [held]);
      expect(live.length, schema).toBeGreaterThanOrEqual(2);
      expect(new Set(live), schema).toEqual(new Set([LISTS[schema]()]));
    }
  });
});
