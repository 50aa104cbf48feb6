// A refusal is as small as the thing refused (src/engine/kit/item-refusals.ts), pure: the strings
// Postgres cannot hold that the client located (src/upstream/body.ts `locate`) are judged item
// by item: inside an item, that item is refused alone and named with the field; outside every
// item (the envelope, meta, beside the list), the body is refused whole. An item shaped unlike
// its siblings is refused alone too; a token list reads the rest and plans from a refused
// item whose slug is clean, and is never whole while one is refused.
import { describe, expect, it } from 'vitest';
import { locateInItems, NAMED_REFUSALS, refusalDetails, splitItems } from '../../../src/engine/kit/item-refusals.ts';
import { readTokenList } from '../../../src/engine/kit/lists.ts';
import { parseJson } from '../../../src/lib/json.ts';
import { unholdableStrings } from '../../../src/lib/pg-text.ts';
import { MAX_LOCATED, readJsonBody } from '../../../src/upstream/body.ts';
import type { BoundedResponse } from '../../../src/upstream/http.ts';

const CANNOT = 'which Postgres cannot store exactly';

/** A 200 whose text is `text`, exactly its bytes. */
const response = (text: string): BoundedResponse => ({ status: 200, statusText: 'OK', headers: new Headers(), text, raw: new TextEncoder().encode(text), notUtf8At: null, bytes: text.length });

/** The body parsed, the strings located, and the items: `data`, or what `listOf` finds in it. */
function read(text: string, listOf: (data: any) => unknown[] = (d) => d) {
  const body = parseJson(text) as { data: unknown };
  return { body, unholdable: unholdableStrings(body), items: listOf(body.data) };
}

describe('unholdableStrings: every string Postgres cannot hold, with the segments of its path', () => {
  it('finds each, in document order, names and values, and stops at a limit', () => {
    const body = parseJson('{"data":[{"a":"x\\u0000"},{"b\\ud800":1},["\\udc00"]],"meta":{"note":"\\u0000"}}');
    const found = unholdableStrings(body);
    expect(found.map((f) => f.at)).toEqual([['data', 0, 'a'], ['data', 1, 'b\ud800'], ['data', 2, 0], ['meta', 'note']]);
    expect(found.map((f) => f.path)).toEqual(['data[0].a', 'data[1]["b\\ud800"]', 'data[2][0]', 'meta.note']);
    expect(found[1]!.what).toBe(`holds an unpaired surrogate U+D800 in its name, ${CANNOT}`);
    expect(unholdableStrings(body, 2)).toHaveLength(2);
    expect(unholdableStrings(parseJson('{"data":[{"a":"x"}]}'))).toEqual([]);
  });
});

describe('readJsonBody: located, not refused, only when asked', () => {
  const text = '{"data":[{"slug":"a","displayName":"x\\u0000y"}],"meta":{}}';

  it('refuses a body holding U+0000 unless asked to locate it', () => {
    expect(readJsonBody(response(text))).toEqual({ ok: false, retry: false, reason: `not understood: data[0].displayName holds U+0000, ${CANNOT}` });
    const located = readJsonBody(response(text), { locate: true });
    expect(located.ok).toBe(true);
    expect(located.ok && located.unholdable?.map((u) => u.path)).toEqual(['data[0].displayName']);
  });

  it('a clean body comes back with nothing located; bytes that are not UTF-8 are refused whole all the same', () => {
    const clean = readJsonBody(response('{"data":[]}'), { locate: true });
    expect(clean).toEqual({ ok: true, body: { data: [] } });
    const notUtf8 = { ...response('{"data":["caf\ufffd"]}'), notUtf8At: 13 };
    expect(readJsonBody(notUtf8, { locate: true })).toEqual({ ok: false, retry: false, reason: 'not understood: body is not valid UTF-8 (byte 13)' });
  });

  it(`past ${MAX_LOCATED} strings the body is refused whole`, () => {
    const items = Array.from({ length: MAX_LOCATED + 1 }, (_, i) => `{"slug":"t${i}","displayName":"\\u0000"}`);
    const r = readJsonBody(response(`{"data":[${items.join(',')}]}`), { locate: true });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(new RegExp(`more than ${MAX_LOCATED} strings .*the first: data\\[0\\]\\.displayName holds U\\+0000`));
  });
});

describe('locateInItems', () => {
  it('a string inside an item refuses that item, named by its field; the first string of an item names it', () => {
    const { body, unholdable, items } = read('{"data":[{"slug":"a"},{"slug":"b","displayName":"x\\u0000","symbol":"\\ud800"},{"slug":"c","labels":{"k\\u0000":1}}]}');
    expect(locateInItems(body, unholdable, items)).toEqual({
      refused: new Map([
        [1, `data[1].displayName holds U+0000, ${CANNOT}`],
        [2, `data[2].labels["k\\u0000"] holds U+0000 in its name, ${CANNOT}`],
      ]),
    });
  });

  it('an item that is itself such a string is refused', () => {
    const { body, unholdable, items } = read('{"data":[{"slug":"a"},"x\\u0000"]}');
    expect(locateInItems(body, unholdable, items)).toEqual({ refused: new Map([[1, `data[1] holds U+0000, ${CANNOT}`]]) });
  });

  it('items nested in data (an object holding the list) are found where they are', () => {
    const listOf = (d: any) => d.items;
    const { body, unholdable, items } = read('{"data":{"items":[{"key":"a"},{"key":"b","title":"\\ud83d"}]}}', listOf);
    expect(locateInItems(body, unholdable, items)).toEqual({ refused: new Map([[1, `data.items[1].title holds an unpaired surrogate U+D83D, ${CANNOT}`]]) });
  });

  it.each([
    ['in meta', '{"data":[{"slug":"a"}],"meta":{"note":"\\u0000"}}', 'meta.note'],
    ['beside the items, in data', '{"data":{"items":[{"key":"a"}],"note":"\\u0000"}}', 'data.note'],
    ['in a name of the envelope', '{"data":[{"slug":"a"}],"x\\u0000":1}', 'x\\u0000'],
    ['in another array of the body', '{"data":{"items":[{"key":"a"}],"others":[{"key":"\\u0000"}]}}', 'data.others[0].key'],
  ])('a string %s refuses the body whole', (_where, text, path) => {
    const { body, unholdable, items } = read(text, (d) => (Array.isArray(d) ? d : d.items));
    const r = locateInItems(body, unholdable, items);
    expect('whole' in r && r.whole).toContain(path);
    expect('whole' in r && r.whole).toMatch(/outside every item of the list$/);
  });

  it('one string outside refuses the body whole even when others are inside items', () => {
    const { body, unholdable, items } = read('{"data":[{"slug":"a","n":"\\u0000"}],"meta":{"m":"\\u0000"}}');
    expect(locateInItems(body, unholdable, items)).toHaveProperty('whole');
  });
});

describe('splitItems', () => {
  it('refuses the located items and items shaped unlike their siblings, in order; the rest is read', () => {
    const a = { slug: 'a' };
    const b = { slug: 'b' };
    const c = { slug: 'c' };
    const items = [a, 'loose', b, null, [1], c];
    const r = splitItems({ items, refused: new Map([[b, 'data[2].displayName holds U+0000']]) });
    expect(r.understood).toEqual([a, c]);
    expect(r.refused.map((x) => [x.index, x.reason])).toEqual([
      [1, 'item 1 of the list is a string where its siblings are objects'],
      [2, 'data[2].displayName holds U+0000'],
      [3, 'item 3 of the list is null where its siblings are objects'],
      [4, 'item 4 of the list is an array where its siblings are objects'],
    ]);
  });

  it('a list of no objects has no shape to differ from; a reader may ask for no shapes', () => {
    expect(splitItems({ items: ['a', 'b'] })).toEqual({ understood: ['a', 'b'], refused: [] });
    expect(splitItems({ items: [{ a: 1 }, 'b'] }, { shapes: false }).refused).toEqual([]);
    expect(splitItems({ items: undefined })).toEqual({ understood: [], refused: [] });
  });

  it('details name the first refused items, count them all, and are empty without any', () => {
    const refused = Array.from({ length: NAMED_REFUSALS + 5 }, (_, i) => ({ index: i, item: i, reason: `r${i}` }));
    const d = refusalDetails(refused);
    expect(d.refusedItems).toBe(NAMED_REFUSALS + 5);
    expect(d.refused).toHaveLength(NAMED_REFUSALS);
    expect(refusalDetails([])).toEqual({});
  });
});

describe('readTokenList with an item refused alone', () => {
  const token = (slug: string, displayName = slug) => ({ slug, displayName, coverage: { snapshot: true, charts: true } });

  it('writes the others, plans the refused item from its clean slug, and is not whole', () => {
    const poisoned = token('b', 'B\u0000');
    const data = [token('a'), poisoned, token('c')];
    const r = readTokenList(data, 3, new Map([[poisoned, `data[1].displayName holds U+0000, ${CANNOT}`]]));
    expect(r.items.map((i) => i.item.slug)).toEqual(['a', 'c']);
    expect(r.plannedOnly.map((i) => i.slug)).toEqual(['b']);
    expect(r.plannedOnly[0]!.coverage).toEqual({ snapshot: true, charts: true });
    expect(r).toMatchObject({ complete: false, invalidItems: 1 });
    expect(r.refused.map((x) => x.reason)).toEqual([`data[1].displayName holds U+0000, ${CANNOT}`]);
  });

  it('a refused item whose slug is not usable plans nothing; an unreadable item is named too', () => {
    const poisoned = { slug: 'b/../x', displayName: '\u0000' };
    const r = readTokenList([token('a'), poisoned, { nope: 1 }], undefined, new Map([[poisoned, 'data[1].displayName holds U+0000']]));
    expect(r.plannedOnly).toEqual([]);
    expect(r.items.map((i) => i.item.slug)).toEqual(['a']);
    expect(r.refused.map((x) => x.reason)).toEqual(['data[1].displayName holds U+0000', expect.stringMatching(/^item 2 of the list: not a token item/)]);
    expect(r.complete).toBe(false);
  });

  it('without refusals it reads as before: whole', () => {
    expect(readTokenList([token('a'), token('b')], 2)).toMatchObject({ complete: true, invalidItems: 0, plannedOnly: [], refused: [] });
  });
});
