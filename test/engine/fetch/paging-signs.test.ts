// A list is whole only when it proves it (paging-signs.ts, fetch-list.ts `judgeList`), without IO:
// every sign of more the issue named, in body and header twins and in any letter case or
// separator, makes a list incomplete and is named; what says nothing more (false, null, a total
// that matches, a page count reached, rate-limit headers, the seeds' own envelope fields)
// leaves it whole.
import { describe, expect, it } from 'vitest';
import { judgeList } from '../../../src/engine/fetch/fetch-list.ts';
import { readPageSignals } from '../../../src/engine/fetch/next-page.ts';
import { nameWords, pagingFields, speaksOfPaging } from '../../../src/engine/fetch/paging-signs.ts';
import { readMeta } from '../../../src/schema/upstream/envelope.ts';
import { parseJson } from '../../../src/lib/json.ts';

const PATH = '/api/v1/tokens';

/** One page of `n` items, its body (as JSON text, numbers as upstream wrote them) and headers, judged as a whole list. */
function judged(n: number, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const parsed = parseJson(JSON.stringify({ data: Array.from({ length: n }, (_, i) => ({ slug: `t${i}` })), ...body })) as Record<string, unknown>;
  const lowered = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const items = parsed.data as unknown[];
  return judgeList([{ items, meta: readMeta(parsed.meta as Record<string, unknown> | undefined), signals: readPageSignals(parsed, lowered), path: PATH }], items.length);
}

/** [what, body, headers, the reason the state names] : 2 of 4 items read, in each form. */
const INCOMPLETE: [string, Record<string, unknown>, Record<string, string>, string][] = [
  ['pageInfo.hasNextPage', { pageInfo: { hasNextPage: true, endCursor: 'c2' } }, {}, 'pageInfo.hasNextPage = true'],
  ['its header twin', {}, { 'X-Has-Next-Page': 'true' }, 'header X-Has-Next-Page = true'],
  ['X-Total', {}, { 'X-Total': '4' }, 'header X-Total = 4, 2 items read'],
  ['its body twin', { TOTAL: 4 }, {}, 'TOTAL = 4, 2 items read'],
  ['X-Total-Pages', {}, { 'X-Total-Pages': '2' }, 'header X-Total-Pages = 2, 1 page read'],
  ['its body twin, snake and capitals', { meta: { Total_Pages: 2 } }, {}, 'meta.Total_Pages = 2, 1 page read'],
  ['X-Next-Page', {}, { 'X-Next-Page': '2' }, 'header X-Next-Page = 2'],
  ['its body twin, kebab', { 'next-page': 2 }, {}, 'next-page = 2'],
  ['X-Total-Count with 2 items', {}, { 'X-Total-Count': '4' }, 'header X-Total-Count = 4, 2 items read'],
  ['its body twin, kebab in meta', { meta: { 'total-count': 4 } }, {}, 'meta.total-count = 4, 2 items read'],
  ['isLastPage: false', { isLastPage: false }, {}, 'isLastPage = false'],
  ['its header twin', {}, { 'X-Is-Last-Page': 'false' }, 'header X-Is-Last-Page = false'],
  ['truncated: true', { truncated: true }, {}, 'truncated = true'],
  ['its header twin', {}, { 'X-Truncated': 'true' }, 'header X-Truncated = true'],
  ['S3 IsTruncated, PascalCase', { IsTruncated: 'true' }, {}, 'IsTruncated = "true"'],
  ['continuationToken', { continuationToken: 'c2' }, {}, 'continuationToken = "c2"'],
  ['its header twin', {}, { 'X-Continuation-Token': 'c2' }, 'header X-Continuation-Token = c2'],
  ['next_offset', { next_offset: 2 }, {}, 'next_offset = 2'],
  ['its header twin', {}, { 'X-Next-Offset': '2' }, 'header X-Next-Offset = 2'],
  ['remaining: 5', { remaining: 5 }, {}, 'remaining = 5'],
  ['its header twin', {}, { 'X-Remaining': '5' }, 'header X-Remaining = 5'],
  ['last_page_url with current_page: 1', { current_page: 1, last_page_url: `${PATH}?page=2` }, {}, `last_page_url = "${PATH}?page=2", this is ${PATH}`],
  ['its header twin', {}, { 'X-Current-Page': '1', 'X-Last-Page-Url': `${PATH}?page=2` }, `header X-Last-Page-Url = ${PATH}?page=2, this is ${PATH}`],
  ['meta.HasMore: true', { meta: { HasMore: true } }, {}, 'meta.HasMore = true'],
  ['its header twin, capitals', {}, { 'X-HAS-MORE': 'true' }, 'header X-Has-More = true'],
  ['HAS_MORE in capitals', { HAS_MORE: 1 }, {}, 'HAS_MORE = 1'],
  ['a cursor in meta, in any name', { meta: { nextCursorToken: 'abc' } }, {}, 'meta.nextCursorToken = "abc"'],
  ['a Link header rel="last" that is another page', {}, { Link: `<${PATH}?page=2>; rel="last"` }, `header Link rel="last" = ${PATH}?page=2, this is ${PATH}`],
  ['Content-Range with a total', {}, { 'Content-Range': 'items 0-1/4' }, 'header Content-Range = 4, 2 items read'],
  ['Content-Range without one', {}, { 'Content-Range': 'items 0-1/*' }, 'header Content-Range = items 0-1/*'],
  ['a paging object too deep to read', { paging: { a_page: { b_page: { c_page: { d_page: { e_page: 1 } } } } } }, {}, 'paging.a_page.b_page.c_page.d_page = {"e_page":1}'],
];

/** [what, body, headers]: 2 items, and nothing that says more. */
const WHOLE: [string, Record<string, unknown>, Record<string, string>][] = [
  ['hasNextPage: false, its cursors', { pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: 'c1', endCursor: 'c2' } }, {}],
  ['X-Total-Count equal to the items read', {}, { 'X-Total-Count': '2' }],
  ['a total that matches, in any case', { meta: { Total: 2 }, total_count: 2 }, { 'X-Total': '2' }],
  ['Content-Range that covers the list', {}, { 'Content-Range': 'items 0-1/2' }],
  ['GitLab last page', {}, { 'X-Total': '2', 'X-Total-Pages': '1', 'X-Page': '1', 'X-Per-Page': '20', 'X-Prev-Page': '', 'X-Next-Page': '' }],
  ['rate-limit headers, every spelling', {}, { 'X-RateLimit-Remaining': '3', 'RateLimit-Remaining': '3', 'X-Rate-Limit-Remaining': '3', RateLimit: '"default";r=3;t=10', 'RateLimit-Policy': '"default";q=100;w=60', 'Retry-After': '5' }],
  ['the ordinary headers', {}, { 'Content-Length': '123', 'Content-Type': 'application/json', ETag: '"x"', 'Last-Modified': 'Wed, 21 Oct 2015 07:28:00 GMT', 'X-Request-Id': 'r1', 'X-Service-Source': 'catalog', 'Cache-Control': 'no-store' }],
  ['meta.count equal, and the seeds envelope', { meta: { count: 2, asOf: '2026-06-30T00:00:00Z', servedAt: '2026-06-30T00:00:00Z', source: { type: 'x', surface: 'y', backing: null, chartKey: null, timeframe: null } }, insights: [] }, {}],
  ['isLastPage: true, truncated: false, remaining: 0, empty continuation', { isLastPage: true, truncated: false, remaining: 0, continuationToken: '', next_offset: null }, {}],
  ['a last page link that is this page', { current_page: 1, last_page: 1, last_page_url: `${PATH}?page=1`, first_page_url: `${PATH}?page=1`, prev_page_url: null }, {}],
  ['a page size, an offset of its own, a time that names next', { meta: { pageSize: 2, per_page: 2, offset: 0, limit: 100, nextUpdateAt: '2026-07-01T00:00:00Z' } }, {}],
  ['Laravel links array, a Link header without next', { links: [{ url: null, label: 'Previous', active: false }, { url: `${PATH}?page=1`, label: '1', active: true }] }, { Link: `<${PATH}?page=1>; rel="first", <${PATH}>; rel="self"` }],
];

describe('a sign of more, in words tesync does not follow, makes a list incomplete and is named', () => {
  it.each(INCOMPLETE)('%s', (_what, body, headers, reason) => {
    expect(judged(2, body, headers)).toEqual({ incomplete: reason });
  });

  it('the first three signs are named, and how many more', () => {
    expect(judged(2, { truncated: true, remaining: 5, continuationToken: 'c', next_offset: 2 }, { 'X-Total-Count': '4' })).toEqual({
      incomplete: 'header X-Total-Count = 4, 2 items read; truncated = true; remaining = 5; and 2 more',
    });
  });
});

describe('what says nothing more leaves a list whole', () => {
  it.each(WHOLE)('%s', (_what, body, headers) => {
    expect(judged(2, body, headers)).toBeNull();
  });
});

describe('the rule is over the words of a name', () => {
  it('splits camelCase, PascalCase, snake, kebab and capitals into lower-case words', () => {
    expect(nameWords('hasNextPage')).toEqual(['has', 'next', 'page']);
    expect(nameWords('X-Total-Count')).toEqual(['x', 'total', 'count']);
    expect(nameWords('HAS_MORE')).toEqual(['has', 'more']);
    expect(nameWords('IsTruncated')).toEqual(['is', 'truncated']);
    expect(nameWords('@odata.nextLink')).toEqual(['odata', 'next', 'link']);
    expect(nameWords('pageInfo')).toEqual(['page', 'info']);
  });

  it('a name speaks of paging by a word that begins with a paging stem, never when it speaks of the budget or a time', () => {
    for (const n of ['pageInfo', 'cursor', 'continuation_token', 'isTruncated', 'remaining', 'next_offset', 'X-Total', 'last_page_url', 'Link', 'scroll_id']) expect(speaksOfPaging(nameWords(n)), n).toBe(true);
    for (const n of ['count', 'asOf', 'servedAt', 'source', 'insights', 'slug', 'homepage', 'X-RateLimit-Remaining', 'RateLimit-Remaining', 'X-Rate-Limit-Remaining', 'nextUpdateAt', 'Content-Length']) {
      expect(speaksOfPaging(nameWords(n)), n).toBe(false);
    }
  });

  it('looks into objects under a paging name only, never into the items', () => {
    const said = pagingFields({ data: [{ nextCursor: 'x', total: 9 }], meta: { count: 1, source: { next: 'y' } }, pageInfo: { hasNextPage: true } }, {});
    expect(said.map((f) => f.where)).toEqual(['pageInfo.hasNextPage']);
  });
});
