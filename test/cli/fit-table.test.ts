// The demo's closing query table within a terminal's width (src/cli/fit-table.ts), and the
// demo summary's line for the tokens a demo of fewer --tokens delisted.
import { describe, expect, it } from 'vitest';
import { tokensLine } from '../../src/cli/demo.ts';
import { demoCalendar } from '../../src/cli/demo-simulator.ts';
import { fitRows, fitText, shortNumber } from '../../src/cli/fit-table.ts';
import { displayWidth } from '../../src/lib/display-width.ts';

const widest = (text: string) => Math.max(...text.split('\n').map(displayWidth));

describe('shortNumber', () => {
  it('says a number in a few characters: a magnitude from a thousand on, four digits below', () => {
    expect(shortNumber('1234567890.123456789')).toBe('1.23B');
    expect(shortNumber('-456789012.5')).toBe('-457M');
    expect(shortNumber('999950.1')).toBe('1M');
    expect(shortNumber('12345.678')).toBe('12.3k');
    expect(shortNumber('12.3456789')).toBe('12.35');
    expect(shortNumber('0.000123456789')).toBe('0.0001235');
    expect(shortNumber('3.2e15')).toBe('3200T');
    // Already short, or not a number: as it is.
    expect(shortNumber('12.5')).toBe('12.5');
    expect(shortNumber('n/a')).toBe('n/a');
  });
});

describe('fitRows', () => {
  const rows = [
    { token_slug: 'bobby-tables', display_name: `Robert'); DROP TABLE tokens;--`, multiple_30d: '12.3456789012', effective_market_cap: '1234567890.123456789', annualized_revenue: '98765432.1098' },
    { token_slug: 'nihon-swap', display_name: '日本スワップ', multiple_30d: '7.1', effective_market_cap: '55555.5', annualized_revenue: null },
    { token_slug: 'rocket-fuel', display_name: 'Rocket Fuel 🚀', multiple_30d: '0.000123456', effective_market_cap: '-42', annualized_revenue: '1' },
  ];

  it('keeps a table that fits whole, numbers exact', () => {
    const t = fitRows([{ a: 'x', n: '1234567.891' }], 79);
    expect(t).toEqual({ text: `a  ${' '.repeat(10)}n\n-  -----------\nx  1234567.891\n`, rounded: false });
  });

  it('fits 79 columns: numbers rounded and right-aligned, one space between columns, then the widest text cut with an ellipsis', () => {
    const t = fitRows(rows, 79);
    expect(t.rounded).toBe(true);
    expect(widest(t.text)).toBeLessThanOrEqual(79);
    const lines = t.text.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/^token_slug +display_name +multiple_30d effective_market_cap annualized_revenue$/);
    // The long name is cut, not the column names.
    expect(lines[2]).toMatch(/^bobby-tables Robert'\); DR… +12\.35 +1\.23B +98\.8M$/);
    expect(lines[3]).toMatch(/^nihon-swap {3}日本スワップ +7\.1 +55\.6k$/);
    expect(lines[4]).toMatch(/ 0\.0001235 +-42 +1$/);
  });

  it('cuts the first column, which tells the rows apart, only once the others are down to their headers', () => {
    const t = fitRows([{ token_slug: 'basalt-finance', display_name: 'Basalt Finance Protocol Token', multiple_30d: '222.5', effective_market_cap: '40700000000', annualized_revenue: '488000000' }], 79);
    expect(t.text.split('\n')[2]).toMatch(/^basalt-finan… Basalt Fina… +222\.5 +40\.7B +488M$/);
    expect(widest(t.text)).toBe(79);
  });

  it('breaks the lines of a table that cannot fit, never wider than asked', () => {
    const many = [Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`column_${i}`, `value ${i}`]))];
    expect(widest(fitRows(many, 79).text)).toBeLessThanOrEqual(79);
    expect(fitRows([], 79).text).toBe('(no rows)\n');
  });

  it('fitText breaks a long line between words, indented past its own indent', () => {
    expect(fitText(`  ${'word '.repeat(20).trim()}\nshort`, 30)).toBe(
      ['  word word word word word', '    word word word word word', '    word word word word word', '    word word word word word', 'short'].join('\n'),
    );
  });
});

describe('the demo summary says what a demo of fewer tokens delisted', () => {
  it('nothing delisted: only the counts', () => {
    expect(tokensLine([{ source: 'app', listed: 12, delisted: 0 }, { source: 'gateway', listed: 12, delisted: 0 }])).toBe('  tokens: 12 (app), 12 (gateway)');
  });

  it('how many, why, and how to list them again', () => {
    expect(tokensLine([{ source: 'app', listed: 3, delisted: 9 }, { source: 'gateway', listed: 3, delisted: 9 }])).toBe(
      '  tokens: 3 (app), 3 (gateway); this demo delisted 9 of each: the simulator now lists 3 (--tokens 3); `tesync demo --tokens 12` lists them again',
    );
    expect(tokensLine([{ source: 'app', listed: 3, delisted: 9 }, { source: 'gateway', listed: 3, delisted: 0 }])).toContain('this demo delisted 9 (app): ');
  });
});

describe('the demo calendar', () => {
  it('ends today (UTC) and starts on the first of the month a year before', () => {
    expect(demoCalendar(new Date('2026-11-29T23:59:00Z'))).toEqual({ lastDate: '2026-11-29', historyDays: 394 });
    expect(demoCalendar(new Date('2026-12-01T00:00:01Z'))).toEqual({ lastDate: '2026-12-01', historyDays: 366 });
    // A later day of the month adds a day; the first day stays.
    expect(demoCalendar(new Date('2026-12-02T12:00:00Z')).historyDays).toBe(367);
  });
});
