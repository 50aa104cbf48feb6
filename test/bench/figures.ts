// Pure arithmetic of the bench: what a sync must request, the floor the rate budget sets,
// what the request log says about 429s, and what a run wrote to the versioned tables. No IO here, so the smoke test can check it.
import { chooseTimeframes } from '../../src/resources/gateway/timeframes.ts';
import { GATEWAY_TIMEFRAMES } from '../../src/lib/variables.ts';
import type { SimDataset } from '../../sim/dataset-types.ts';
import type { BucketName, Scenario } from './scenario.ts';

export type PerBucket = Record<BucketName, number>;

export const emptyBuckets = (): PerBucket => ({ 'app-public': 0, 'app-key': 0, gateway: 0 });

export const total = (b: PerBucket): number => b['app-public'] + b['app-key'] + b.gateway;

/**
 * The distinct resources the coverage flags say exist, by bucket: what a full sync cannot do
 * without. Lists and screeners count once; per token only the routes its coverage has (a
 * gateway trend that is not materialized, a chart catalog of a token without charts, are not
 * necessary even though tesync cannot know that before asking).
 */
export function requestsNecessary(data: SimDataset, s: Pick<Scenario, 'gatewayPeriods' | 'gatewayTimeframes'> & Partial<Pick<Scenario, 'pageSize'>>): PerBucket {
  const n = emptyBuckets();
  // A list served in pages is a request per page.
  const pages = (items: number) => (s.pageSize ? Math.max(1, Math.ceil(items / s.pageSize)) : 1);
  n['app-public'] += 1 + pages(data.appTokens().length) + pages(data.appScreenerRows().length); // metrics, tokens, screener
  n.gateway += pages(data.gatewayTokens().length) + pages(data.gatewayScreenerRows().length) + 1; // tokens, screener, openapi
  for (const t of data.appTokens()) {
    const c = t.coverage;
    n['app-key'] += 1;
    if (c.snapshot) n['app-public'] += 1;
    if (c.metricHistory) n['app-public'] += 1;
    const charts = data.appCharts(t.slug)?.length ?? 0;
    if (c.charts) n['app-public'] += pages(charts) + charts;
  }
  for (const g of data.gatewayTokens()) {
    n.gateway += 1; // page
    for (const p of s.gatewayPeriods) if (data.gatewayTrend(g.slug, p) !== null) n.gateway += 1;
    const charts = data.gatewayCharts(g.slug) ?? [];
    if (charts.length > 0) n.gateway += pages(charts.length);
    // As tesync plans them: a configured timeframe a chart does not list is mirrored at its longest.
    for (const c of charts) n.gateway += chooseTimeframes(c.timeframes, s.gatewayTimeframes, GATEWAY_TIMEFRAMES).fetches.length;
  }
  return n;
}

/**
 * The least wall time the budget allows: for each bucket, its necessary requests at the
 * allowed rate (limit per window), plus one round trip; buckets run side by side, so the
 * slowest decides. Unlimited buckets cost one round trip.
 */
export function budgetFloorMs(necessary: PerBucket, s: Pick<Scenario, 'budgets' | 'latencyMs'>): { floorMs: number; byBucket: PerBucket; roundTripMs: number } {
  const roundTripMs = (s.latencyMs[0] + s.latencyMs[1]) / 2;
  const budgets = { 'app-public': s.budgets.appPublic, 'app-key': s.budgets.appKey, gateway: s.budgets.gateway };
  const byBucket = emptyBuckets();
  for (const b of Object.keys(byBucket) as BucketName[]) {
    const budget = budgets[b];
    byBucket[b] = budget ? (necessary[b] * budget.windowMs) / budget.limit : 0;
  }
  return { floorMs: Math.max(...Object.values(byBucket)) + roundTripMs, byBucket, roundTripMs };
}

export interface RequestRow {
  bucket: string;
  httpStatus: number | null;
  startedAtMs: number;
  durationMs: number;
  rateLimitRemaining: number | null;
}

export interface RateLimitReport {
  total: number;
  /** 429s whose request was sent after the bucket's first rate-limit headers had been read. */
  afterHeaders: number;
  /**
   * 429s sent after the bucket's first 429 was answered: a host that sends no reset time
   * (the app host) teaches its window with that first one; after it none should come.
   */
  afterFirst429: number;
  byBucket: Record<string, { total: number; afterHeaders: number; afterFirst429: number }>;
}

export function rateLimitReport(rows: readonly RequestRow[]): RateLimitReport {
  const firstHeadersAt = new Map<string, number>();
  for (const r of rows) {
    if (r.rateLimitRemaining === null) continue;
    const readAt = r.startedAtMs + r.durationMs;
    const seen = firstHeadersAt.get(r.bucket);
    if (seen === undefined || readAt < seen) firstHeadersAt.set(r.bucket, readAt);
  }
  const first429At = new Map<string, number>();
  for (const r of rows) {
    if (r.httpStatus !== 429) continue;
    const answeredAt = r.startedAtMs + r.durationMs;
    const seen = first429At.get(r.bucket);
    if (seen === undefined || answeredAt < seen) first429At.set(r.bucket, answeredAt);
  }
  const byBucket: RateLimitReport['byBucket'] = {};
  for (const r of rows) {
    if (r.httpStatus !== 429) continue;
    const b = (byBucket[r.bucket] ??= { total: 0, afterHeaders: 0, afterFirst429: 0 });
    b.total++;
    const seen = firstHeadersAt.get(r.bucket);
    if (seen !== undefined && r.startedAtMs > seen) b.afterHeaders++;
    if (r.startedAtMs > first429At.get(r.bucket)!) b.afterFirst429++;
  }
  const values = Object.values(byBucket);
  const sum = (k: 'total' | 'afterHeaders' | 'afterFirst429') => values.reduce((a, b) => a + b[k], 0);
  return { total: sum('total'), afterHeaders: sum('afterHeaders'), afterFirst429: sum('afterFirst429'), byBucket };
}

/** a / b, or null when b is 0 (a ratio that does not exist is not infinity). */
export function ratio(a: number, b: number): number | null {
  return b === 0 ? null : a / b;
}

/** How peak RSS grows from the smallest to the largest run, as a fraction (0.1 = 10%). */
export function rssGrowth(points: readonly { tokens: number; peakRssMb: number }[]): number | null {
  if (points.length < 2) return null;
  const sorted = [...points].sort((a, b) => a.tokens - b.tokens);
  return ratio(sorted[sorted.length - 1]!.peakRssMb - sorted[0]!.peakRssMb, sorted[0]!.peakRssMb);
}

/** What one run did to one versioned table `T` (and its `T_history`). */
export interface TableWrites {
  /** Rows of `T` whose run_id is the run's: inserted or changed by it. */
  written: number;
  /** Rows of `T_history` closed since the run started (known_to at or after it): rows it changed or removed. */
  versions: number;
  /**
   * Rows of `T` the run wrote whose closed version (same key, known_to = the row's fetched_at)
   * holds the same values over the compared columns (rulesOf(T).compared): a write that changed
   * nothing, which the write path must not make.
   */
  rewrittenUnchanged: number;
  /**
   * Of the rows written with a closed version, those whose version differs from them in `as_of`
   * alone (the data's own timestamp, a compared column): the response's time moved, no value did.
   */
  onlyAsOf: number;
}

/** A phase's TableWrites summed over its tables. */
export function sumWrites(writes: Readonly<Record<string, TableWrites>>): TableWrites {
  const out: TableWrites = { written: 0, versions: 0, rewrittenUnchanged: 0, onlyAsOf: 0 };
  for (const w of Object.values(writes)) {
    out.written += w.written;
    out.versions += w.versions;
    out.rewrittenUnchanged += w.rewrittenUnchanged;
    out.onlyAsOf += w.onlyAsOf;
  }
  return out;
}
