// The Structured Field parser the IETF rate-limit fields are read with (RFC 8941 / RFC 9651):
// what parses, as what, and what is refused whole.
import { describe, expect, it } from 'vitest';
import { parseDictionary, parseItem, parseList } from '../../src/upstream/structured-fields.ts';

describe('structured fields', () => {
  it('parses a list of items with parameters, every bare item type', () => {
    const list = parseList('"a";q=1, tok;w=-2;f=1.25;b=?0;flag, :aGk=:, @1700000000, %"caf%c3%a9", (1 2);x');
    expect(list).toEqual([
      { item: { type: 'string', value: 'a' }, params: new Map([['q', { type: 'integer', value: 1 }]]) },
      {
        item: { type: 'token', value: 'tok' },
        params: new Map([
          ['w', { type: 'integer', value: -2 }],
          ['f', { type: 'decimal', value: 1.25 }],
          ['b', { type: 'boolean', value: false }],
          ['flag', { type: 'boolean', value: true }],
        ]),
      },
      { item: { type: 'bytes', value: 'aGk=' }, params: new Map() },
      { item: { type: 'date', value: 1700000000 }, params: new Map() },
      { item: { type: 'displaystring', value: 'café' }, params: new Map() },
      { inner: [{ item: { type: 'integer', value: 1 }, params: new Map() }, { item: { type: 'integer', value: 2 }, params: new Map() }], params: new Map([['x', { type: 'boolean', value: true }]]) },
    ]);
    expect(parseList('')).toEqual([]);
    expect(parseList('"esc\\"aped\\\\"')?.[0]).toMatchObject({ item: { type: 'string', value: 'esc"aped\\' } });
  });

  it('parses a dictionary; a key without a value is true', () => {
    const d = parseDictionary('limit=100, remaining=5, on;x=1');
    expect([...d!.keys()]).toEqual(['limit', 'remaining', 'on']);
    expect(d!.get('remaining')).toEqual({ item: { type: 'integer', value: 5 }, params: new Map() });
    expect(d!.get('on')).toEqual({ item: { type: 'boolean', value: true }, params: new Map([['x', { type: 'integer', value: 1 }]]) });
  });

  it.each([
    ['a trailing comma', 'a, b,'],
    ['a double comma', 'a,, b'],
    ['text after an item', '5 requests'],
    ['an unterminated string', '"abc'],
    ['a bad escape', '"a\\n"'],
    ['an integer of 16 digits', '1234567890123456'],
    ['a decimal of 4 fraction digits', '1.2345'],
    ['a decimal ending in a dot', '1.'],
    ['an upper-case key', 'a;Q=1'],
    ['a non-ASCII character', 'ä'],
    ['a bad boolean', '?2'],
    ['bad base64', ':a*b:'],
    ['a bad display string escape', '%"%C3%A9"'],
  ])('refuses %s', (_why, value) => {
    expect(parseList(value)).toBeNull();
  });

  it('an item is one item only', () => {
    expect(parseItem(' 42;w=1 ')).toEqual({ item: { type: 'integer', value: 42 }, params: new Map([['w', { type: 'integer', value: 1 }]]) });
    expect(parseItem('42, 43')).toBeNull();
    expect(parseItem('')).toBeNull();
    expect(parseItem(null)).toBeNull();
    expect(parseDictionary('"a"=1')).toBeNull();
  });
});
