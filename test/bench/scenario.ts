// The bench scenario: what the simulator serves, how fast, and under which rate budget.
// Shared by the orchestrator (test/bench/run.ts) and its child processes.
import type { Period, Timeframe } from '../../sim/dataset-types.ts';
import type { SimOptions } from '../../sim/index.ts';

export const APP_KEY = 'bench_app_key_0123456789';
export const GATEWAY_KEY = 'bench_gw_key_0123456789';

export interface BucketBudget {
  limit: number;
  windowMs: number;
}

export interface Scenario {
  tokens: number;
  historyDays: number;
  chartsPerToken: number;
  seed: number;
  /** Simulated server latency per request, [min, max] ms. */
  latencyMs: [number, number];
  /** Per upstream bucket; null: unlimited (the simulator still sends headers). */
  budgets: { appPublic: BucketBudget | null; appKey: BucketBudget | null; gateway: BucketBudget | null };
  /** TE_CONCURRENCY of the sync. */
  concurrency: number;
  gatewayPeriods: Period[];
  gatewayTimeframes: Timeframe[];
  /** The simulator serves its lists (token lists, screeners, chart catalogs) in pages of this many items; 0: whole. */
  pageSize: number;
}

/**
 * A paid plan's budget: 600 requests a minute on each bucket (300 on the app key), a 50-150
 * ms round trip. At 500 tokens that puts the floor near six minutes, above the CPU the whole
 * pipeline (simulator, tesync, Postgres) needs on two cores, so the budget decides.
 */
export const DEFAULT_SCENARIO: Scenario = {
  tokens: 500,
  historyDays: 1095,
  chartsPerToken: 5,
  seed: 42,
  latencyMs: [50, 150],
  budgets: {
    appPublic: { limit: 600, windowMs: 60_000 },
    appKey: { limit: 300, windowMs: 60_000 },
    gateway: { limit: 600, windowMs: 60_000 },
  },
  concurrency: 8,
  gatewayPeriods: ['365d'],
  gatewayTimeframes: ['all'],
  pageSize: 0,
};

export function simOptions(s: Scenario): SimOptions {
  return {
    tokens: s.tokens,
    historyDays: s.historyDays,
    chartsPerToken: s.chartsPerToken,
    seed: s.seed,
    latencyMs: s.latencyMs,
    appKeys: { [APP_KEY]: { scopes: ['tokens:read'], credits: 'all' } },
    gatewayKeys: [GATEWAY_KEY],
    rateLimits: { appPublic: s.budgets.appPublic, appKey: s.budgets.appKey, gateway: s.budgets.gateway },
    ...(s.pageSize > 0 ? { paging: { pageSize: s.pageSize } } : {}),
  };
}

/** The environment `tesync sync` would run with against the simulator at `url`. */
export function syncEnv(s: Scenario, url: string): Record<string, string> {
  return {
    TE_APP_URL: url,
    TE_APP_API_KEY: APP_KEY,
    TE_GATEWAY_URL: url,
    TE_GATEWAY_API_KEY: GATEWAY_KEY,
    TE_CONCURRENCY: String(s.concurrency),
    TE_GATEWAY_HISTORY_PERIODS: s.gatewayPeriods.join(','),
    TE_GATEWAY_CHART_TIMEFRAMES: s.gatewayTimeframes.join(','),
    // A whole window may pass before a bucket has budget again.
    TE_MAX_RATE_WAIT_MS: String(Math.max(120_000, ...bucketList(s).map((b) => 3 * b.budget.windowMs))),
    LOG_LEVEL: 'warn',
  };
}

export type BucketName = 'app-public' | 'app-key' | 'gateway';

export function bucketList(s: Scenario): { bucket: BucketName; budget: BucketBudget }[] {
  const out: { bucket: BucketName; budget: BucketBudget }[] = [];
  if (s.budgets.appPublic) out.push({ bucket: 'app-public', budget: s.budgets.appPublic });
  if (s.budgets.appKey) out.push({ bucket: 'app-key', budget: s.budgets.appKey });
  if (s.budgets.gateway) out.push({ bucket: 'gateway', budget: s.budgets.gateway });
  return out;
}
