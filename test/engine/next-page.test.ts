// The next-page forms a list reader follows, and when a list read to its end is whole, without IO.
import { describe, expect, it } from 'vitest';
import { incompleteness } from '../../src/engine/fetch-list.ts';
import { againstPage, chooseNext, nextFromLinkHeader, readPageSignals } from '../../src/engine/next-page.ts';
import { readMeta } from '../../src/schema/upstream/envelope.ts';
import { parseJson } from '../../src/lib/json.ts';

const signals = (body: unknown, headers: Record<string, string> = {}) => readPageSignals(body, headers);
const next = (body: unknown, headers: Record<string, string> = {}, page = '/api/v1/tokens') => chooseNext(signals(body, headers).nexts, page);

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
    expect(next(body)).toEqual({ cursor: 'abc' });
  });

  it('a numeric cursor keeps its digits', () => {
    expect(next(parseJson('{"meta":{"nextCursor":12345678901234567890}}'))).toEqual({ cursor: '12345678901234567890' });
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
    expect(againstPage('\\\\evil.invalid/v1/tokens', '/v1/tokens')).toBe('http://evil.invalid/v1/tokens');
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
    expect(incompleteness([page(7, { count: 7 }), page(6, { count: 6 })], 13)).toBeNull();
    expect(incompleteness([page(7, { count: 13 }), page(6, { count: 13 })], 13)).toBeNull();
    expect(incompleteness([page(7, { count: 7, total: 13 }), page(6, { count: 6, total: 13 })], 13)).toBeNull();
    expect(incompleteness([page(3)], 3)).toBeNull();
  });

  it('is refused when a total says more, a count says neither the page nor the list, or the last page says more', () => {
    expect(incompleteness([page(7, { total: 14 }), page(6, { total: 14 })], 13)).toMatch(/14 items, 13 were read/);
    expect(incompleteness([page(6, { total: 7 })], 6)).toMatch(/7 items, 6 were read/);
    expect(incompleteness([page(7, { count: 9 }), page(6)], 13)).toMatch(/meta.count says 9/);
    expect(incompleteness([page(5, { count: 13 })], 5)).toMatch(/meta.count says 13 items, the list has 5/);
    expect(incompleteness([page(7), page(6, { hasMore: true })], 13)).toMatch(/more items exist/);
  });
});
