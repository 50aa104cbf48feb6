// What `tesync status` reports: per source and resource group, how old the data is and when
// tesync last confirmed it (from the view analytics.data_age, the one place that aggregates
// it), the statuses and failures (from sync.resource_state), the tables' sizes, and the last
// runs from sync.runs. Beside them, what the health checks judge, resource by resource: a
// group is as old as its oldest listed token's data (a newest-of-the-group figure hides the
// one token that stopped advancing), and a token its list no longer lists leaves the checks.
import { sql } from 'drizzle-orm';
import { tokens as appTokens } from '../../schema/warehouse/app.ts';
import { gatewayTokens } from '../../schema/warehouse/gateway.ts';
import type { Warehouse } from '../connection.ts';
import { readCoverage, type GroupCoverage } from './coverage.ts';
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
  /** What the health checks judge, resource by resource. */
  checks: GroupChecks;
  /** What its lists promise against what the warehouse holds; null for a group no list or walk promises. */
  coverage: GroupCoverage | null;
}

/**
 * The group's resources as the checks see them: the active ones (a complete list retires what
 * it no longer plans), less the resources of tokens their list no longer lists (`delisted_at`)
 * and those in UNCHECKED_STATUSES.
 */
export interface GroupChecks {
  /** Resources judged. */
  checked: number;
  /** Resources of delisted tokens: counted in the group's figures, left out of the checks. */
  delisted: number;
  /**
   * Resources of listed tokens that their complete list no longer plans (a chart gone from its
   * catalog, a history period no longer configured, a coverage flag dropped): retired
   * (`active` false), left out of the checks.
   */
  retired: number;
  /** The judged resource with the oldest data (what --max-age judges); null when none has a data time. */
  oldestData: OldestData | null;
  /** The judged resource tesync confirmed least recently, a never-confirmed one first (`at` null); null when none is judged. */
  leastConfirmed: ResourceTime | null;
  /** The least recent confirmation of a judged resource that has one. */
  stalestConfirmedAt: Date | null;
  /** Judged resources tesync never confirmed. */
  neverConfirmed: number;
}

/** Which data time a resource's age is judged by: a kind of time, not a clock. */
export type DataTimeKind = 'newest history point' | 'upstream asOf';

export interface ResourceTime {
  resource: string;
  /** The token the resource belongs to (`token/<slug>/...`); null for a resource of no token. */
  token: string | null;
  at: Date | null;
}

export interface OldestData extends ResourceTime {
  at: Date;
  /**
   * Its newest history point where it has one (history groups), else upstream's asOf. Named
   * `clock` in `tesync status --json`, whose fields are kept.
   */
  clock: DataTimeKind;
  /** When tesync last confirmed this resource. */
  confirmedAt: Date | null;
}

/**
 * Statuses whose resources leave the checks: upstream said the resource does not exist
 * (`not_found`: not asked again until its list changes), or tesync skips it by configuration
 * (`skipped`: bundles without an app key). Neither is ever confirmed again as it stands.
 */
export const UNCHECKED_STATUSES = ['not_found', 'skipped'] as const;

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
  const groups = await readGroups(w);
  return { groups, runs: await readRecentRuns(w, 5), sizes: await readTableSizes(w) };
}

/** The last `n` runs, newest first. */
export async function readRecentRuns(w: Warehouse, n: number): Promise<RunSummary[]> {
  return (await w.query<Record<string, unknown>>(sql`select id, trigger, status, started_at, finished_at from sync.runs order by started_at desc limit ${n}`)).map((r) => ({
    id: String(r.id),
    trigger: String(r.trigger),
    status: String(r.status),
    startedAt: asDate(r.started_at)!,
    finishedAt: asDate(r.finished_at),
  }));
}

/** Per source and resource group: its ages, statuses, failures and what the checks judge (`tesync status`, the status page). */
export async function readGroups(w: Warehouse): Promise<GroupStatus[]> {
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
  const checks = await readChecks(w);
  const coverage = await readCoverage(w);
  const same = (a: Record<string, unknown>, b: Record<string, unknown>) => a.source === b.source && a.grp === b.grp;
  // A group whose lists promise resources none of which exists yet (a walk stopped right after
  // its token list) has no age to show, and is reported all the same.
  const unfetched: Record<string, unknown>[] = coverage.filter((c) => !ages.some((a) => a.source === c.source && a.grp === c.group)).map((c) => ({ source: c.source, grp: c.group, resources: 0 }));
  const rows = [...ages, ...unfetched].sort((a, b) => String(a.source).localeCompare(String(b.source)) || String(a.grp).localeCompare(String(b.grp)));
  const groups = rows.map((r): GroupStatus => {
    const agg = aggregates.find((a) => same(a, r));
    const c = checks.find((x) => same(x, r));
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
      checks: groupChecks(c),
      coverage: coverageOf(coverage.find((x) => x.source === r.source && x.group === r.grp)),
    };
  });
  return groups;
}

const coverageOf = (c: (GroupCoverage & { source: string; group: string }) | undefined): GroupCoverage | null => {
  if (!c) return null;
  const { source: _s, group: _g, ...rest } = c;
  return rest;
};

const tokenOf = (resource: string): string | null => (resource.startsWith('token/') ? (resource.split('/')[1] ?? null) : null);

/** Pure: a group's row of readChecks as its GroupChecks. */
function groupChecks(c: Record<string, unknown> | undefined): GroupChecks {
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  const oldest = text(c?.oldest_resource);
  const least = text(c?.least_resource);
  return {
    checked: Number(c?.checked ?? 0),
    delisted: Number(c?.delisted ?? 0),
    retired: Number(c?.retired ?? 0),
    oldestData:
      oldest === null
        ? null
        : { resource: oldest, token: tokenOf(oldest), at: asDate(c!.oldest_at)!, clock: c!.oldest_is_point === true ? 'newest history point' : 'upstream asOf', confirmedAt: asDate(c!.oldest_confirmed_at) },
    leastConfirmed: least === null ? null : { resource: least, token: tokenOf(least), at: asDate(c!.least_at) },
    stalestConfirmedAt: asDate(c?.stalest_confirmed_at),
    neverConfirmed: Number(c?.never_confirmed ?? 0),
  };
}

/**
 * Per group, what the checks judge. A token resource (`token/<slug>/...`) of a slug its
 * source's token list has delisted is left out; so are the statuses in UNCHECKED_STATUSES.
 * A resource's data time is its newest history point where it has one, else upstream's asOf.
 */
async function readChecks(w: Warehouse): Promise<Record<string, unknown>[]> {
  const unchecked = sql.join(
    UNCHECKED_STATUSES.map((s) => sql`${s}`),
    sql`, `,
  );
  // Each source's token list is its tokens table: a slug delisted there is delisted for every
  // resource of that source under `token/<slug>/`.
  return w.query<Record<string, unknown>>(sql`
    with delisted as (
      select 'app' as source, slug from ${appTokens} where delisted_at is not null
      union all
      select 'gateway', slug from ${gatewayTokens} where delisted_at is not null
    ), r as (
      select s.source, coalesce(s.kind, 'other') as grp, s.resource, s.status, s.verified_at,
        case when s.details->>'lastTs' ~ '^\\d{4}-' then (s.details->>'lastTs')::timestamptz end as point_at,
        s.as_of,
        exists (
          select 1 from delisted d
          where s.resource like 'token/%' and d.source = s.source and d.slug = split_part(s.resource, '/', 2)
        ) as gone,
        s.active
      from sync.resource_state s
    ), c as (
      select r.*, coalesce(point_at, as_of) as data_at, active and not gone and status not in (${unchecked}) as judged from r
    )
    select source, grp,
      count(*) filter (where gone)::int as delisted,
      count(*) filter (where not active and not gone)::int as retired,
      count(*) filter (where judged)::int as checked,
      count(*) filter (where judged and verified_at is null)::int as never_confirmed,
      (array_agg(resource order by data_at, resource) filter (where judged and data_at is not null))[1] as oldest_resource,
      (array_agg(data_at order by data_at, resource) filter (where judged and data_at is not null))[1] as oldest_at,
      (array_agg(point_at is not null order by data_at, resource) filter (where judged and data_at is not null))[1] as oldest_is_point,
      (array_agg(verified_at order by data_at, resource) filter (where judged and data_at is not null))[1] as oldest_confirmed_at,
      (array_agg(resource order by verified_at nulls first, resource) filter (where judged))[1] as least_resource,
      (array_agg(verified_at order by verified_at nulls first, resource) filter (where judged))[1] as least_at,
      min(verified_at) filter (where judged) as stalest_confirmed_at
    from c
    group by source, grp`);
}
