import { describe, expect, it } from 'vitest';
import { isLosslessNumber, parseJson, stringifyJson } from '../../src/json.ts';
import { readDecimal } from '../../schema/upstream/values.ts';

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

  it('never produces a JS number', () => {
    const v = parseJson('{"x":[1,2.5,{"y":3}]}');
    expect(typeof get(v, 'x', 0)).not.toBe('number');
    expect(typeof get(v, 'x', 2, 'y')).not.toBe('number');
  });

  it('keeps strings, including decimal strings, as strings', () => {
    const v = parseJson('{"price":"98765432109876543210.000000001"}');
    expect(get(v, 'price')).toBe('98765432109876543210.000000001');
  });

  it('keeps the last of duplicate keys, as JSON.parse and jsonb do', () => {
    expect(stringifyJson(parseJson('{"a":1,"a":2}'))).toBe('{"a":2}');
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
