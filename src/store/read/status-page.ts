// What the status page reads beside `tesync status`'s groups (status.ts): the runs as a
// timeline with the contract changes and upstream rebindings between them, the requests of
// the last hour per rate budget bucket, and the failing resources, each with the archived body
// of its failure where one was kept. Only reads.
import { desc, gte, sql } from 'drizzle-orm';
import { contractChanges, upstreamBindingLog } from '../../schema/warehouse/sync.ts';
import type { Warehouse } from '../connection.ts';

const asDate = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));
const asNumber = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const asText = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const texts = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

export interface RunRow {
  id: string;
  trigger: string;
  /** The schedule that started it (`screener`, `export`, ...), where one did. */
  schedule: string | null;
  status: string;
  sources: string[];
  startedAt: Date;
  finishedAt: Date | null;
  /** Requests sent: as the run recorded them, else counted in sync.requests (a running run). */
  requests: number;
  /** sync.runs.stats as recorded (WalkStats, or an export's summary); `{}` while running. */
  stats: unknown;
  error: string | null;
}

/** The last `limit` runs, newest first. */
export async function readRunTimeline(w: Warehouse, limit: number): Promise<RunRow[]> {
  const rows = await w.query<Record<string, unknown>>(sql`
    select r.id::text as id, r.trigger, r.options->>'schedule' as schedule, r.status, r.sources, r.started_at, r.finished_at, r.stats, r.error,
           coalesce((r.stats->'requests'->>'total')::int, (select count(*)::int from sync.requests q where q.run_id = r.id)) as requests
    from sync.runs r
    order by r.started_at desc
    limit ${limit}`);
  return rows.map((r) => ({
    id: String(r.id),
    trigger: String(r.trigger),
    schedule: asText(r.schedule),
    status: String(r.status),
    sources: texts(r.sources),
    startedAt: asDate(r.started_at)!,
    finishedAt: asDate(r.finished_at),
    requests: Number(r.requests ?? 0),
    stats: r.stats ?? {},
    error: asText(r.error),
  }));
}

/** A contract change (sync.contract_changes) or a change of a source's upstream (sync.upstream_binding_log). */
export type TimelineEvent =
  | {
      kind: 'contract';
      at: Date;
      source: string;
      /** `openapi` or `fields` */
      change: string;
      /** The route name for field drift (`app.history`). */
      resourceKind: string | null;
      path: string | null;
      addedFields: string[];
      removedFields: string[];
      addedPaths: string[];
      removedPaths: string[];
      runId: string | null;
    }
  | {
      kind: 'binding';
      at: Date;
      source: string;
      /** bound | adopted | rebound */
      event: string;
      fromUpstream: string | null;
      toUpstream: string;
      command: string;
      host: string | null;
    };

/** The contract changes and binding changes since `since`, newest first, at most `limit` of each. */
export async function readTimelineEvents(w: Warehouse, since: Date, limit: number): Promise<TimelineEvent[]> {
  const c = contractChanges;
  const b = upstreamBindingLog;
  // Selected through the tables' declarations, which type each value (times as dates, arrays as arrays).
  const [changes, bindings] = await Promise.all([
    w.db
      .select({ at: c.detectedAt, source: c.source, change: c.change, resourceKind: c.route, path: c.path, addedFields: c.addedFields, removedFields: c.removedFields, addedPaths: c.addedPaths, removedPaths: c.removedPaths, runId: c.runId })
      .from(c)
      .where(gte(c.detectedAt, since))
      .orderBy(desc(c.detectedAt))
      .limit(limit),
    w.db
      .select({ at: b.at, source: b.source, event: b.event, fromUpstream: b.fromUpstream, toUpstream: b.toUpstream, command: b.command, host: b.host })
      .from(b)
      .where(gte(b.at, since))
      .orderBy(desc(b.at))
      .limit(limit),
  ]);
  const events: TimelineEvent[] = [...changes.map((e) => ({ kind: 'contract' as const, ...e })), ...bindings.map((e) => ({ kind: 'binding' as const, ...e }))];
  return events.sort((x, y) => y.at.getTime() - x.at.getTime());
}

/** One rate budget bucket's requests over a recent window (sync.requests). */
export interface BucketWindow {
  bucket: string;
  requests: number;
  /** Answered 429. */
  tooMany: number;
  /** Answers that carried Retry-After (a 429, an announced outage), their waits added up, and the longest. */
  retryAfters: number;
  retryAfterMs: number;
  longestRetryAfterMs: number | null;
  /** 5xx answers and requests that got none (network errors, timeouts). */
  failed: number;
  /** The last X-RateLimit-Remaining and X-RateLimit-Limit seen in the window, and when. */
  remaining: number | null;
  limit: number | null;
  lastAt: Date | null;
}

/** Per bucket, the requests started since `since` (the request log's time index). */
export async function readBucketWindows(w: Warehouse, since: Date): Promise<BucketWindow[]> {
  const rows = await w.query<Record<string, unknown>>(sql`
    select coalesce(bucket, 'none') as bucket, count(*)::int as requests,
           count(*) filter (where http_status = 429)::int as too_many,
           count(*) filter (where retry_after_ms is not null)::int as retry_afters,
           coalesce(sum(retry_after_ms), 0)::float8 as retry_after_ms,
           max(retry_after_ms) as longest,
           count(*) filter (where http_status >= 500 or http_status is null)::int as failed,
           (array_agg(rate_limit_remaining order by started_at desc, id desc) filter (where rate_limit_remaining is not null))[1] as remaining,
           (array_agg(rate_limit_limit order by started_at desc, id desc) filter (where rate_limit_limit is not null))[1] as lim,
           max(started_at) as last_at
    from sync.requests
    where started_at >= ${since.toISOString()}::timestamptz
    group by 1
    order by 1`);
  return rows.map((r) => ({
    bucket: String(r.bucket),
    requests: Number(r.requests),
    tooMany: Number(r.too_many),
    retryAfters: Number(r.retry_afters),
    retryAfterMs: Number(r.retry_after_ms),
    longestRetryAfterMs: asNumber(r.longest),
    failed: Number(r.failed),
    remaining: asNumber(r.remaining),
    limit: asNumber(r.lim),
    lastAt: asDate(r.last_at),
  }));
}
