// The list readers (src/engine/kit/lists.ts), pure: a token list is read item by item (an
// unreadable, unsafe or repeated item counted, never guessed at) and is complete only when
// nothing was counted and meta.count agrees; a catalog item in each accepted form, its marker.
import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { readCatalogItem, readTokenList } from '../../../src/engine/kit/lists.ts';

const item = (slug: string) => ({ slug, displayName: slug.toUpperCase(), coverage: { snapshot: true } });

describe('readTokenList', () => {
  it('keeps the readable items in order, each with the item as sent', () => {
    const data = [item('b'), item('a')];
    const r = readTokenList(data, 2);
    expect(r).toMatchObject({ invalidItems: 0, complete: true });
    expect(r.items.map((i) => i.item.slug)).toEqual(['b', 'a']);
    expect(r.items[0]!.raw).toBe(data[0]);
    // Without a count, a list whose every item is readable is complete.
    expect(readTokenList(data, undefined).complete).toBe(true);
  });

  it('counts a slug seen before as invalid, keeping the first', () => {
    const first = { ...item('a'), symbol: 'ONE' };
    const r = readTokenList([first, item('b'), { ...item('a'), symbol: 'TWO' }], 3);
    expect(r.items.map((i) => i.raw)).toEqual([first, item('b')]);
    expect(r).toMatchObject({ invalidItems: 1, complete: false });
  });

  it('counts each item that is not a token or whose slug cannot go into a URL, and reads the rest', () => {
    const r = readTokenList([item('a'), null, 'b', { slug: '' }, item('a/../b'), item('c')], undefined);
    expect(r.items.map((i) => i.item.slug)).toEqual(['a', 'c']);
    expect(r).toMatchObject({ invalidItems: 4, complete: false });
  });
});

describe('readCatalogItem', () => {
  it('takes the first key and the first link the item gives, in the documented order', () => {
    expect(readCatalogItem({ key: 'k1', chartKey: 'k2', id: 'k3', href: 'h', dataEndpoint: 'd', endpoint: 'e', links: { data: 'l' } })).toMatchObject({ key: 'k1', link: 'h' });
    expect(readCatalogItem({ chartKey: 'k2', id: 'k3', dataEndpoint: 'd', endpoint: 'e' })).toMatchObject({ key: 'k2', link: 'd' });
    // A numeric id keeps its digits.
    expect(readCatalogItem(parse('{"id": 12345678901234567890}'))).toMatchObject({ key: '12345678901234567890', link: null, title: null, section: null });
  });

  it('is null for an item without a key, or not an object', () => {
    expect(readCatalogItem({ title: 'Fees', href: '/x' })).toBeNull();
    expect(readCatalogItem('fees')).toBeNull();
    expect(readCatalogItem(null)).toBeNull();
  });

  it('reads the row count in either spelling and any number form; its freshness without the volatile fields', () => {
    const e = readCatalogItem(parse('{"key": "fees", "row_count": "42", "freshness": {"status": "fresh", "asOf": "2026-06-30T00:00:00Z", "generatedAt": "x"}}'))!;
    expect(e.rowCount).toBe(42);
    expect(e.freshness).toBe('{"status":"fresh"}');
    expect(readCatalogItem(parse('{"key": "fees", "rowCount": 7}'))!.rowCount).toBe(7);
    expect(readCatalogItem({ key: 'fees', rowCount: 'many' })!.rowCount).toBeNull();
  });

  it('a marker follows freshness and row count only; a bare status marks nothing', () => {
    const a = readCatalogItem({ key: 'fees', freshness: { status: 'fresh', asOf: '2026-06-29' }, rowCount: 10, title: 'Fees' })!.marker;
    expect(a).not.toBeNull();
    // A moved asOf and another title are not a change of the chart.
    expect(readCatalogItem({ key: 'fees', freshness: { status: 'fresh', asOf: '2026-06-30' }, rowCount: 10, title: 'Fees, daily' })!.marker).toBe(a);
    expect(readCatalogItem({ key: 'fees', title: 'Fees' })!.marker).toBeNull();
    expect(readCatalogItem({ key: 'fees', freshness: { status: 'fresh', asOf: '2026-06-30' } })!.marker).toBeNull();
  });
});
