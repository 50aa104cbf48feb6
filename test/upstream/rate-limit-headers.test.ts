import { describe, expect, it } from 'vitest';
import { MAX_HEADER_WAIT_MS, parseCount, parseHttpDate, parseReset, parseRetryAfter, readRateLimitHeaders } from '../../src/upstream/rate-limit-headers.ts';

const NOW = Date.parse('2025-06-01T12:00:00.000Z');

describe('parseRetryAfter', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('3', NOW)).toBe(3000);
    expect(parseRetryAfter(' 120 ', NOW)).toBe(120_000);
    expect(parseRetryAfter('1.5', NOW)).toBe(1500);
  });

  it('reads an HTTP-date against our clock', () => {
    expect(parseRetryAfter('Sun, 01 Jun 2025 12:00:03 GMT', NOW)).toBe(3000);
    // RFC 850 and asctime forms
    expect(parseRetryAfter('Sunday, 01-Jun-25 12:00:05 GMT', NOW)).toBe(5000);
  });

  it('reads an HTTP-date against the server Date header when given (clock skew)', () => {
    const serverNow = NOW + 3_600_000; // server an hour ahead
    expect(parseRetryAfter('Sun, 01 Jun 2025 13:00:03 GMT', NOW, serverNow)).toBe(3000);
  });

  it.each([['0'], ['-5'], ['soon'], [''], ['3s'], ['Sun, 01 Jun 2025 11:59:00 GMT'], ['Sun, 01 Jun 2025 12:00:00 GMT'], [null], [undefined]])(
    '%j is not usable (fall back to backoff)',
    (v) => {
      expect(parseRetryAfter(v, NOW)).toBeNull();
    },
  );

  it('caps absurd waits', () => {
    expect(parseRetryAfter('99999999', NOW)).toBe(MAX_HEADER_WAIT_MS);
  });
});

describe('parseReset', () => {
  it('reads delta-seconds as an absolute time', () => {
    expect(parseReset('2', NOW)).toBe(NOW + 2000);
    expect(parseReset('0', NOW)).toBe(NOW);
  });

  it('reads epoch seconds and epoch milliseconds', () => {
    expect(parseReset(String(NOW / 1000 + 7), NOW)).toBe(NOW + 7000);
    expect(parseReset(String(NOW + 1500), NOW)).toBe(NOW + 1500);
  });

  it('corrects epoch resets for the server clock', () => {
    const serverNow = NOW - 60_000; // server a minute behind
    expect(parseReset(String(serverNow / 1000 + 2), NOW, serverNow)).toBe(NOW + 2000);
  });

  it('treats a slightly past epoch as "now", and garbage or long past as unknown', () => {
    expect(parseReset(String(NOW / 1000 - 1), NOW)).toBe(NOW);
    expect(parseReset(String(NOW / 1000 - 3600), NOW)).toBeNull();
    expect(parseReset('tomorrow', NOW)).toBeNull();
    expect(parseReset('-3', NOW)).toBeNull();
    expect(parseReset(undefined, NOW)).toBeNull();
  });
});

describe('parseCount / parseHttpDate', () => {
  it('reads counts', () => {
    expect(parseCount('19')).toBe(19);
    expect(parseCount('0')).toBe(0);
    expect(parseCount('19;w=2')).toBe(19);
    expect(parseCount('-1')).toBeNull();
    expect(parseCount('1.5')).toBeNull();
    expect(parseCount('many')).toBeNull();
    expect(parseCount(null)).toBeNull();
  });

  it('only takes things that look like dates', () => {
    expect(parseHttpDate('Sun, 01 Jun 2025 12:00:00 GMT')).toBe(NOW);
    expect(parseHttpDate('3')).toBeNull();
    expect(parseHttpDate('garbage')).toBeNull();
  });
});

describe('readRateLimitHeaders', () => {
  it('reads every header of a response', () => {
    const h = new Headers({
      date: 'Sun, 01 Jun 2025 12:00:00 GMT',
      'x-ratelimit-remaining': '5',
      'x-ratelimit-limit': '20',
      'x-ratelimit-reset': String(NOW / 1000 + 2),
      'retry-after': '4',
    });
    expect(readRateLimitHeaders(h, NOW)).toEqual({ remaining: 5, limit: 20, resetAtMs: NOW + 2000, retryAfterMs: 4000, serverDateMs: NOW });
  });
});
