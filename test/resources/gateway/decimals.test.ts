import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { decimalReader, rowStatus } from '../../../src/resources/gateway/cells.ts';
import { fitsNumeric, readDecimal as readGatewayDecimal } from '../../../src/schema/upstream/values.ts';

const num = (literal: string) => (parse(`[${literal}]`) as unknown[])[0];

describe('gateway decimals', () => {
  it.each([
    ['30+ significant digits', '123456789012345678901234567890.123456789012'],
    ['negative with 32 digits', '-98765432109876543210.987654321098'],
    ['a tiny negative', '-0.000000000000000000000000000001234567890123456789'],
    ['zero', '0'],
    ['zero with a scale', '0.000'],
    ['a huge exponent-free value', '123456789012345678901234567890123456789012345678901234567890123456789'],
    ['a leading plus', '+42.5'],
  ])('keeps %s exactly as sent', (_what, literal) => {
    expect(readGatewayDecimal(literal)).toEqual({ ok: true, value: literal });
  });

  it('trims whitespace, accepts JSON numbers as their literal, and null as null', () => {
    expect(readGatewayDecimal(' 1.50 ')).toEqual({ ok: true, value: '1.50' });
    expect(readGatewayDecimal(num('12345678901234567890.12345678901234567890'))).toEqual({ ok: true, value: '12345678901234567890.12345678901234567890' });
    expect(readGatewayDecimal(null)).toEqual({ ok: true, value: null });
    expect(readGatewayDecimal(undefined)).toEqual({ ok: true, value: null });
  });

  it.each([['12.3.4'], ['NaN'], ['Infinity'], [''], ['1,000'], ['0x10'], ['abc'], ['1e999999'], ['1e-99999'], ['1e99999999999999999999'], [true], [{}], [[]]])('refuses %j', (bad) => {
    const d = readGatewayDecimal(bad);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.raw).toBe(bad);
  });

  it('knows what Postgres numeric can hold', () => {
    expect(fitsNumeric(`1${'0'.repeat(131_071)}`)).toBe(true);
    expect(fitsNumeric(`1${'0'.repeat(131_072)}`)).toBe(false);
    expect(fitsNumeric(`0.${'1'.repeat(16_383)}`)).toBe(true);
    expect(fitsNumeric(`0.${'1'.repeat(16_384)}`)).toBe(false);
    expect(fitsNumeric('1.5e10')).toBe(true);
    expect(fitsNumeric('0e999999')).toBe(true);
  });

  it('a reader collects the unreadable cells of a row', () => {
    const r = decimalReader();
    expect(r.read('1.5', 'a')).toBe('1.5');
    expect(r.read('oops', 'b')).toBeNull();
    expect(r.read(null, 'c')).toBeNull();
    expect(r.invalid).toEqual(['b']);
    expect(rowStatus(r)).toBe('invalid');
    expect(rowStatus(decimalReader())).toBe('ok');
  });
});
