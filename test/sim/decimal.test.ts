import { describe, expect, it } from 'vitest';
import { canonicalDecimal, compareDecimal, decimalFromFloat, isCanonicalDecimal, significantDigits } from '../../sim/decimal.ts';
import { Rng, choose, hash32 } from '../../sim/random.ts';

describe('decimal strings', () => {
  it('makes canonical literals with exactly the asked significant digits', () => {
    const rng = new Rng(7);
    for (const x of [1.5, 123456.789, -0.000123, 9.99999999999, 1.2345e23, 0.5, 1, 100, -42]) {
      for (const digits of [12, 18, 25, 32]) {
        const s = decimalFromFloat(x, digits, rng);
        expect(isCanonicalDecimal(s), s).toBe(true);
        expect(significantDigits(s), s).toBe(digits);
        expect(s).not.toMatch(/e/i);
        expect(Math.abs(Number(s) - x) / Math.abs(x)).toBeLessThan(1e-9);
      }
    }
    expect(decimalFromFloat(0, 20, rng)).toBe('0');
  });

  it('writes huge magnitudes without exponent', () => {
    const s = decimalFromFloat(1.2345678901234567e23, 28, new Rng(1));
    expect(s).toMatch(/^123456789012\d{12}\.\d{4}$/);
  });

  it('canonicalises and compares exactly', () => {
    expect(canonicalDecimal('-000.500')).toBe('-0.5');
    expect(canonicalDecimal('-0.000')).toBe('0');
    expect(canonicalDecimal('0012')).toBe('12');
    expect(compareDecimal('12345678901234567890.1', '12345678901234567890.01')).toBe(1);
    expect(compareDecimal('-2', '-10')).toBe(1);
    expect(compareDecimal('-0.1', '0')).toBe(-1);
    expect(compareDecimal('3.10', '3.1')).toBe(0);
    expect(compareDecimal('99', '100')).toBe(-1);
  });
});

describe('seeded randomness', () => {
  it('is reproducible and key-dependent', () => {
    const a = new Rng(hash32(42, 'x'));
    const b = new Rng(hash32(42, 'x'));
    const c = new Rng(hash32(42, 'y'));
    const sa = [a.next(), a.next(), a.next()];
    expect([b.next(), b.next(), b.next()]).toEqual(sa);
    expect([c.next(), c.next(), c.next()]).not.toEqual(sa);
    expect(choose(['a', 'b', 'c'], 1, 'k')).toBe(choose(['a', 'b', 'c'], 1, 'k'));
  });
});
