// An HTTP-date Retry-After read against the response's own Date header: a server clock 30 s
// off either way still means the 2 s it says.
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { freshSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { createTestLogger } from '../helpers/services.ts';
import { syncOnce } from '../helpers/sync.ts';
import { recordFigure } from '../helpers/fault-figures.ts';

const log = createTestLogger([], 'warn');

describe('Retry-After under clock skew', () => {
  it.each([30_000, -30_000])('clock skew of %i ms: an HTTP-date Retry-After still means 2 s, no more, no less', async (skew) => {
    const { sim: skewed, tw: tw2 } = await freshSimAndWarehouse({ tokens: 3, historyDays: 10, chartsPerToken: 1, seed: 5, retryAfterForm: 'http-date', faults: { dateSkewMs: skew } });
    // The 429 states the server's time and the date 2 s after it (whole seconds, as HTTP has
    // them), however long it then takes to be asked for: against our clock, the date would be
    // 32 s away, or 28 s past.
    const serverNow = Math.floor((Date.now() + skew) / 1000) * 1000;
    skewed.script('/api/v1/metrics', [{ status: 429, code: 'rate_limited', retryAfter: new Date(serverNow + 2000).toUTCString(), headers: { Date: new Date(serverNow).toUTCString() } }]);
    const run = await syncOnce(skewed, tw2.warehouse, log.logger, {}, ['app']);
    expect(run.status).toBe('succeeded');
    const held = await tw2.warehouse.query<{ ms: number | null }>(sql`select retry_after_ms as ms from sync.requests where run_id = ${run.runId} and http_status = 429`);
    expect(held).toEqual([{ ms: 2000 }]);
    const first429 = skewed.requests.find((r) => r.status === 429)!;
    const next = skewed.requests.find((r) => r.seq > first429.seq && r.bucket === 'app-public')!;
    expect(next.at - first429.at).toBeGreaterThanOrEqual(2000);
    recordFigure(`upstream.skew${skew}`, { waitedMs: next.at - first429.at });
  });
});
