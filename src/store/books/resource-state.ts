// Per-resource bookkeeping. A success is written in the same transaction as the rows it
// describes, so a crash never leaves rows without state or state without rows.
import { and, eq, inArray, like, notInArray, sql, type SQL } from 'drizzle-orm';
import { resourceState } from '../../schema/warehouse/sync.ts';
import type { Failure } from '../../lib/failure.ts';
import { recordable, RECORD_CHARS, recordableJson } from '../../lib/recordable.ts';
import type { Executor } from '../write/table-shape.ts';

export type ResourceStateRow = typeof resourceState.$inferSelect;

/** A success (or a confirmed unchanged marker) clears what the last failure recorded. */
const NO_FAILURE = { errorType: null, errorCode: null, httpStatus: null, bucket: null } as const;

export interface ResourceKey {
  source: string;
  resource: string;
}

export interface SuccessState extends ResourceKey {
  /** The resource's group (`JobDefinition.group`). */
  kind: string;
  status: string;
  runId: string;
  at: Date;
  /** When the response written was received, on the server's clock (`newerReceived`). */
  receivedAt?: Date | null;
  freshness?: string | null;
  asOf?: Date | null;
  hash?: string | null;
  etag?: string | null;
  rowCount?: number | null;
  details?: unknown;
  /**
   * Why a success is not whole (a list's sign of more, items refused alone), kept in
   * `last_error` for people; absent: the last failure's message is cleared.
   */
  note?: string | null;
}

/**
 * When the response behind the resource's last success was received, if that was after
 * `receivedAt`: a newer response of it is written, and one received at `receivedAt` is older.
 * Read under the resource's write lock (`sync.begin_write`), so that none is being written.
 */
export async function newerReceived(db: Executor, key: ResourceKey, receivedAt: Date): Promise<Date | null> {
  const rows = await db
    .select({ receivedAt: resourceState.receivedAt })
    .from(resourceState)
    .where(and(eq(resourceState.source, key.source), eq(resourceState.resource, key.resource), sql`${resourceState.receivedAt} > ${receivedAt.toISOString()}::timestamptz`));
  return rows[0]?.receivedAt ?? null;
}

export async function readState(db: Executor, key: ResourceKey): Promise<ResourceStateRow | undefined> {
  const rows = await db
    .select()
    .from(resourceState)
    .where(and(eq(resourceState.source, key.source), eq(resourceState.resource, key.resource)))
    .limit(1);
  return rows[0];
}

/** The resources that start with `prefix` (LIKE, its wildcards escaped). */
const resourceUnder = (prefix: string) => like(resourceState.resource, `${prefix.replace(/[\\%_]/g, '\\$&')}%`);

/** Every state of a source whose resource starts with `prefix`, by resource. */
export async function readStates(db: Executor, source: string, prefix: string): Promise<Map<string, ResourceStateRow>> {
  const rows = await db
    .select()
    .from(resourceState)
    .where(and(eq(resourceState.source, source), resourceUnder(prefix)));
  return new Map(rows.map((r) => [r.resource, r]));
}

/**
 * Forgets the 404s of the resources of these groups under `prefix` that a whole list no longer
 * plans (src/engine/job/not-found.ts): once listed again, they are asked again. Call inside the
 * list's own transaction.
 */
export async function forgetNotFound(db: Executor, source: string, list: ListPlan): Promise<void> {
  if (list.groups.length === 0) return;
  await db
    .update(resourceState)
    .set({ details: sql`${resourceState.details} - 'notFoundMarker'` })
    .where(and(...unplanned(source, list), eq(resourceState.status, 'not_found'), sql`${resourceState.details} ? 'notFoundMarker'`));
}

/** A whole list as the store sees it: the resource prefix, the groups it plans, what it planned. */
type ListPlan = { under: string; groups: readonly string[]; planned: readonly string[] };

/** The states of a source's resources of the list's groups under its prefix that it did not plan. */
function unplanned(source: string, list: ListPlan): SQL[] {
  return [
    eq(resourceState.source, source),
    inArray(resourceState.group, [...list.groups]),
    resourceUnder(list.under),
    ...(list.planned.length > 0 ? [notInArray(resourceState.resource, [...list.planned])] : []),
  ];
}

/**
 * Retires the resources of these groups under `prefix` that a whole list no longer plans (its
 * token delisted, a chart gone from its catalog, a history period no longer configured, a
 * coverage flag dropped): `active` false, out of the health checks, which would otherwise wait
 * forever for a confirmation no walk will make. With them go the resources they planned,
 * `childGroups` of the same token (a chart catalog's charts). Asked again, a resource is active
 * again (writeSuccess, writeFailure, writeUnchanged). Call inside the list's own transaction.
 */
export async function retireUnplanned(db: Executor, source: string, list: ListPlan, childGroups: Readonly<Record<string, readonly string[]>>): Promise<number> {
  if (list.groups.length === 0) return 0;
  const retired = await db
    .update(resourceState)
    .set({ active: false })
    .where(and(...unplanned(source, list), eq(resourceState.active, true)))
    .returning({ resource: resourceState.resource, group: resourceState.group });
  let n = retired.length;
  for (const r of retired) {
    const groups = childGroups[r.group ?? ''] ?? [];
    const token = /^token\/[^/]+\//.exec(r.resource)?.[0];
    if (groups.length === 0 || !token) continue;
    const children = await db
      .update(resourceState)
      .set({ active: false })
      .where(and(eq(resourceState.source, source), eq(resourceState.active, true), inArray(resourceState.group, [...groups]), resourceUnder(token)))
      .returning({ resource: resourceState.resource });
    n += children.length;
  }
  return n;
}

/** Records a successful fetch; call inside the transaction that wrote the rows. */
export async function writeSuccess(db: Executor, s: SuccessState): Promise<void> {
  const values = {
    source: s.source,
    resource: s.resource,
    group: s.kind,
    status: s.status,
    lastAttemptAt: s.at,
    lastSuccessAt: s.at,
    verifiedAt: s.at,
    receivedAt: s.receivedAt ?? null,
    lastError: s.note ? recordable(s.note, RECORD_CHARS) : null,
    ...NO_FAILURE,
    lastRunId: s.runId,
    freshness: s.freshness ?? null,
    asOf: s.asOf ?? null,
    hash: s.hash ?? null,
    etag: s.etag ?? null,
    rowCount: s.rowCount ?? null,
    consecutiveFailures: 0,
    details: s.details ?? null,
    active: true,
  };
  await db
    .insert(resourceState)
    .values(values)
    .onConflictDoUpdate({ target: [resourceState.source, resourceState.resource], set: values });
}

/** A failed attempt, as the job lifecycle records it. */
export interface FailureState extends ResourceKey {
  /** The resource's group (`JobDefinition.group`). */
  kind: string;
  runId: string;
  at: Date;
  /** judgeFailure's record (with `bucket` filled in by the lifecycle). */
  failure: Failure;
  /** Merged into `details` beside `problem`, e.g. the gateway's `notFoundMarker`. */
  details?: Record<string, unknown>;
}

/** What an upstream problem leaves in `details.problem` (the same for both sources). */
export interface ProblemDetails {
  code: string | null;
  status: number;
  instance: string | null;
  requestId: string | null;
  detail: string | null;
  path: string | null;
}

/** Pure: the problem fields kept in `details.problem`, or null when no error response arrived. */
export function problemDetails(f: Failure): ProblemDetails | null {
  if (f.httpStatus === undefined) return null;
  return { code: f.code ?? null, status: f.httpStatus, instance: f.instance ?? null, requestId: f.requestId ?? null, detail: f.detail ?? null, path: f.path ?? null };
}

/**
 * Records a failed attempt (or upstream's `not_found` answer); the last success and its
 * markers are kept. The failure's fields go to their columns and, for an upstream problem,
 * to `details.problem` (merged: the rest of `details` stays; a failure without a problem
 * drops a previous one). `not_found` is an answer, not a failure: it leaves
 * consecutive_failures as it was. Whatever the failure says, it can be written: every text is
 * recordable (src/lib/recordable.ts: no U+0000 or unpaired surrogate; `last_error` and the
 * problem's fields at most RECORD_CHARS; the other details' strings, markers compared later,
 * escaped but never cut).
 */
export async function writeFailure(db: Executor, f: FailureState): Promise<void> {
  const { failure } = f;
  const problem = problemDetails(failure);
  const added = {
    ...(problem ? { problem: recordableJson(problem, RECORD_CHARS) } : {}),
    ...(f.details ? (recordableJson(f.details) as Record<string, unknown>) : {}),
  };
  const adds = Object.keys(added).length > 0;
  const kept = problem ? sql`${resourceState.details}` : sql`(${resourceState.details} - 'problem')`;
  const details = adds ? sql`coalesce(${kept}, '{}'::jsonb) || ${JSON.stringify(added)}::jsonb` : kept;
  const text = (v: string | undefined) => (v === undefined ? null : recordable(v, RECORD_CHARS));
  const columns = {
    group: f.kind,
    status: failure.status,
    lastAttemptAt: f.at,
    lastError: recordable(failure.message, RECORD_CHARS),
    lastRunId: f.runId,
    errorType: text(failure.type),
    errorCode: text(failure.code),
    httpStatus: failure.httpStatus ?? null,
    bucket: text(failure.bucket),
    // Asked again: tracked again, whatever a list had retired (retireUnplanned).
    active: true,
  };
  await db
    .insert(resourceState)
    .values({
      source: f.source,
      resource: f.resource,
      ...columns,
      consecutiveFailures: failure.answered ? 0 : 1,
      details: adds ? added : null,
    })
    .onConflictDoUpdate({
      target: [resourceState.source, resourceState.resource],
      set: {
        ...columns,
        consecutiveFailures: failure.answered ? sql`${resourceState.consecutiveFailures}` : sql`${resourceState.consecutiveFailures} + 1`,
        details,
      },
    });
}

/** Statuses upstream's last answer set that still stand while its marker says nothing changed. */
export const STANDING_STATUSES: readonly string[] = ['not_materialized'];

/**
 * Pure: what a resource found unchanged is recorded as, and so counted in its run (the one rule
 * for both): its stored status when upstream's answer still stands (STANDING_STATUSES), else
 * `unchanged`.
 */
export function unchangedStatus(stored: string | undefined): string {
  return stored !== undefined && STANDING_STATUSES.includes(stored) ? stored : 'unchanged';
}

/**
 * The marker said nothing changed: confirmed current without a fetch; the last fetch's markers
 * stay, and so does a standing status (unchangedStatus: upstream's answer still stands).
 */
export async function writeUnchanged(db: Executor, key: ResourceKey & { runId: string; at: Date; confirmed?: boolean; receivedAt?: Date | null }): Promise<void> {
  await db
    .update(resourceState)
    .set({
      status: sql`case when ${resourceState.status} in (${sql.join(STANDING_STATUSES.map((st) => sql`${st}`), sql`, `)}) then ${resourceState.status} else 'unchanged' end`,
      lastAttemptAt: key.at,
      verifiedAt: key.at,
      // Upstream's 304: fetched, and found as written.
      ...(key.confirmed ? { lastSuccessAt: key.at } : {}),
      ...(key.receivedAt ? { receivedAt: key.receivedAt } : {}),
      lastRunId: key.runId,
      lastError: null,
      ...NO_FAILURE,
      consecutiveFailures: 0,
      active: true,
    })
    .where(and(eq(resourceState.source, key.source), eq(resourceState.resource, key.resource)));
}
