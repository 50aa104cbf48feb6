import { describe, expect, it } from 'vitest';
import { decimalText, InvalidDecimalError, isLosslessNumber, parseJson, readDecimal, stringifyJson } from '../../src/json.ts';

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

describe('decimalText / readDecimal', () => {
  it('reads numeric strings exactly', () => {
    expect(decimalText('123456789012345678901234567890.000000000000000000000000000001')).toBe('123456789012345678901234567890.000000000000000000000000000001');
    expect(decimalText('-42')).toBe('-42');
    expect(decimalText('0')).toBe('0');
    expect(decimalText('0.0')).toBe('0.0');
    expect(decimalText('1.5E-7')).toBe('1.5E-7');
    expect(decimalText('100000000000000000000000000000000000000000')).toBe('100000000000000000000000000000000000000000');
  });

  it('gives null for absent values', () => {
    expect(decimalText(null)).toBeNull();
    expect(decimalText(undefined)).toBeNull();
  });

  it('accepts safe integers and bigints, which are exact', () => {
    expect(decimalText(42)).toBe('42');
    expect(decimalText(-7)).toBe('-7');
    expect(decimalText(12345678901234567890123n)).toBe('12345678901234567890123');
  });

  it.each([['abc'], [''], ['1.'], ['.5'], ['1,5'], ['NaN'], ['Infinity'], ['0x10'], ['1e'], ['--1'], [0.1], [Number.NaN], [true], [{}], [[]]])(
    'marks %j invalid instead of guessing',
    (v) => {
      const r = readDecimal(v);
      expect(r.ok).toBe(false);
      expect(() => decimalText(v)).toThrow(InvalidDecimalError);
    },
  );

  it('carries the offending value on the error', () => {
    try {
      decimalText('n/a');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidDecimalError);
      expect((err as InvalidDecimalError).value).toBe('n/a');
    }
  });
});
