// Gateway problem documents: the `code` decides what happens. A token or chart the gateway
// says it does not cover is an outcome (`not_found`, rows kept, the run goes on); every other
// problem fails the resource as usual. Either way the code, status, `instance` and request
// id are kept in the resource's `details.problem` (the runner records status and message).
//
// A `not_found` resource is not asked again while the marker that planned it is the one it
// had at the 404 (`details.notFoundMarker`): the marker is the token catalog's `meta.asOf`
// (with the chart catalog item's own for a chart), which moves whenever the read plane
// behind the routes does, so a token or chart that comes back (listed again, or regenerated)
// is asked again. Without a marker (no asOf) it is asked every run, as any resource is.
import { sql } from 'drizzle-orm';
import { resourceState } from '../../schema/warehouse/sync.ts';
import { ProblemError, UpstreamServerError } from '../../src/errors.ts';
import { isNotFound } from '../../src/runner/failure.ts';
import { readState } from '../../src/warehouse/resource-state.ts';
import type { JobContext, JobResult } from '../types.ts';

export interface ProblemDetails {
  code: string | null;
  status: number;
  instance: string | null;
  requestId: string | null;
  detail: string | null;
  path: string;
}

/** Pure: the fields worth keeping of an upstream problem, or null for any other error. */
export function problemDetails(err: unknown): ProblemDetails | null {
  if (!(err instanceof ProblemError) && !(err instanceof UpstreamServerError)) return null;
  return { code: err.code ?? null, status: err.status, instance: err.instance ?? null, requestId: err.requestId ?? null, detail: err.detail ?? null, path: err.path };
}

/** Pure: whether the problem says the thing asked for is not covered (an outcome, not a failure). */
export function isNotCovered(err: unknown): boolean {
  return isNotFound(err);
}

/** Pure: whether a resource recorded `not_found` under `marker` is still to be left alone. */
export function stillNotFound(state: { status: string; details: unknown } | undefined, marker: string | null | undefined): boolean {
  if (!state || state.status !== 'not_found' || !marker) return false;
  const d = state.details;
  return typeof d === 'object' && d !== null && (d as Record<string, unknown>).notFoundMarker === marker;
}

/** True when the resource is `not_found` and its marker has not moved since: no request is sent. */
export async function skipNotFound(ctx: JobContext, resource: string, marker: string | null | undefined): Promise<boolean> {
  if (ctx.settings.full || !marker) return false;
  const state = await readState(ctx.warehouse.db, { source: 'gateway', resource });
  if (!stillNotFound(state, marker)) return false;
  ctx.logger.debug({ marker }, 'not covered by the gateway at this marker; not asked again');
  return true;
}

/** Handles a failed fetch: returns the `not_found` outcome, or records the problem and rethrows. */
export async function onProblem(ctx: JobContext, key: { resource: string; kind: string; marker?: string | null }, err: unknown): Promise<JobResult> {
  const problem = problemDetails(err);
  if (!problem) throw err;
  const notFound = isNotCovered(err);
  const at = ctx.now();
  const added = notFound ? { problem, notFoundMarker: key.marker ?? null } : { problem };
  const details = sql`coalesce(${resourceState.details}, '{}'::jsonb) || ${JSON.stringify(added)}::jsonb`;
  const values = { source: 'gateway', resource: key.resource, kind: key.kind, status: notFound ? 'not_found' : 'failed', lastAttemptAt: at, lastRunId: ctx.runId };
  await ctx.warehouse.db
    .insert(resourceState)
    .values({ ...values, lastError: (err as Error).message.slice(0, 2000), details: added })
    .onConflictDoUpdate({
      target: [resourceState.source, resourceState.resource],
      // On failure the runner writes status and error next; only the problem is added here.
      set: notFound ? { ...values, lastError: (err as Error).message.slice(0, 2000), details } : { details, lastAttemptAt: at },
    });
  if (!notFound) throw err;
  ctx.logger.info({ code: problem.code, instance: problem.instance, requestId: problem.requestId }, 'not covered by the gateway; existing rows kept');
  return { status: 'not_found', rows: 0 };
}
