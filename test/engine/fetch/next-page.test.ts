// The next-page forms a list reader follows, and when a list read to its end is whole, without IO.
import { describe, expect, it } from 'vitest';
import { judgeList } from '../../../src/engine/fetch/fetch-list.ts';
import { againstPage, chooseNext, nextFromLinkHeader, readPageSignals } from '../../../src/engine/fetch/next-page.ts';
import { resolveLink } from '../../../src/upstream/safe-url.ts';
import { truthy } from '../../../src/engine/fetch/paging-signs.ts';
import { readMeta } from '../../../src/schema/upstream/envelope.ts';
import { parseJson } from '../../../src/lib/json.ts';

const signals = (body: unknown, headers: Record<string, string> = {}) => readPageSignals(body, headers);
const next = (body: unknown, headers: Record<string, string> = {}, page = '/api/v1/tokens') => chooseNext(signals(body, headers).nexts, page);
const json = (text: string) => parseJson(text);

describe('RFC 8288 Link header', () => {
  it('finds rel="next" among other links, quoted or not, in any case, among several rels', () => {
    expect(nextFromLinkHeader('<https://h/x?page=1>; rel="prev", <https://h/x?page=3>; rel="next"')).toEqual(['https://h/x?page=3']);
    expect(nextFromLinkHeader('</x?page=2>; rel=next')).toEqual(['/x?page=2']);
    expect(nextFromLinkHeader('</x?page=2>; title="a, b; c"; REL="Next Last"')).toEqual(['/x?page=2']);
    expect(nextFromLinkHeader('</x?a=1,2>; rel="next"')).toEqual(['/x?a=1,2']);
  });

  it('names no next page without rel next', () => {
    expect(nextFromLinkHeader('</x?page=1>; rel="prev", </x?page=9>; rel="last"')).toEqual([]);
    expect(nextFromLinkHeader('</x?page=2>; rel="nextish"')).toEqual([]);
    expect(nextFromLinkHeader(undefined)).toEqual([]);
    expect(nextFromLinkHeader('garbage')).toEqual([]);
  });
});

describe('next page in the body', () => {
  it.each([
    ['meta.next', { data: [], meta: { next: '/api/v1/tokens?page=2' } }],
    ['links.next', { data: [], links: { next: 'http://h/api/v1/tokens?page=2' } }],
    ['links.next.href', { data: [], links: { next: { href: '/api/v1/tokens?page=2' } } }],
    ['_links.next.href', { data: [], _links: { next: { href: '/api/v1/tokens?page=2' } } }],
    ['next', { data: [], next: '/api/v1/tokens?page=2' }],
    ['meta.pagination.next', { data: [], meta: { pagination: { next: '/api/v1/tokens?page=2' } } }],
  ])('a URL in %s', (_where, body) => {
    expect(next(body)).toEqual({ link: expect.stringContaining('/api/v1/tokens?page=2') });
  });

  it.each([
    ['meta.nextCursor', { meta: { nextCursor: 'abc' } }],
    ['meta.next_cursor', { meta: { next_cursor: 'abc' } }],
    ['meta.cursor', { meta: { cursor: 'abc' } }],
    ['meta.cursors.next', { meta: { cursors: { next: 'abc' } } }],
    ['nextCursor', { nextCursor: 'abc' }],
  ])('a cursor in %s', (_where, body) => {
    expect(next(body)).toEqual({ cursor: 'abc', param: 'cursor' });
  });

  it('a numeric cursor keeps its digits', () => {
    expect(next(parseJson('{"meta":{"nextCursor":12345678901234567890}}'))).toEqual({ cursor: '12345678901234567890', param: 'cursor' });
  });

  it('null, empty or absent: no next page', () => {
    expect(next({ data: [], meta: { next: null, nextCursor: '' }, links: { next: null } })).toBeNull();
    expect(next({ data: [] })).toBeNull();
    expect(next([])).toBeNull();
  });

  it('the same page named twice (body and header, relative and absolute) is one next page', () => {
    const n = next({ meta: { next: '?page=2' } }, { link: '</api/v1/tokens?page=2>; rel="next"' });
    expect(n).toEqual({ link: '/api/v1/tokens?page=2' });
    expect(next({ links: { next: '/api/v1/tokens?cursor=abc' }, meta: { nextCursor: 'abc' } })).toEqual({ link: '/api/v1/tokens?cursor=abc' });
    // Absolute in one place, relative in another: the absolute one, for the origin check.
    expect(next({ meta: { next: '/api/v1/tokens?page=2' } }, { link: '<https://h.test/api/v1/tokens?page=2>; rel="next"' })).toEqual({ link: 'https://h.test/api/v1/tokens?page=2' });
  });

  it('two different next pages are not understood', () => {
    expect(next({ meta: { next: '/api/v1/tokens?page=2' } }, { link: '</api/v1/tokens?page=3>; rel="next"' })).toHaveProperty('conflict');
    expect(next({ meta: { nextCursor: 'a' }, nextCursor: 'b' })).toHaveProperty('conflict');
    expect(next({ links: { next: '/api/v1/tokens?page=2' }, meta: { nextCursor: 'abc' } })).toHaveProperty('conflict');
    expect(next({ links: { next: 'https://a.test/api/v1/tokens?page=2' } }, { link: '<https://b.test/api/v1/tokens?page=2>; rel="next"' })).toHaveProperty('conflict');
  });
});

describe('a relative link is read against the page that gave it', () => {
  it('resolves relative references; leaves absolute URLs to the safe-link check', () => {
    expect(againstPage('?page=2', '/api/v1/tokens?page=1')).toBe('/api/v1/tokens?page=2');
    expect(againstPage('tokens?page=2', '/api/v1/tokens')).toBe('/api/v1/tokens?page=2');
    expect(againstPage('../v1/screener?page=2', '/v1/screener')).toBe('/v1/screener?page=2');
    expect(againstPage('https://evil.invalid/v1/tokens?page=2', '/v1/tokens')).toBe('https://evil.invalid/v1/tokens?page=2');
    // Protocol-relative: another host, so it stays absolute for the check to refuse.
    expect(againstPage('//evil.invalid/v1/tokens', '/v1/tokens')).toBe('http://evil.invalid/v1/tokens');
    // Not written in URI characters: handed on as given (a reader would rewrite it), and refused by the check.
    for (const link of ['\\\\evil.invalid/v1/tokens', '/api/v1\\tokens?page=2', '/api/v1/tok\tens?page=2', 'tok\nens?page=2']) {
      expect(againstPage(link, '/api/v1/tokens')).toBe(link);
      expect(resolveLink('http://app.test', 'app.tokens', againstPage(link, '/api/v1/tokens')!)).toBeNull();
    }
  });
});

describe('what a page says of the whole list', () => {
  it('reads a total and a has-more flag', () => {
    expect(signals({ meta: { total: 13 } }).total).toBe(13);
    expect(signals({ meta: { totalCount: '13' } }).total).toBe(13);
    expect(signals({ meta: { pagination: { total: 4 } } }).total).toBe(4);
    expect(signals({ meta: { hasMore: true } }).more).toBe(true);
    expect(signals({ has_more: false }).more).toBe(false);
  });
});

describe('a list read to its last page', () => {
  const page = (n: number, meta: Record<string, unknown> = {}, body: Record<string, unknown> = { meta }) => ({
    items: Array.from({ length: n }, (_, i) => i),
    meta: readMeta(meta),
    signals: readPageSignals(body, {}),
  });

  it('is whole when every count counts its page or the list, and every total matches', () => {
    expect(judgeList([page(7, { count: 7 }), page(6, { count: 6 })], 13)).toBeNull();
    expect(judgeList([page(7, { count: 13 }), page(6, { count: 13 })], 13)).toBeNull();
    expect(judgeList([page(7, { count: 7, total: 13 }), page(6, { count: 6, total: 13 })], 13)).toBeNull();
    expect(judgeList([page(3)], 3)).toBeNull();
  });

  it('is incomplete when a total says more or the last page says more; refused when a count says neither the page nor the list, or a total less than was read', () => {
    expect(judgeList([page(7, { total: 14 }), page(6, { total: 14 })], 13)).toEqual({ incomplete: 'meta.total = 14, 13 items read' });
    expect(judgeList([page(6, { total: 7 })], 6)).toEqual({ incomplete: 'meta.total = 7, 6 items read' });
    expect(judgeList([page(7), page(6, { hasMore: true })], 13)).toEqual({ incomplete: 'meta.hasMore = true' });
    expect(judgeList([page(7, { count: 9 }), page(6)], 13)).toEqual({ refused: expect.stringMatching(/meta.count says 9/) });
    expect(judgeList([page(5, { count: 13 })], 5)).toEqual({ refused: expect.stringMatching(/meta.count says 13 items, the list has 5/) });
    expect(judgeList([page(6, { total: 5 })], 6)).toEqual({ refused: 'page 1 says the list holds 5 items, 6 were read' });
  });
});

describe('paging vocabularies', () => {
  const from = (body: unknown, page = '/api/v1/tokens?sort=slug') => chooseNext(readPageSignals(body, {}).nexts, page);

  it.each([
    ['meta.page / meta.totalPages', '{"data":[],"meta":{"page":1,"pageSize":3,"totalPages":2}}', 'meta.page', 'meta.totalPages'],
    ['top-level current_page / last_page', '{"data":[],"current_page":1,"last_page":2}', 'current_page', 'last_page'],
    ['pagination.current_page / total_pages', '{"data":[],"pagination":{"current_page":1,"total_pages":2}}', 'pagination.current_page', 'pagination.total_pages'],
    ['meta.pagination.currentPage / pageCount', '{"data":[],"meta":{"pagination":{"currentPage":"1","pageCount":"2"}}}', 'meta.pagination.currentPage', 'meta.pagination.pageCount'],
    ['paging.pageNumber / page_count', '{"data":[],"paging":{"pageNumber":1,"page_count":2}}', 'paging.pageNumber', 'paging.page_count'],
    ['meta.page.number / meta.page.totalPages', '{"data":[],"meta":{"page":{"number":1,"totalPages":2}}}', 'meta.page.number', 'meta.page.totalPages'],
    ['meta.page_number / meta.num_pages', '{"data":[],"meta":{"page_number":1,"num_pages":2}}', 'meta.page_number', 'meta.num_pages'],
  ])('page numbers in %s: page 2 asked as ?page=2 on the page own path, its other parameters kept', (_what, text, pageWhere, pagesWhere) => {
    const s = readPageSignals(json(text), {});
    expect(s.page).toEqual({ number: 1, where: pageWhere });
    expect(s.pages).toEqual({ count: 2, where: pagesWhere });
    expect(s.unreadable).toEqual([]);
    expect(from(json(text))).toEqual({ link: '/api/v1/tokens?sort=slug&page=2' });
    // Asked page 2 (the query already naming it), the same vocabulary says it is the last.
    expect(from(json(text.replace(/"?1"?,/, '2,')), '/api/v1/tokens?sort=slug&page=2')).toBeNull();
  });

  it('a page number is followed only when the page gives its own number and the number of pages', () => {
    // The page count alone: nothing to ask (the list is incomplete by judgeList, below).
    expect(readPageSignals({ meta: { pageSize: 3, totalPages: 2 } }, {}).nexts).toEqual([]);
    expect(readPageSignals({ meta: { pageSize: 3, totalPages: 2 } }, {}).pages).toEqual({ count: 2, where: 'meta.totalPages' });
    // The page number alone: nothing says more.
    expect(readPageSignals({ meta: { page: 1 } }, {}).nexts).toEqual([]);
    // The last page, and an empty list that says it has 0 pages.
    expect(readPageSignals({ meta: { page: 3, totalPages: 3 } }, {}).nexts).toEqual([]);
    expect(readPageSignals({ meta: { page: 1, totalPages: 0 } }, {}).nexts).toEqual([]);
  });

  it('pages counted from 0 when the first page says it is page 0', () => {
    expect(from({ meta: { page: 0, totalPages: 2 } }, '/v1/tokens')).toEqual({ link: '/v1/tokens?page=1' });
    // Page 1 of a list counted from 0 is its last of 2; counted from 1 it would not be.
    expect(readPageSignals({ meta: { page: 1, totalPages: 2 } }, {}, { firstPage: 0 }).nexts).toEqual([]);
    expect(readPageSignals({ meta: { page: 1, totalPages: 2 } }, {}).nexts).toHaveLength(1);
  });

  it('a next page number given outright: asked as ?page=N; a URL in the same field is a link', () => {
    expect(from({ meta: { next_page: 3 } })).toEqual({ link: '/api/v1/tokens?sort=slug&page=3' });
    expect(from({ pagination: { nextPage: '3' } })).toEqual({ link: '/api/v1/tokens?sort=slug&page=3' });
    expect(from({ next_page: 'https://h.test/api/v1/tokens?page=3' })).toEqual({ link: 'https://h.test/api/v1/tokens?page=3' });
  });

  it.each([
    ['next_page_url', { current_page: 1, last_page: 2, next_page_url: 'https://h.test/api/v1/tokens?page=2' }],
    ['meta.pagination.links.next', { meta: { pagination: { current_page: 1, total_pages: 2, links: { next: 'https://h.test/api/v1/tokens?page=2' } } } }],
    ['nextLink', { nextLink: 'https://h.test/api/v1/tokens?page=2' }],
    ['@odata.nextLink', { '@odata.nextLink': 'https://h.test/api/v1/tokens?page=2' }],
    ['paging.next_url', { paging: { next_url: 'https://h.test/api/v1/tokens?page=2' } }],
  ])('a next URL in %s is a link (beside page numbers that agree with it)', (_where, body) => {
    expect(from(body)).toEqual({ link: 'https://h.test/api/v1/tokens?page=2' });
  });

  it('a next URL whose page is not the next page number: two next pages, not understood', () => {
    expect(from({ current_page: 1, last_page: 3, next_page_url: 'https://h.test/api/v1/tokens?page=3' })).toHaveProperty('conflict');
  });

  it.each([
    ['nextPageToken', { nextPageToken: 'tok' }, 'nextPageToken'],
    ['next_page_token', { next_page_token: 'tok' }, 'next_page_token'],
    ['meta.nextPageToken', { meta: { nextPageToken: 'tok' } }, 'meta.nextPageToken'],
    ['pagination.next_page_token', { pagination: { next_page_token: 'tok' } }, 'pagination.next_page_token'],
  ])('a page token in %s goes back as ?pageToken=', (_what, body, where) => {
    expect(readPageSignals(body, {}).nexts).toEqual([{ kind: 'cursor', cursor: 'tok', param: 'pageToken', where }]);
    expect(from(body)).toEqual({ cursor: 'tok', param: 'pageToken' });
  });

  it('a page token beside a next link: the link names the parameter, and must carry the token', () => {
    expect(from({ nextPageToken: 'tok', links: { next: '/api/v1/tokens?page_token=tok' } })).toEqual({ link: '/api/v1/tokens?page_token=tok' });
    expect(from({ nextPageToken: 'tok', links: { next: '/api/v1/tokens?page_token=other' } })).toHaveProperty('conflict');
    // A cursor and a token that differ: two next pages.
    expect(from({ nextCursor: 'a', nextPageToken: 'b' })).toHaveProperty('conflict');
  });

  it.each([
    ['total', { total: 9 }, 9],
    ['meta.total', { meta: { total: 9 } }, 9],
    ['meta.totalCount', { meta: { totalCount: '9' } }, 9],
    ['total_count', { total_count: 9 }, 9],
    ['pagination.total', { pagination: { total: 9 } }, 9],
    ['paging.totalItems', { paging: { totalItems: 9 } }, 9],
    ['meta.page.total', { meta: { page: { total: 9 } } }, 9],
  ])('a total in %s', (_where, body, total) => {
    expect(readPageSignals(body, {}).total).toBe(total);
  });
});

describe('"more exists" in any JSON truthy form', () => {
  it.each([
    ['true', true],
    ['1', true],
    ['2', true],
    ['"true"', true],
    ['" TRUE "', true],
    ['"1"', true],
    ['"yes"', true],
    ['"Y"', true],
    ['"on"', true],
    ['"t"', true],
    ['false', false],
    ['0', false],
    ['0.0', false],
    ['null', false],
    ['"false"', false],
    ['"0"', false],
    ['"no"', false],
    ['"off"', false],
    ['""', false],
  ])('hasMore: %s reads as %s', (text, yes) => {
    const value = json(text);
    expect(truthy(value)).toBe(yes);
    for (const place of ['{"hasMore":V}', '{"has_more":V}', '{"more":V}', '{"meta":{"hasMore":V}}', '{"meta":{"has_more":V}}', '{"pagination":{"has_more":V}}', '{"meta":{"pagination":{"hasMore":V}}}', '{"paging":{"hasNextPage":V}}']) {
      const s = readPageSignals(json(place.replace('V', text)), {});
      expect(s.more, place.replace('V', text)).toBe(yes);
    }
  });

  it.each([['"maybe"'], ['{"a":1}'], ['[true]'], ['"2"']])('hasMore: %s cannot be read: a sign of more', (text) => {
    expect(truthy(json(text))).toBeUndefined();
    const s = readPageSignals(json(`{"meta":{"hasMore":${text}}}`), {});
    expect(s.more).toBe(true);
    expect(s.moreSaid).toMatch(/^meta\.hasMore is .*, not a yes or no$/);
  });

  it('says where and how: meta.hasMore is "true"', () => {
    expect(readPageSignals({ meta: { hasMore: 'true' } }, {}).moreSaid).toBe('meta.hasMore is "true"');
    expect(readPageSignals(json('{"has_more":1}'), {}).moreSaid).toBe('has_more is 1');
  });
});

describe('paging fields that cannot be read', () => {
  it.each([
    ['a total that is not a count', { meta: { total: 'lots' } }, /meta\.total is "lots", not a count of items/],
    ['a page count that is not a number', { meta: { page: 1, totalPages: 'two' } }, /meta\.totalPages is "two", not a count of pages/],
    ['a negative page number', { meta: { page: -1, totalPages: 2 } }, /meta\.page is -1, not a page number/],
    ['two different totals', { total: 9, meta: { total: 10 } }, /the page gives different counts of items \(total 9, meta\.total 10\)/],
    ['a next page that is an object without href', { links: { next: { url: '/x' } } }, /links\.next is .*, not a next page tesync can read/],
    ['a next page token that is an array', { nextPageToken: ['a'] }, /nextPageToken is \["a"\], not a next page tesync can read/],
    ['a next link that is a number', { meta: { next: 2 } }, /meta\.next is 2, not a next page/],
  ])('%s', (_what, body, reason) => {
    const s = readPageSignals(body, {});
    expect(s.unreadable).toHaveLength(1);
    expect(s.unreadable![0]).toMatch(reason);
  });

  it('absent, null, false or empty says nothing', () => {
    expect(readPageSignals({ data: [], meta: { total: null, next: null, nextPageToken: '', hasMore: null }, next_page_url: null, links: { next: false } }, {})).toEqual({
      nexts: [],
      total: undefined,
      more: false,
      moreSaid: undefined,
      page: undefined,
      pages: undefined,
      unreadable: [],
      said: expect.any(Array),
    });
  });
});

describe('a list in numbered pages, read to its last', () => {
  const page = (n: number, body: Record<string, unknown>, context = {}) => ({
    items: Array.from({ length: n }, (_, i) => i),
    meta: readMeta((body.meta as Record<string, unknown>) ?? {}),
    signals: readPageSignals(body, {}, context),
  });

  it('whole when it read as many pages as it says, each the page its place says', () => {
    expect(judgeList([page(3, { meta: { page: 1, totalPages: 2 } }), page(3, { meta: { page: 2, totalPages: 2 } })], 6)).toBeNull();
    expect(judgeList([page(3, { current_page: 1, last_page: 1 })], 3)).toBeNull();
    expect(judgeList([page(0, { meta: { page: 1, totalPages: 0 } })], 0)).toBeNull();
    expect(judgeList([page(3, { meta: { page: 0, totalPages: 2 } }), page(3, { meta: { page: 1, totalPages: 2 } }, { firstPage: 0 })], 6)).toBeNull();
  });

  it('incomplete when it says more pages than tesync could ask', () => {
    expect(judgeList([page(3, { meta: { pageSize: 3, totalPages: 2 } })], 3)).toEqual({ incomplete: 'meta.totalPages = 2, 1 page read' });
    expect(judgeList([page(3, { pagination: { pageCount: 4 } }), page(3, { pagination: { pageCount: 4 } })], 6)).toEqual({ incomplete: 'pagination.pageCount = 4, 2 pages read' });
  });

  it('refused when it read more pages than it says, or a page is not the one asked', () => {
    expect(judgeList([page(3, { meta: { totalPages: 1 } }), page(3, { meta: { totalPages: 1 } })], 6)).toEqual({ refused: 'the list says it has 1 pages (meta.totalPages), 2 were read' });
    expect(judgeList([page(3, { meta: { page: 1, totalPages: 2 } }), page(3, { meta: { page: 1, totalPages: 2 } })], 6)).toEqual({ refused: 'page 2 says it is page 1 (meta.page)' });
  });

  it('refused when a paging field cannot be read; incomplete when the last page says more in any truthy form', () => {
    expect(judgeList([page(3, { meta: { total: 'lots' } })], 3)).toEqual({ refused: 'meta.total is "lots", not a count of items: the list\'s paging is not understood' });
    expect(judgeList([page(3, { hasMore: 'true' })], 3)).toEqual({ incomplete: 'hasMore = "true"' });
    expect(judgeList([page(3, json('{"meta":{"has_more":1}}') as Record<string, unknown>)], 3)).toEqual({ incomplete: 'meta.has_more = 1' });
    expect(judgeList([page(3, { hasMore: 'false' })], 3)).toBeNull();
  });
});
