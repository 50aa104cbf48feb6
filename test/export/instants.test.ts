// Pure: `--as-of` and `--since` read as the contract says (src/export/instants.ts).
import { describe, expect, it } from 'vitest';
import { readDay, readInstant } from '../../src/export/instants.ts';

describe('readInstant', () => {
  it('is UTC unless it carries an offset, and keeps the microsecond', () => {
    expect(readInstant('2026-12-07 01:00:00')).toEqual({ iso: '2026-12-07T01:00:00.000000Z' });
    expect(readInstant('2026-12-07T01:00:00.123456Z')).toEqual({ iso: '2026-12-07T01:00:00.123456Z' });
    expect(readInstant('2026-12-07T10:00:00.5+09:00')).toEqual({ iso: '2026-12-07T01:00:00.500000Z' });
    expect(readInstant('2026-12-06 20:00:00-0500')).toEqual({ iso: '2026-12-07T01:00:00.000000Z' });
    expect(readInstant('2026-12-07 01:00:00.000001+00')).toEqual({ iso: '2026-12-07T01:00:00.000001Z' });
    expect(readInstant('2026-12-07')).toEqual({ iso: '2026-12-07T00:00:00.000000Z' });
    expect(readInstant('2026-12-07T00:30')).toEqual({ iso: '2026-12-07T00:30:00.000000Z' });
    // Across a day, a month and a year boundary; a leap day; a year below 100.
    expect(readInstant('2027-01-01T08:00:00+09:00')).toEqual({ iso: '2026-12-31T23:00:00.000000Z' });
    expect(readInstant('2024-02-29T12:00:00Z')).toEqual({ iso: '2024-02-29T12:00:00.000000Z' });
    expect(readInstant('0050-06-01T00:00:00Z')).toEqual({ iso: '0050-06-01T00:00:00.000000Z' });
  });

  it('refuses words, finer fractions, days and times that do not exist, and text that is not an instant', () => {
    for (const word of ['epoch', 'infinity', '-infinity', 'now', 'today', 'Tomorrow', 'allballs']) expect(readInstant(word)).toMatchObject({ error: expect.stringMatching(/is a word/) });
    expect(readInstant('2026-12-07T01:00:00.1234567Z')).toMatchObject({ error: expect.stringMatching(/finer than a microsecond/) });
    expect(readInstant('2026-02-30T00:00:00Z')).toMatchObject({ error: expect.stringMatching(/not a day of the calendar/) });
    expect(readInstant('2025-02-29')).toMatchObject({ error: expect.stringMatching(/not a day/) });
    expect(readInstant('2026-13-01')).toMatchObject({ error: expect.stringMatching(/not a day/) });
    expect(readInstant('2026-12-07T24:00:00Z')).toMatchObject({ error: expect.stringMatching(/not a time of day/) });
    expect(readInstant('2026-12-07T01:00:00+16:00')).toMatchObject({ error: expect.stringMatching(/not an offset/) });
    for (const bad of ['', '1765000000', '12/07/2026', '2026-12-07T01:00:00 Asia/Tokyo', '2026-12-07T01:00:00PST']) expect(readInstant(bad)).toHaveProperty('error');
  });
});

describe('readDay', () => {
  it('takes days of the calendar only', () => {
    expect(readDay('2024-02-29')).toEqual({ day: '2024-02-29' });
    expect(readDay('2026-02-30')).toMatchObject({ error: expect.stringMatching(/not a day of the calendar/) });
    expect(readDay('2026-13-01')).toHaveProperty('error');
    expect(readDay('2026-1-01')).toMatchObject({ error: 'a day as YYYY-MM-DD' });
  });
});
