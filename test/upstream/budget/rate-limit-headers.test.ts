import { describe, expect, it } from 'vitest';
import { MAX_HEADER_WAIT_MS, parseCount, parseHttpDate, parseReset, parseRetryAfter, readRateLimitHeaders } from '../../../src/upstream/budget/rate-limit-headers.ts';

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
    expect(readRateLimitHeaders(h, NOW)).toEqual({ remaining: 5, limit: 20, resetAtMs: NOW + 2000, form: 'x-ratelimit', retryAfterMs: 4000, serverDateMs: NOW });
  });
});

/** What readRateLimitHeaders makes of these headers (the Date is NOW's unless given). */
function read(fields: Record<string, string>) {
  const { remaining, limit, resetAtMs, form } = readRateLimitHeaders(new Headers({ date: 'Sun, 01 Jun 2025 12:00:00 GMT', ...fields }), NOW);
  return { remaining, limit, resetAtMs, form };
}
const NONE = { remaining: null, limit: null, resetAtMs: null, form: null };

describe('the IETF fields, current draft (RateLimit-Policy / RateLimit)', () => {
  it('reads the named policy: r remaining, t seconds to the reset, q its quota', () => {
    expect(read({ 'ratelimit-policy': '"default";q=100;w=60', ratelimit: '"default";r=5;t=30' })).toEqual({ remaining: 5, limit: 100, resetAtMs: NOW + 30_000, form: 'ietf' });
  });

  it('takes a token as a name, tolerates unknown parameters and whitespace, and needs no policy field', () => {
    expect(read({ 'ratelimit-policy': 'burst;q=10;w=1;pk=:cHsdsRa894=:;x-foo="bar"', ratelimit: '  burst;r=0;t=1;pk=:cHsdsRa894=:;later  ' })).toEqual({ remaining: 0, limit: 10, resetAtMs: NOW + 1000, form: 'ietf' });
    expect(read({ ratelimit: '"default";r=7' })).toEqual({ remaining: 7, limit: null, resetAtMs: null, form: 'ietf' });
  });

  it('of several policies, the one with the least left; at the same count, the later reset', () => {
    const policy = '"burst";q=100;w=60, "daily";q=1000;w=86400';
    expect(read({ 'ratelimit-policy': policy, ratelimit: '"burst";r=50;t=30, "daily";r=3;t=9000' })).toEqual({ remaining: 3, limit: 1000, resetAtMs: NOW + 9_000_000, form: 'ietf' });
    expect(read({ 'ratelimit-policy': policy, ratelimit: '"burst";r=0;t=30, "daily";r=0;t=9000' })).toMatchObject({ remaining: 0, resetAtMs: NOW + 9_000_000 });
    // The same field repeated as two header lines is one list.
    const h = new Headers({ 'ratelimit-policy': policy });
    h.append('ratelimit', '"burst";r=50;t=30');
    h.append('ratelimit', '"daily";r=4;t=60');
    expect(readRateLimitHeaders(h, NOW)).toMatchObject({ remaining: 4, limit: 1000, form: 'ietf' });
  });

  it('leaves out a policy counted in another unit than requests', () => {
    const policy = '"bytes";q=1000000;qu="content-bytes";w=60, "req";q=100;qu="requests";w=60';
    expect(read({ 'ratelimit-policy': policy, ratelimit: '"bytes";r=0;t=60, "req";r=40;t=60' })).toEqual({ remaining: 40, limit: 100, resetAtMs: NOW + 60_000, form: 'ietf' });
    expect(read({ 'ratelimit-policy': '"c";q=5;qu="concurrent-requests"', ratelimit: '"c";r=0' })).toEqual(NONE);
  });

  it('reads a reset in epoch seconds by the X-RateLimit-Reset rule, against the response\'s Date', () => {
    const serverNow = NOW - 60_000; // the server's clock a minute behind ours
    const h = new Headers({ date: new Date(serverNow).toUTCString(), ratelimit: `"default";r=0;t=${serverNow / 1000 + 4}` });
    expect(readRateLimitHeaders(h, NOW)).toMatchObject({ remaining: 0, resetAtMs: NOW + 4000, form: 'ietf' });
  });

  it.each([
    ['not a list', '"default";r=5;t=30,'],
    ['r a string', '"default";r="5";t=30'],
    ['r negative', '"default";r=-1;t=30'],
    ['r a decimal', '"default";r=1.5;t=30'],
    ['r missing', '"default";t=30'],
    ['t a string', '"default";r=5;t="30"'],
    ['t negative', '"default";r=5;t=-30'],
    ['a name that is a number', '5;r=5'],
    ['an inner list', '("default");r=5'],
    ['one policy of two unreadable', '"a";r=5;t=30, "b";r=zero'],
    ['unbalanced quotes', '"default;r=5'],
    ['a non-ASCII byte', '"défault";r=5'],
    ['an integer of 16 digits', '"default";r=1234567890123456'],
  ])('refuses the whole field when %s', (_why, value) => {
    expect(read({ ratelimit: value })).toEqual(NONE);
  });

  it('refuses the current draft whole when its policy field does not parse', () => {
    expect(read({ 'ratelimit-policy': '"default";q=100;w=60,,', ratelimit: '"default";r=5;t=30' })).toEqual(NONE);
  });
});

describe('the IETF fields, draft 07 (RateLimit as a Dictionary)', () => {
  it('reads limit, remaining, reset', () => {
    expect(read({ 'ratelimit-policy': '100;w=60', ratelimit: 'limit=100, remaining=25, reset=5' })).toEqual({ remaining: 25, limit: 100, resetAtMs: NOW + 5000, form: 'ietf-draft7' });
  });

  it.each([['remaining=many, reset=5'], ['limit=100, reset=5'], ['limit=100, remaining=2, reset=soon'], ['limit=100, remaining=-2']])('refuses %j', (value) => {
    expect(read({ ratelimit: value })).toEqual(NONE);
  });
});

describe('the IETF fields, earlier drafts (RateLimit-Limit / -Remaining / -Reset)', () => {
  it('reads delta-seconds', () => {
    expect(read({ 'ratelimit-limit': '30', 'ratelimit-remaining': '0', 'ratelimit-reset': '7' })).toEqual({ remaining: 0, limit: 30, resetAtMs: NOW + 7000, form: 'ietf-legacy' });
  });

  it('reads an epoch reset by the X-RateLimit-Reset rule, against the response\'s Date', () => {
    const serverNow = NOW + 3_600_000;
    const h = new Headers({ date: new Date(serverNow).toUTCString(), 'ratelimit-limit': '30', 'ratelimit-remaining': '0', 'ratelimit-reset': String(serverNow / 1000 + 9) });
    expect(readRateLimitHeaders(h, NOW)).toMatchObject({ remaining: 0, limit: 30, resetAtMs: NOW + 9000, form: 'ietf-legacy' });
  });

  it('reads a limit that lists its policies after it, and counts with parameters', () => {
    expect(read({ 'ratelimit-limit': '10, 10;w=1, 50;w=60', 'ratelimit-remaining': '9;w=1', 'ratelimit-reset': '1' })).toEqual({ remaining: 9, limit: 10, resetAtMs: NOW + 1000, form: 'ietf-legacy' });
  });

  it('ignores what does not parse, field by field', () => {
    expect(read({ 'ratelimit-limit': '30', 'ratelimit-remaining': '5 requests', 'ratelimit-reset': '7' })).toEqual({ remaining: null, limit: 30, resetAtMs: NOW + 7000, form: 'ietf-legacy' });
    expect(read({ 'ratelimit-remaining': '0x10' })).toEqual(NONE);
    expect(read({ 'ratelimit-remaining': '1e3' })).toEqual(NONE);
    expect(read({ 'ratelimit-remaining': '' })).toEqual(NONE);
    expect(read({ 'ratelimit-remaining': '3', 'ratelimit-reset': 'Sun, 01 Jun 2025 12:00:09 GMT' })).toEqual({ remaining: 3, limit: null, resetAtMs: null, form: 'ietf-legacy' });
  });
});

describe('X-RateLimit-* read as before, more strictly', () => {
  it.each([['19abc'], ['19 20'], ['0x10'], ['+3']])('refuses the count %j', (value) => {
    expect(read({ 'x-ratelimit-remaining': value })).toEqual(NONE);
  });
});

describe('several spellings on one response', () => {
  it('the one with the least left decides, whole: never a limit of one with the count of another', () => {
    expect(read({ 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '900', 'x-ratelimit-reset': '60', 'ratelimit-policy': '"s";q=10;w=1', ratelimit: '"s";r=2;t=1' })).toEqual({ remaining: 2, limit: 10, resetAtMs: NOW + 1000, form: 'ietf' });
    expect(read({ 'x-ratelimit-limit': '20', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '9', 'ratelimit-limit': '100', 'ratelimit-remaining': '50', 'ratelimit-reset': '1' })).toEqual({ remaining: 0, limit: 20, resetAtMs: NOW + 9000, form: 'x-ratelimit' });
  });

  it('at the same count, the later reset; then the current draft first', () => {
    expect(read({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '30', 'ratelimit-remaining': '0', 'ratelimit-reset': '5' })).toMatchObject({ resetAtMs: NOW + 30_000, form: 'x-ratelimit' });
    expect(read({ 'x-ratelimit-remaining': '4', 'ratelimit-remaining': '4', ratelimit: '"p";r=4' })).toMatchObject({ form: 'ietf' });
    // A reset known beats one unknown.
    expect(read({ 'x-ratelimit-remaining': '0', ratelimit: '"p";r=0;t=3' })).toMatchObject({ form: 'ietf', resetAtMs: NOW + 3000 });
  });

  it('a spelling refused leaves the others to speak', () => {
    expect(read({ ratelimit: '"p";r=oops', 'x-ratelimit-remaining': '6' })).toMatchObject({ remaining: 6, form: 'x-ratelimit' });
  });

  it('none with a count: the first that says anything (a limit alone)', () => {
    expect(read({ 'x-ratelimit-limit': '20' })).toEqual({ remaining: null, limit: 20, resetAtMs: null, form: 'x-ratelimit' });
    expect(read({})).toEqual(NONE);
  });
});
