// What `tesync status` reports: per source and resource group, from sync.resource_state,
// and the last runs from sync.runs.
import { sql } from 'drizzle-orm';
import type { Warehouse } from './connection.ts';

export interface GroupStatus {
  source: string;
  group: string;
  resources: number;
  ok: number;
  failing: number;
  /** Newest success of any resource in the group. */
  lastSuccessAt: Date | null;
  /** The least recently confirmed resource: how stale the group's worst member is. */
  oldestVerifiedAt: Date | null;
  rows: number;
  statuses: Record<string, number>;
  /** Failing resources (failed, invalid, rate_limited) by cause, most first: read from the failure columns, not the text. */
  failures: FailureCount[];
  /** For people; the counts above are what to group by. */
  lastError: string | null;
}

export interface FailureCount {
  status: string;
  /** Error class; null for a failure recorded before these columns existed. */
  type: string | null;
  code: string | null;
  httpStatus: number | null;
  resources: number;
}

export interface RunSummary {
  id: string;
  trigger: string;
  status: string;
  startedAt: Date;
  finishedAt: Date | null;
}

const asDate = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));

export async function readStatus(w: Warehouse): Promise<{ groups: GroupStatus[]; runs: RunSummary[] }> {
  const aggregates = await w.query<Record<string, unknown>>(sql`
    select source, coalesce(kind, 'other') as grp, count(*)::int as resources,
           count(*) filter (where status in ('ok', 'unchanged'))::int as ok,
           count(*) filter (where status in ('failed', 'invalid', 'rate_limited'))::int as failing,
           max(last_success_at) as last_success_at,
           min(coalesce(verified_at, last_success_at, 'epoch'::timestamptz)) as oldest_verified_at,
           coalesce(sum(row_count), 0)::bigint::text as rows,
           (array_agg(last_error order by last_attempt_at desc nulls last) filter (where last_error is not null))[1] as last_error
    from sync.resource_state
    group by 1, 2
    order by 1, 2`);
  const counts = await w.query<{ source: string; grp: string; status: string; n: number }>(
    sql`select source, coalesce(kind, 'other') as grp, status, count(*)::int as n from sync.resource_state group by 1, 2, 3`,
  );
  const causes = await w.query<{ source: string; grp: string; status: string; error_type: string | null; error_code: string | null; http_status: number | null; n: number }>(sql`
    select source, coalesce(kind, 'other') as grp, status, error_type, error_code, http_status, count(*)::int as n
    from sync.resource_state
    where status in ('failed', 'invalid', 'rate_limited')
    group by 1, 2, 3, 4, 5, 6
    order by n desc, 3, 4, 5, 6`);
  const groups = aggregates.map((r) => {
    const oldest = asDate(r.oldest_verified_at);
    return {
      source: String(r.source),
      group: String(r.grp),
      resources: Number(r.resources),
      ok: Number(r.ok),
      failing: Number(r.failing),
      lastSuccessAt: asDate(r.last_success_at),
      // 'epoch' stood in for "never confirmed": report it as null.
      oldestVerifiedAt: oldest && oldest.getTime() > 0 ? oldest : null,
      rows: Number(r.rows),
      statuses: Object.fromEntries(counts.filter((c) => c.source === r.source && c.grp === r.grp).map((c) => [c.status, Number(c.n)])),
      failures: causes
        .filter((c) => c.source === r.source && c.grp === r.grp)
        .map((c) => ({ status: c.status, type: c.error_type, code: c.error_code, httpStatus: c.http_status === null ? null : Number(c.http_status), resources: Number(c.n) })),
      lastError: (r.last_error as string | null) ?? null,
    };
  });
  const runs = (await w.query<Record<string, unknown>>(sql`select id, trigger, status, started_at, finished_at from sync.runs order by started_at desc limit 5`)).map((r) => ({
    id: String(r.id),
    trigger: String(r.trigger),
    status: String(r.status),
    startedAt: asDate(r.started_at)!,
    finishedAt: asDate(r.finished_at),
  }));
  return { groups, runs };
}
