// A list is whole only when it proves it, end to end (issue 55, parts 1 and 5). Against the
// simulator over real HTTP into a real warehouse that holds the whole token lists: both token
// lists answer page 1 of 3 with signs of more in words tesync does not follow (`PAGING_SIGNS`,
// body and header twins, three per sync): the run is `partial`, the state names each sign, no
// token gets `delisted_at`, no version is closed, and `tokens_as_of` holds every token at every
// instant. An endless list (each page's `links.next` the page after it) stops at the list's byte
// budget: the run ends, at most the budget is archived, one `raw_responses` row per page body.
import { sql } from 'drizzle-orm';
import { liveAtEveryInstant } from '../helpers/tokens-as-of.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALL_PAGING_SIGNS, type PagingSign } from '../../sim/index.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { canaryKey, createTestLogger } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';

const appKey = canaryKey('ak');
const gatewayKey = canaryKey('gk');
const log = createTestLogger([appKey, gatewayKey], 'error');
const TOKENS = 9;

/** What the state names for each sign, on a page of 3 of the list's tokens (9 on the app host, 8 on the gateway: 3 pages). */
const NAMED: Record<PagingSign, RegExp> = {
  pageInfo: /pageInfo\.hasNextPage = true/,
  isLastPage: /isLastPage = false/,
  truncated: /(^|; )truncated = true/,
  continuationToken: /(^|; )continuationToken = "c2"/,
  nextOffset: /next_offset = 3/,
  remaining: /(^|; )remaining = \d/,
  lastPageUrl: /last_page_url = ".*\?page=3", this is \/(api\/)?v1\/tokens/,
  metaHasMore: /meta\.HasMore = true/,
  bodyTotal: /TOTAL = \d, 3 items read/,
  bodyTotalPages: /meta\.Total_Pages = 3, 1 page read/,
  bodyNextPage: /next-page = 2/,
  bodyTotalCount: /meta\.total-count = \d, 3 items read/,
  xHasNextPage: /header X-Has-Next-Page = true/,
  xIsLastPage: /header X-Is-Last-Page = false/,
  xTruncated: /header X-Truncated = true/,
  xContinuationToken: /header X-Continuation-Token = c2/,
  xNextOffset: /header X-Next-Offset = 3/,
  xRemaining: /header X-Remaining = \d/,
  xLastPageUrl: /header X-Last-Page-Url = .*\?page=3, this is/,
  xHasMore: /header X-Has-More = true/,
  xTotal: /header X-Total = \d, 3 items read/,
  xTotalPages: /header X-Total-Pages = 3, 1 page read/,
  xNextPage: /header X-Next-Page = 2/,
  xTotalCount: /header X-Total-Count = \d, 3 items read/,
};
const GROUPS: PagingSign[][] = [];
for (let i = 0; i < ALL_PAGING_SIGNS.length; i += 3) GROUPS.push(ALL_PAGING_SIGNS.slice(i, i + 3));

const fx = useSimAndWarehouse({ tokens: TOKENS, historyDays: 3, chartsPerToken: 1, appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } }, gatewayKeys: [gatewayKey] });
let walked: string[];
let since: string;
const marks: string[] = [];

const sync = (env: Record<string, string> = {}) => syncOnce(fx.sim, fx.warehouse, log.logger, { appKey, gatewayKey, env }, ['app', 'gateway'], { tokens: walked });
const q = <T>(query: ReturnType<typeof sql>) => fx.warehouse.query<T>(query);
const serverNow = async () => (await q<{ t: string }>(sql`select "sync"."server_clock"()::text as t`))[0]!.t;
const stateOf = async (source: string) =>
  (await q<{ status: string; incomplete: string | null }>(sql`select status, details->>'incomplete' as incomplete from sync.resource_state where source = ${source} and resource = 'tokens'`))[0];
const delisted = async () => (await q<{ n: number }>(sql`select ((select count(*) from app.tokens where delisted_at is not null) + (select count(*) from gateway.tokens where delisted_at is not null))::int as n`))[0]!.n;
const closedVersions = async () =>
  (await q<{ n: number }>(sql`select ((select count(*) from app.tokens_history where isfinite(known_to)) + (select count(*) from gateway.tokens_history where isfinite(known_to)))::int as n`))[0]!.n;


beforeAll(async () => {
  walked = [fx.sim.data.appTokens()[0]!.slug];
  expect((await sync()).status).toBe('succeeded');
  expect((await q<{ n: number }>(sql`select count(*)::int as n from app.tokens`))[0]!.n).toBe(TOKENS);
  since = (await q<{ t: string }>(sql`select max(t)::text as t from (select min(known_from) as t from app.tokens_history union all select min(fetched_at) from app.tokens union all select min(fetched_at) from gateway.tokens) x`))[0]!.t;
  marks.push(await serverNow());
});

describe('a token list that says more in words tesync does not follow', () => {
  it('every sign of the simulator is in a group, once', () => {
    expect(GROUPS.flat().sort()).toEqual([...ALL_PAGING_SIGNS].sort());
    expect(Object.keys(NAMED).sort()).toEqual([...ALL_PAGING_SIGNS].sort());
  });

  it.each(GROUPS.map((g) => [g.join(', '), g] as const))('%s: partial, each sign named, nothing delisted or closed', async (_names, signs) => {
    const closedBefore = await closedVersions();
    fx.sim.setPaging({ pageSize: 3, form: 'signs', total: 'none', signs, routes: ['app.tokens', 'gateway.tokens'] });
    try {
      expect((await sync()).status).toBe('partial');
    } finally {
      fx.sim.setPaging({ pageSize: 0 });
    }
    marks.push(await serverNow());
    for (const source of ['app', 'gateway']) {
      const s = await stateOf(source);
      expect(s?.status, source).toBe('partial');
      for (const sign of signs) expect(s?.incomplete, `${source} ${sign}: ${s?.incomplete}`).toMatch(NAMED[sign]);
    }
    expect(await delisted()).toBe(0);
    expect(await closedVersions()).toBe(closedBefore);
  });

  it('tokens_as_of holds every token at every instant of those syncs', async () => {
    for (const schema of ['app', 'gateway'] as const) {
      const live = await liveAtEveryInstant(fx.tw, schema, since, marks);
      expect(live.length, schema).toBeGreaterThanOrEqual(GROUPS.length);
      expect(new Set(live), schema).toEqual(new Set([schema === 'app' ? fx.sim.data.appTokens().length : fx.sim.data.gatewayTokens().length]));
    }
  });

  it('a whole list after them: succeeded, ok again', async () => {
    expect((await sync()).status).toBe('succeeded');
    for (const source of ['app', 'gateway']) expect(await stateOf(source)).toEqual({ status: 'ok', incomplete: null });
  });
});

describe('an endless list', () => {
  it('stops at its byte budget: the run ends, at most the budget archived, one row per page body, nothing delisted', async () => {
    const budget = 40_000;
    fx.sim.setPaging({ pageSize: 3, form: 'endless', total: 'none', routes: ['app.tokens'] });
    fx.sim.resetRequests();
    let runId: string;
    try {
      const out = await sync({ TE_MAX_LIST_BYTES: String(budget) });
      expect(out.status).toBe('partial');
      runId = out.runId;
    } finally {
      fx.sim.setPaging({ pageSize: 0 });
    }
    const asked = fx.sim.requests.filter((r) => r.path.split('?')[0] === '/api/v1/tokens');
    // Well past the list's own three pages, well short of the bound on pages.
    expect(asked.length).toBeGreaterThan(10);
    expect(asked.length).toBeLessThan(1000);
    const s = await stateOf('app');
    expect(s?.status).toBe('partial');
    expect(s?.incomplete).toMatch(new RegExp(`^the list's bodies reached its byte budget of ${budget} bytes \\(TE_MAX_LIST_BYTES\\) after page \\d+: read no further$`));
    const [archive] = await q<{ rows: number; bodies: number; bytes: number }>(
      sql`select count(*)::int as rows, count(distinct sha256)::int as bodies, coalesce(sum(r.bytes), 0)::int as bytes
          from sync.raw_responses a left join lateral (select bytes from sync.requests q where q.run_id = a.run_id and q.path = a.path and q.http_status = 200 limit 1) r on true
          where a.run_id = ${runId} and a.path ~ '^/api/v1/tokens(\\?|$)'`,
    );
    expect(archive!.rows).toBe(archive!.bodies);
    // Each page answered is archived once; the one past the budget, cut while it was read, not at all.
    const answered = asked.filter((r) => r.status === 200).length;
    expect(archive!.rows).toBeGreaterThanOrEqual(answered - 1);
    expect(archive!.rows).toBeLessThanOrEqual(answered);
    expect(archive!.bytes).toBeLessThanOrEqual(budget);
    expect(await delisted()).toBe(0);
  });
});
