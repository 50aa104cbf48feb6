import { describe, expect, it } from 'vitest';
import { RateLimiter, resetValue, retryAfterValue, secondsUntil } from '../../sim/rate-limit.ts';

describe('fixed-window rate limiter', () => {
  it('counts per bucket and key, and starts a new window after windowMs', () => {
    const rl = new RateLimiter({ appPublic: { limit: 2, windowMs: 10_000 } });
    const t0 = 1_000_000;
    expect(rl.take('app-public', 'ip:a', t0)).toMatchObject({ allowed: true, remaining: 1, resetAt: t0 + 10_000 });
    expect(rl.take('app-public', 'ip:a', t0 + 1)).toMatchObject({ allowed: true, remaining: 0 });
    expect(rl.take('app-public', 'ip:a', t0 + 2)).toMatchObject({ allowed: false, remaining: 0 });
    expect(rl.take('app-public', 'ip:b', t0 + 2).allowed).toBe(true);
    expect(rl.peek('app-public', 'ip:a', t0 + 3)).toMatchObject({ allowed: false });
    expect(rl.take('app-public', 'ip:a', t0 + 10_000)).toMatchObject({ allowed: true, remaining: 1, resetAt: t0 + 20_000 });
  });

  it('is effectively unlimited without a limit, and configure() starts over', () => {
    const rl = new RateLimiter({ gateway: { limit: 1, windowMs: 1000 } });
    expect(rl.take('app-key', 'k', 0).limit).toBe(1_000_000);
    rl.take('gateway', 'ip', 0);
    expect(rl.take('gateway', 'ip', 1).allowed).toBe(false);
    rl.configure({ gateway: { limit: 1, windowMs: 1000 } });
    expect(rl.take('gateway', 'ip', 2).allowed).toBe(true);
  });
});

describe('Retry-After and X-RateLimit-Reset', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0, 250);
  it('rounds delta-seconds up, at least 1', () => {
    expect(secondsUntil(now + 1500, now)).toBe(2);
    expect(secondsUntil(now, now)).toBe(1);
    expect(retryAfterValue('seconds', now + 30_000, now, 0)).toBe('30');
  });
  it('writes an HTTP-date on the skewed clock, never earlier than the reset', () => {
    const v = retryAfterValue('http-date', now + 30_000, now, 0);
    expect(v).toBe('Thu, 01 Jan 2026 12:00:31 GMT');
    expect(Date.parse(v)).toBeGreaterThanOrEqual(now + 30_000);
    expect(retryAfterValue('http-date', now + 30_000, now, 3_600_000)).toBe('Thu, 01 Jan 2026 13:00:31 GMT');
  });
  it('writes the reset as delta or epoch seconds', () => {
    expect(resetValue('delta', now + 59_001, now, 0)).toBe('60');
    expect(Number(resetValue('epoch', now + 59_001, now, 0))).toBe(Math.ceil(now / 1000) + 60);
  });
});
