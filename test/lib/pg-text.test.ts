// What Postgres text holds exactly: the strings of a parsed body it cannot (U+0000, an
// unpaired surrogate), named by a path a person reads; where bytes stop being UTF-8.
import { describe, expect, it } from 'vitest';
import { LosslessNumber, parseJson } from '../../src/lib/json.ts';
import { holdsExactly, jsonPath, notUtf8At, unholdableString, visibleText } from '../../src/lib/pg-text.ts';

const CANNOT = 'which Postgres cannot store exactly';
/** What a body parses to (numbers as LosslessNumbers), from its JSON text. */
const parsed = (text: string) => parseJson(text);
/** Neither U+0000 nor a surrogate code unit, whatever the pair. */
const clean = (s: string) => !/[\u0000\ud800-\udfff]/.test(s);

describe('unholdableString', () => {
  it('finds U+0000 in a value, with the path of its field', () => {
    expect(unholdableString(parsed('{"data":[{"slug":"a","displayName":"x\\u0000y"}]}'))).toEqual({ path: 'data[0].displayName', what: `holds U+0000, ${CANNOT}` });
  });

  it('finds U+0000 in a key, the key shown escaped, never raw', () => {
    const found = unholdableString(parsed('{"data":{"labels":{"ok":"1","note\\u0000":"x"}}}'));
    expect(found).toEqual({ path: 'data.labels["note\\u0000"]', what: `holds U+0000 in its name, ${CANNOT}` });
    expect(clean(found!.path)).toBe(true);
  });

  it('walks nested arrays and names their indexes', () => {
    expect(unholdableString(parsed('{"data":[[1,"a"],[2,["b","c\\u0000"]]]}'))?.path).toBe('data[1][1][1]');
    expect(unholdableString(parsed('[{"a":"ok"},{"a":"n\\u0000"}]'))?.path).toBe('[1].a');
  });

  it('finds a lone high surrogate and a lone low one, by value and by key', () => {
    expect(unholdableString(parsed('{"data":{"name":"smile \\ud83d"}}'))).toEqual({ path: 'data.name', what: `holds an unpaired surrogate U+D83D, ${CANNOT}` });
    expect(unholdableString(parsed('{"data":{"name":"\\ude00 end"}}'))).toEqual({ path: 'data.name', what: `holds an unpaired surrogate U+DE00, ${CANNOT}` });
    // A low half before its high half is no pair.
    expect(unholdableString(parsed('{"a":"\\ude00\\ud83d"}'))?.what).toBe(`holds an unpaired surrogate U+DE00, ${CANNOT}`);
    const key = unholdableString(parsed('{"data":{"k\\ud83d":1}}'));
    expect(key).toEqual({ path: 'data["k\\ud83d"]', what: `holds an unpaired surrogate U+D83D in its name, ${CANNOT}` });
    expect(clean(key!.path)).toBe(true);
  });

  it('leaves a valid pair, other text and numbers alone', () => {
    expect(unholdableString(parsed('{"data":[{"name":"\\ud83d\\ude00 😀","n":1.000000000000000000001,"ok":true,"none":null}]}'))).toBeNull();
    expect(unholdableString(parsed('{"text":"\\\\u0000 is six characters here"}'))).toBeNull();
  });

  it('does not take a LosslessNumber for a string', () => {
    const odd = new LosslessNumber('1');
    (odd as unknown as { value: string }).value = '1\u0000';
    expect(unholdableString({ data: [odd] })).toBeNull();
  });

  it('reports the first in document order, and the whole body by name', () => {
    expect(unholdableString(parsed('{"a":{"b":"\\ud800"},"c":"\\u0000"}'))?.path).toBe('a.b');
    expect(unholdableString(parsed('{"x\\u0000":"\\u0000"}'))?.what).toContain('in its name');
    expect(unholdableString(parsed('"\\u0000"'))).toEqual({ path: 'the body', what: `holds U+0000, ${CANNOT}` });
    expect(unholdableString(parsed('{}'))).toBeNull();
  });
});

describe('jsonPath', () => {
  it('writes names after dots, others as JSON strings in brackets, indexes in brackets', () => {
    expect(jsonPath(['data', 3, 'displayName'])).toBe('data[3].displayName');
    expect(jsonPath(['data', 'a b', '$x', '_y', '9z'])).toBe('data["a b"].$x._y["9z"]');
    expect(jsonPath(['data', 'say "hi"\\'])).toBe('data["say \\"hi\\"\\\\"]');
    expect(jsonPath([0, 'a'])).toBe('[0].a');
    expect(jsonPath([])).toBe('the body');
  });
});

describe('holdsExactly and visibleText', () => {
  it('holds text without U+0000 and without unpaired surrogates', () => {
    expect(holdsExactly('plain 😀 \ufeff')).toBe(true);
    expect(holdsExactly('a\u0000b')).toBe(false);
    expect(holdsExactly('a\ud83d')).toBe(false);
    expect(holdsExactly('\ude00a')).toBe(false);
  });

  it('makes what it cannot hold visible, and leaves the rest as it is', () => {
    expect(visibleText('code\u0000x')).toBe('code\\u0000x');
    expect(visibleText('a\ud83db\ude00 😀')).toBe('a\\ud83db\\ude00 😀');
    expect(visibleText('nothing to do')).toBe('nothing to do');
  });
});

describe('notUtf8At', () => {
  const at = (...bytes: number[]) => notUtf8At(Uint8Array.from(bytes));
  it('finds the first byte that is not UTF-8, the start of a broken sequence', () => {
    expect(notUtf8At(new TextEncoder().encode('{"a":"é😀€"}'))).toBeNull();
    expect(notUtf8At(new Uint8Array())).toBeNull();
    expect(at(0x41, 0xff, 0x41)).toBe(1);
    expect(at(0x41, 0x42, 0xc3)).toBe(2); // cut short
    expect(at(0xc3, 0x41)).toBe(0); // no continuation byte
    expect(at(0xc0, 0xaf)).toBe(0); // overlong
    expect(at(0xe0, 0x80, 0xaf)).toBe(0); // overlong
    expect(at(0xed, 0xa0, 0xbd)).toBe(0); // a surrogate, UTF-8 encoded
    expect(at(0xf4, 0x90, 0x80, 0x80)).toBe(0); // above U+10FFFF
    expect(at(0xf0, 0x9f, 0x98, 0x80, 0x80)).toBe(4); // a stray continuation byte
  });

  it('agrees with a fatal TextDecoder on whether bytes are UTF-8', () => {
    const fatal = new TextDecoder('utf-8', { fatal: true });
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let n = 0; n < 2000; n++) {
      const bytes = Uint8Array.from({ length: 1 + (next() % 6) }, () => [0x41, 0x80, 0xbf, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0x9f, 0xa0][next() % 13]!);
      let ok = true;
      try {
        fatal.decode(bytes);
      } catch {
        ok = false;
      }
      expect(notUtf8At(bytes) === null, Array.from(bytes, (b) => b.toString(16)).join(' ')).toBe(ok);
    }
  });
});
