// The numbers of a command line, read one way by every command (src/cli/flag-values.ts).
import { describe, expect, it } from 'vitest';
import { positiveNumberFlag, wholeNumberFlag } from '../../src/cli/flag-values.ts';

describe('wholeNumberFlag', () => {
  it.each(['0', '7', '100000'])('%j is read', (raw) => expect(wholeNumberFlag('--n', raw, 0, 100_000)).toBe(Number(raw)));
  it.each(['', ' 7', '-3', '2.5', '0x10', '1e3', 'abc', '100001', '99999999999999999999'])('%j: exit 2 naming the flag and the value', (raw) => {
    expect(() => wholeNumberFlag('--n', raw, 0, 100_000)).toThrow(`--n must be a whole number from 0 to 100000, not ${JSON.stringify(raw)}`);
  });
});

describe('positiveNumberFlag', () => {
  it.each([['24', 24], ['1.5', 1.5], ['0.25', 0.25]])('%j is read', (raw, n) => expect(positiveNumberFlag('--max-age', raw, 'hours', '24')).toBe(n));
  it.each(['', '0', '0.0', '-1', 'abc', '24h', '1e3', 'Infinity', '.5'])('%j: exit 2 naming the flag and the value', (raw) => {
    expect(() => positiveNumberFlag('--max-age', raw, 'hours', '24')).toThrow(`--max-age must be a number of hours greater than 0 (e.g. --max-age 24), not ${JSON.stringify(raw)}`);
  });
});
