import { describe, expect, it } from 'vitest';
import { stringify } from 'lossless-json';
import { DuplicateKeyError, isLosslessNumber, jsonText, LosslessNumber, parseJson, stringifyJson, writeJson } from '../../src/lib/json.ts';
import { readDecimal } from '../../src/schema/upstream/values.ts';
import { Rng } from '../../sim/random.ts';

const decimalText = (v: unknown) => {
  const d = readDecimal(v);
  if (!d.ok) throw new Error('not a decimal');
  return d.value;
};

const get = (v: unknown, ...keys: (string | number)[]): unknown => keys.reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], v);

describe('parseJson / stringifyJson', () => {
  it('keeps every number as its literal, beyond what a JS number can hold', () => {
    const text = '{"a":123456789012345678901234567890.123456789,"b":-0.000000000000000000000000000001234,"c":0,"d":1e400,"e":[1.10,-0]}';
    const v = parseJson(text);
    expect(isLosslessNumber(get(v, 'a'))).toBe(true);
    expect(decimalText(get(v, 'a'))).toBe('123456789012345678901234567890.123456789');
    expect(decimalText(get(v, 'b'))).toBe('-0.000000000000000000000000000001234');
    expect(decimalText(get(v, 'c'))).toBe('0');
    expect(decimalText(get(v, 'd'))).toBe('1e400');
    expect(decimalText(get(v, 'e', 0))).toBe('1.10');
    expect(stringifyJson(v)).toBe(text);
  });

  it('parses numbers to real LosslessNumbers', () => {
    const n = get(parseJson('{"n":12.50}'), 'n') as LosslessNumber;
    expect(n).toBeInstanceOf(LosslessNumber);
    expect(isLosslessNumber(n)).toBe(true);
    expect(n.toString()).toBe('12.50');
    expect(n.valueOf()).toBe(12.5);
    expect(stringify({ n })).toBe('{"n":12.50}');
  });

  it('never produces a JS number', () => {
    const v = parseJson('{"x":[1,2.5,{"y":3}]}');
    expect(typeof get(v, 'x', 0)).not.toBe('number');
    expect(typeof get(v, 'x', 2, 'y')).not.toBe('number');
  });

  it('keeps strings, including decimal strings, as strings', () => {
    const v = parseJson('{"price":"98765432109876543210.000000001"}');
    expect(get(v, 'price')).toBe('98765432109876543210.000000001');
  });

  it('refuses a key named twice in one object, whatever its values, at any depth', () => {
    expect(() => parseJson('{"a":1,"a":2}')).toThrow(DuplicateKeyError);
    expect(() => parseJson('{"a":1,"a":1.0}')).toThrow(DuplicateKeyError);
    // The same value twice is refused too: lossless-json alone would keep one silently.
    expect(() => parseJson('{"a":1,"a":1}')).toThrow(/"a" appears twice in one object \(at character 8\)/);
    expect(() => parseJson('{"a":{"b":[null]},"a":{"b":[null]}}')).toThrow(DuplicateKeyError);
    expect(() => parseJson('{"data":[{"x":{"effectiveMarketCap":"1","effectiveMarketCap":"2"}}]}')).toThrow(/"effectiveMarketCap" appears twice/);
    expect(() => parseJson('{"data":[{"x":{"effectiveMarketCap":"1", "effectiveMarketCap" : "1"}}]}')).toThrow(/"effectiveMarketCap" appears twice/);
    // One name, spelt two ways.
    expect(() => parseJson('{"a":true,"\\u0061":true}')).toThrow(/"a" appears twice/);
    expect(() => parseJson('{"__proto__":{},"__proto__":{}}')).toThrow(/"__proto__" appears twice/);
    const deep = `${'['.repeat(500)}{"k":null,"k":null}${']'.repeat(500)}`;
    expect(() => parseJson(deep)).toThrow(DuplicateKeyError);
    // The same key in two objects, or at two depths, is no duplicate.
    expect(stringifyJson(parseJson('[{"a":1},{"a":2}]'))).toBe('[{"a":1},{"a":2}]');
    expect(stringifyJson(parseJson('{"a":{"a":{"a":1}}}'))).toBe('{"a":{"a":{"a":1}}}');
  });

  it('is not fooled by quotes, colons and backslashes inside strings', () => {
    const text = String.raw`{"a\\":"x\\\":y","b":":","c":["\\",":\"",{"d":"\"a\":1"}],"\"a":"a\"", "e" :1}`;
    expect(Object.keys(parseJson(text) as object)).toEqual(['a\\', 'b', 'c', '"a', 'e']);
    expect(() => parseJson(text.replace('"e"', '"b"'))).toThrow(/"b" appears twice/);
    expect(() => parseJson(text.replace('"e"', String.raw`"\"a"`))).toThrow(/"\\"a" appears twice/);
  });

  it('does not pollute prototypes', () => {
    const v = parseJson('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(v)).toEqual(['__proto__']);
  });

  it('throws on invalid JSON', () => {
    expect(() => parseJson('{"a":')).toThrow(SyntaxError);
    expect(() => parseJson('<html>')).toThrow(SyntaxError);
    expect(() => parseJson('')).toThrow();
  });
});

// The simulator's seeded generator: the same values every run.
function random(seed: number): () => number {
  const r = new Rng(seed);
  return () => r.next();
}

const STRINGS = ['', 'plain', 'quote " and \\ backslash', 'tab\tnew\nline', '\u0000nul', 'é ünï 💰', '\ud800 lone surrogate', '</script>'];

function randomValue(r: () => number, depth: number): unknown {
  const pick = Math.floor(r() * (depth > 3 ? 6 : 9));
  switch (pick) {
    case 0: return null;
    case 1: return r() < 0.5;
    case 2: return STRINGS[Math.floor(r() * STRINGS.length)];
    case 3: return new LosslessNumber(['0', '-0', '1.10', '123456789012345678901234567890.5', '1e400', '-2.5E-7'][Math.floor(r() * 6)]!);
    case 4: return [0.1, -3, 1e21, Number.NaN][Math.floor(r() * 4)];
    case 5: return [undefined, () => 1, Symbol('s'), new Date(Date.UTC(2024, 1, 29)), 12n][Math.floor(r() * 5)];
    case 6: return Array.from({ length: Math.floor(r() * 5) }, () => randomValue(r, depth + 1));
    case 7: {
      const inner = randomValue(r, depth + 1);
      return { toJSON: () => inner };
    }
    default: return Object.fromEntries(Array.from({ length: Math.floor(r() * 5) }, (_, i) => [STRINGS[(i + Math.floor(r() * 8)) % STRINGS.length]! + i, randomValue(r, depth + 1)]));
  }
}

/**
 * JSON text of a random value whose member names are drawn from STRINGS (quotes, backslashes,
 * colons, unicode), some written with a `\u` escape; with `repeat`, one object names one of its
 * members twice, with the same value text, spelt the same or the other way.
 */
function randomText(r: () => number, repeat: boolean): string {
  let repeated = !repeat;
  const name = (s: string, escaped: boolean) => (escaped && s.length > 0 && JSON.stringify(s)[1] === s[0] ? `"\\u${s.charCodeAt(0).toString(16).padStart(4, '0')}${JSON.stringify(s).slice(2)}` : JSON.stringify(s));
  const value = (depth: number): string => {
    const pick = Math.floor(r() * (depth > 4 ? 3 : 5));
    if (pick === 0) return JSON.stringify(STRINGS[Math.floor(r() * STRINGS.length)]);
    if (pick === 1) return ['0', '-1.5e3', 'null', 'true', '12345678901234567890.1'][Math.floor(r() * 5)]!;
    if (pick === 2) return `"${':,{}[]"'.split('').map((c) => (c === '"' ? '\\"' : c)).join('')}"`;
    if (pick === 3) return `[${Array.from({ length: Math.floor(r() * 4) }, () => value(depth + 1)).join(', ')}]`;
    const keys = STRINGS.filter(() => r() < 0.5);
    const members = keys.map((k) => [k, value(depth + 1)] as const);
    if (!repeated && members.length > 0 && (r() < 0.3 || depth > 3)) {
      repeated = true;
      const [k, v] = members[Math.floor(r() * members.length)]!;
      members.splice(Math.floor(r() * (members.length + 1)), 0, [k, v]);
    }
    return `{${members.map(([k, v]) => `${name(k, r() < 0.2)} :${v}`).join(',')}}`;
  };
  for (;;) {
    const text = `{"data":${value(0)}}`;
    if (repeated) return text;
  }
}

describe('parseJson, duplicate names at random', () => {
  it('refuses exactly the texts that repeat a name in one object', () => {
    const r = random(11);
    for (let i = 0; i < 500; i++) {
      const plain = randomText(r, false);
      // Through JS numbers on both sides: the same members, in the same order.
      expect(JSON.stringify(JSON.parse(stringifyJson(parseJson(plain))))).toBe(JSON.stringify(JSON.parse(plain)));
      expect(() => parseJson(randomText(r, true))).toThrow(DuplicateKeyError);
    }
  });
});

describe('writeJson', () => {
  it('writes exactly what lossless-json stringify writes, values without a JSON form included', () => {
    const r = random(7);
    let compared = 0;
    for (let i = 0; i < 2000; i++) {
      const v = randomValue(r, 0);
      const expected = stringify(v);
      const chunks: string[] = [];
      const ok = writeJson(v, (c) => chunks.push(c), 8);
      expect(ok).toBe(expected !== undefined);
      if (expected !== undefined) {
        expect(chunks.join('')).toBe(expected);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(1500);
  });

  it('hands out bounded chunks and one flat string', () => {
    const big = parseJson(`[${Array.from({ length: 5000 }, (_, i) => `{"k":${i}.5,"s":"v${i}"}`).join(',')}]`);
    const chunks: string[] = [];
    expect(writeJson(big, (c) => chunks.push(c), 1000)).toBe(true);
    expect(chunks.length).toBeGreaterThan(50);
    // a chunk ends at the first token past the bound
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThan(1100);
    expect(jsonText(big)).toBe(stringify(big));
    expect(jsonText(undefined)).toBeUndefined();
    expect(() => stringifyJson(() => 1)).toThrow(TypeError);
  });
});
