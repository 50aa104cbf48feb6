// An HTTP-date Retry-After read against the response's own Date header: a server clock 30 s
// off either way still means the 2 s it says. Timed, so run alone (vitest.config.ts).
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../sim/index.ts';
import { createTestLogger, createTestWarehouse } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';
import { recordFigure } from '../helpers/fault-figures.ts';

const log = createTestLogger([], 'warn');

describe('Retry-After under clock skew', () => {
  it.each([30_000, -30_000])('clock skew of %i ms: an HTTP-date Retry-After still means 2 s, no more, no less', async (skew) => {
    const skewed = await startSimulator({ tokens: 3, historyDays: 10, chartsPerToken: 1, seed: 5, retryAfterForm: 'http-date', faults: { dateSkewMs: skew } });
    const tw2 = await createTestWarehouse();
    try {
      const retryAt = new Date(Date.now() + skew + 2000).toUTCString();
      skewed.script('/api/v1/metrics', [{ status: 429, code: 'rate_limited', retryAfter: retryAt }]);
      const run = await syncOnce(skewed, tw2.warehouse, log.logger, {}, ['app']);
      expect(run.status).toBe('succeeded');
      const first429 = skewed.requests.find((r) => r.status === 429)!;
      const next = skewed.requests.find((r) => r.seq > first429.seq && r.bucket === 'app-public')!;
      // An HTTP-date has whole seconds: the wait is 1-2 s by the server's clock, never 30 s and never 0.
      expect(next.at - first429.at).toBeGreaterThanOrEqual(900);
      expect(next.at - first429.at).toBeLessThan(5000);
      recordFigure(`upstream.skew${skew}`, { waitedMs: next.at - first429.at });
    } finally {
      await skewed.close();
      await tw2.cleanup();
    }
  });
});
