import { describe, expect, it } from 'vitest';
import { rateLimitReport, type RequestRow } from '../bench/figures.ts';

const row = (bucket: string, httpStatus: number, startedAtMs: number, rateLimitRemaining: number | null = null): RequestRow => ({ bucket, httpStatus, startedAtMs, durationMs: 10, rateLimitRemaining });

describe('bench 429 figures', () => {
  it('counts 429s before headers, after headers, and after the first 429 taught the window, per bucket', () => {
    const report = rateLimitReport([
      row('app-public', 429, 0), // before any headers were read
      row('app-public', 200, 100, 5),
      row('app-public', 429, 200), // after headers: the one that teaches the window
      row('app-public', 200, 300, 9),
      row('app-public', 429, 400), // after the window was known
      row('gateway', 200, 0, 10),
      row('gateway', 429, 50),
    ]);
    expect(report.byBucket['app-public']).toEqual({ total: 3, afterHeaders: 2, afterFirst429: 2 });
    expect(report.byBucket.gateway).toEqual({ total: 1, afterHeaders: 1, afterFirst429: 0 });
    expect([report.total, report.afterHeaders, report.afterFirst429]).toEqual([4, 3, 2]);
  });
});
