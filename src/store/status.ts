// What `tesync status` reports: per source and resource group, how old the data is and when
// tesync last confirmed it (from the view analytics.data_age, the one place that aggregates
// it), the statuses and failures (from sync.resource_state), the tables' sizes, and the last
// runs from sync.runs.
import { sql } from 'drizzle-orm';
import type { Warehouse } from './connection.ts';
import { readTableSizes, type TableSizes } from './table-sizes.ts';

export interface GroupStatus {
  source: string;
  group: string;
  resources: number;
  ok: number;
  failing: number;
  /** Data time: the newest `asOf` upstream gave for the group's resources. */
  dataAsOf: Date | null;
  /** Data time: the newest history point, for history groups. */
  newestPointAt: Date | null;
  /** Upstream's freshness verdicts with how many resources carry each (`fresh 5, stale 1`); null where upstream gives none. */
  freshness: string | null;
  /** Known time: the last fetch that wrote data. */
  lastChangedAt: Date | null;
  /** Known time: when tesync last confirmed the group's most recently confirmed resource. */
  lastConfirmedAt: Date | null;
  /** Known time: when tesync confirmed the least recently confirmed resource. */
  stalestConfirmedAt: Date | null;
  /** Resources tesync has never confirmed. */
  unconfirmed: number;
  statuses: Record<string, number>;
  /** Failing resources (failed, invalid, rate_limited) by cause, most first: read from the failure columns, not the text. */
  failures: FailureCount[];
  /** For people; the counts above are what to group by. */
  lastError: string | null;
}

export interface FailureCount {
  status: string;
  /** Error class; null for a failure an earlier release recorded. */
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

export async function readStatus(w: Warehouse): Promise<{ groups: GroupStatus[]; runs: RunSummary[]; sizes: TableSizes }> {
  // A group's figures repeat on each table it fills: one row per group.
  const ages = await w.query<Record<string, unknown>>(sql`
    select distinct on (source, "group") source, "group" as grp, resources, data_as_of, newest_point_at, freshness,
           last_changed_at, last_confirmed_at, stalest_confirmed_at, unconfirmed
    from analytics.data_age
    where resources > 0
    order by source, "group"`);
  const aggregates = await w.query<Record<string, unknown>>(sql`
    select source, coalesce(kind, 'other') as grp,
           count(*) filter (where status in ('ok', 'unchanged'))::int as ok,
           count(*) filter (where status in ('failed', 'invalid', 'rate_limited'))::int as failing,
           (array_agg(last_error order by last_attempt_at desc nulls last) filter (where last_error is not null))[1] as last_error
    from sync.resource_state
    where active
    group by 1, 2`);
  const counts = await w.query<{ source: string; grp: string; status: string; n: number }>(
    sql`select source, coalesce(kind, 'other') as grp, status, count(*)::int as n from sync.resource_state where active group by 1, 2, 3`,
  );
  const causes = await w.query<{ source: string; grp: string; status: string; error_type: string | null; error_code: string | null; http_status: number | null; n: number }>(sql`
    select source, coalesce(kind, 'other') as grp, status, error_type, error_code, http_status, count(*)::int as n
    from sync.resource_state
    where active and status in ('failed', 'invalid', 'rate_limited')
    group by 1, 2, 3, 4, 5, 6
    order by n desc, 3, 4, 5, 6`);
  const same = (a: Record<string, unknown>, b: Record<string, unknown>) => a.source === b.source && a.grp === b.grp;
  const groups = ages.map((r): GroupStatus => {
    const agg = aggregates.find((a) => same(a, r));
    return {
      source: String(r.source),
      group: String(r.grp),
      resources: Number(r.resources),
      ok: Number(agg?.ok ?? 0),
      failing: Number(agg?.failing ?? 0),
      dataAsOf: asDate(r.data_as_of),
      newestPointAt: asDate(r.newest_point_at),
      freshness: (r.freshness as string | null) ?? null,
      lastChangedAt: asDate(r.last_changed_at),
      lastConfirmedAt: asDate(r.last_confirmed_at),
      stalestConfirmedAt: asDate(r.stalest_confirmed_at),
      unconfirmed: Number(r.unconfirmed ?? 0),
      statuses: Object.fromEntries(counts.filter((c) => same(c, r)).map((c) => [c.status, Number(c.n)])),
      failures: causes
        .filter((c) => same(c, r))
        .map((c) => ({ status: c.status, type: c.error_type, code: c.error_code, httpStatus: c.http_status === null ? null : Number(c.http_status), resources: Number(c.n) })),
      lastError: (agg?.last_error as string | null | undefined) ?? null,
    };
  });
  const runs = (await w.query<Record<string, unknown>>(sql`select id, trigger, status, started_at, finished_at from sync.runs order by started_at desc limit 5`)).map((r) => ({
    id: String(r.id),
    trigger: String(r.trigger),
    status: String(r.status),
    startedAt: asDate(r.started_at)!,
    finishedAt: asDate(r.finished_at),
  }));
  return { groups, runs, sizes: await readTableSizes(w) };
}
