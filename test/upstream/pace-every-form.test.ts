// Pacing from every standard rate-limit form, end to end: the simulator at tight rates announces
// its budget in one spelling only (the seeds' X-RateLimit-*, the current IETF draft's
// RateLimit-Policy / RateLimit, or the earlier RateLimit-Limit / -Remaining / -Reset), and three
// syncs run one after the other, each on a budget of its own in the store `tesync sync` shares
// (PostgresBudget in the warehouse, as three processes would). Counted, not timed: requests the
// simulator received into a window it had announced exhausted, 429s, and the remaining budget
// recorded in sync.requests.
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { RATE_LIMIT_FIELDS, type RateLimitFields } from '../../sim/index.ts';
import { performSync } from '../../src/cli/sync-session.ts';
import { PostgresBudget } from '../../src/upstream/budget/postgres-budget.ts';
import { FAST_RETRY_POLICY } from '../../src/upstream/retry-policy.ts';
import { recordFigure } from '../helpers/fault-figures.ts';
import { useSimAndWarehouse } from '../helpers/mirror-fixture.ts';
import { patience } from '../helpers/patience.ts';
import { canaryKey, createTestLogger, uniqueName } from '../helpers/services.ts';
import { simConfig } from '../helpers/sync.ts';

const appKey = canaryKey('app');
const gatewayKey = canaryKey('gw');
const log = createTestLogger([appKey, gatewayKey], 'warn');
const SYNCS = 3;
/** Tight: the public and gateway buckets run dry in every sync. */
const TIGHT = { limit: 3, windowMs: 1000 };

interface FormFigures {
  requests: number;
  tooMany: number;
  intoExhausted: number;
  recorded: number;
  withRemaining: number;
  runs: string[];
  perBucket: Record<string, number>;
}
const figures: Partial<Record<RateLimitFields, FormFigures>> = {};

afterAll(() => {
  recordFigure('upstream.paceEveryForm', figures);
});

describe.each(RATE_LIMIT_FIELDS)('the budget announced as %s', (form) => {
  const fx = useSimAndWarehouse({
    tokens: 2,
    historyDays: 5,
    chartsPerToken: 1,
    seed: 707,
    appKeys: { [appKey]: { scopes: ['tokens:read'], credits: 'all' } },
    gatewayKeys: [gatewayKey],
    rateLimits: { appPublic: TIGHT, appKey: TIGHT, gateway: TIGHT },
    rateLimitFields: form,
  });

  it(`${SYNCS} syncs send nothing into a window announced exhausted, and record the remaining budget`, async () => {
    const prefix = uniqueName('tesync_paceform');
    const config = simConfig(fx.sim, { appKey, gatewayKey }, ['app', 'gateway']);
    const runs: string[] = [];
    for (let i = 0; i < SYNCS; i++) {
      // A budget of its own per sync, on the shared store: what one sync learned, the next reads.
      const budget = new PostgresBudget({ warehouse: fx.warehouse, prefix, leaseMs: config.requestTimeoutMs + 1000 });
      try {
        const run = await performSync(config, log.logger, fx.warehouse, { sources: ['app', 'gateway'], trigger: 'test', retry: FAST_RETRY_POLICY, budget });
        runs.push(run.status);
      } finally {
        await budget.close();
      }
    }
    const received = fx.sim.requests.filter((r) => r.bucket !== 'none');
    const [rec] = await fx.warehouse.query<{ n: number; remaining: number }>(
      sql`select count(*)::int as n, count(rate_limit_remaining)::int as remaining from sync.requests where http_status is not null`,
    );
    const f: FormFigures = {
      requests: received.length,
      tooMany: received.filter((r) => r.status === 429).length,
      intoExhausted: received.filter((r) => r.intoExhausted).length,
      recorded: rec!.n,
      withRemaining: rec!.remaining,
      runs,
      perBucket: Object.fromEntries(['app-public', 'app-key', 'gateway'].map((b) => [b, received.filter((r) => r.bucket === b).length])),
    };
    figures[form] = f;
    expect(runs, JSON.stringify(f)).toEqual(Array(SYNCS).fill('succeeded'));
    // Tight enough to matter: the public and gateway buckets each needed more than a window's
    // budget in every sync.
    expect(f.perBucket['app-public']).toBeGreaterThan(SYNCS * TIGHT.limit);
    expect(f.perBucket.gateway).toBeGreaterThan(SYNCS * TIGHT.limit);
    // Every answer that reached tesync told it the budget, whichever form told it.
    expect(f.withRemaining).toBe(f.recorded);
    if (form !== 'x-ratelimit') {
      expect(f.intoExhausted, JSON.stringify(f)).toBe(0);
      expect(f.tooMany, JSON.stringify(f)).toBe(0);
    }
  }, patience(180_000));
});

describe('the IETF forms against X-RateLimit-*', () => {
  it('no more 429s, none sent into a window announced exhausted', () => {
    const x = figures['x-ratelimit'];
    expect(x, 'the X-RateLimit-* syncs ran').toBeDefined();
    for (const form of RATE_LIMIT_FIELDS.filter((f) => f !== 'x-ratelimit')) {
      const f = figures[form];
      expect(f, `the ${form} syncs ran`).toBeDefined();
      expect(f!.tooMany).toBeLessThanOrEqual(x!.tooMany);
      expect(f!.intoExhausted).toBeLessThanOrEqual(x!.intoExhausted);
    }
  });
});
