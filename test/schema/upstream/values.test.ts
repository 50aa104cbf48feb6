import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { readDecimal, readTime, stableMarker, versionMarker } from '../../../src/schema/upstream/values.ts';

const num = (literal: string) => (parse(`[${literal}]`) as unknown[])[0];

describe('readDecimal', () => {
  it.each([
    ['123456789012345678901234567890.123456789', '123456789012345678901234567890.123456789'],
    ['-0.000000000000000000000000001', '-0.000000000000000000000000001'],
    ['0', '0'],
    ['1E+21', '1E+21'],
  ])('keeps the JSON number literal %s exactly', (literal, text) => {
    expect(readDecimal(num(literal))).toEqual({ ok: true, value: text });
  });

  it('accepts numeric strings and null, refuses the rest', () => {
    expect(readDecimal('98765432109876543210.5')).toEqual({ ok: true, value: '98765432109876543210.5' });
    expect(readDecimal(null)).toEqual({ ok: true, value: null });
    expect(readDecimal(undefined)).toEqual({ ok: true, value: null });
    for (const bad of ['12.3.4', 'NaN', 'Infinity', '', '1,000', true, {}, [], 0.1 + 0.2]) expect(readDecimal(bad).ok, String(bad)).toBe(false);
    // Exact JS values are fine: safe integers and bigints.
    expect(readDecimal(42)).toEqual({ ok: true, value: '42' });
    expect(readDecimal(2n ** 80n)).toEqual({ ok: true, value: '1208925819614629174706176' });
  });
});

describe('readTime', () => {
  it('reads ISO dates, timestamps and epoch seconds or milliseconds as the same instant', () => {
    const want = '2026-03-01T00:00:00.000Z';
    expect(readTime('2026-03-01')?.toISOString()).toBe(want);
    expect(readTime('2026-03-01T00:00:00Z')?.toISOString()).toBe(want);
    expect(readTime('2026-03-01T01:00:00+01:00')?.toISOString()).toBe(want);
    expect(readTime(num('1772323200'))?.toISOString()).toBe(want);
    expect(readTime(num('1772323200000'))?.toISOString()).toBe(want);
    expect(readTime('1772323200')?.toISOString()).toBe(want);
  });

  it('returns null for what is not a time', () => {
    for (const bad of ['yesterday', '2026-13-45', null, {}, num('-5')]) expect(readTime(bad)).toBeNull();
  });
});

describe('stableMarker', () => {
  it('is the same whatever the key order', () => {
    expect(stableMarker({ a: 1, b: { c: 2, d: 3 } })).toBe(stableMarker({ b: { d: 3, c: 2 }, a: 1 }));
    expect(stableMarker(null)).toBeNull();
    expect(stableMarker('fresh')).toBe('fresh');
  });
});

describe('versionMarker', () => {
  it('is a marker only when it can move with the data', () => {
    expect(versionMarker('fresh')).toBeNull();
    expect(versionMarker({ status: 'fresh' })).toBeNull();
    expect(versionMarker({ status: 'fresh', asOf: '2026-06-30' })).toBe(stableMarker({ status: 'fresh', asOf: '2026-06-30' }));
    expect(versionMarker({ freshness: 'fresh', rowCount: 120 })).not.toBeNull();
  });
});
