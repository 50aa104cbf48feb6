// Gateway problem documents: the `code` decides what happens. A token or chart the gateway
// says it does not cover is an outcome (`not_found`, rows kept, the run goes on); every other
// problem fails the resource as usual. Either way the code, status, `instance` and request
// id are kept in the resource's `details.problem` (the runner records status and message).
import { sql } from 'drizzle-orm';
import { resourceState } from '../../schema/warehouse/sync.ts';
import { ProblemError, UpstreamServerError } from '../../src/errors.ts';
import type { JobContext, JobResult } from '../types.ts';

const NOT_COVERED = new Set(['token-not-found', 'chart-item-not-found']);

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
  return err instanceof ProblemError && err.code !== undefined && NOT_COVERED.has(err.code);
}

/** Handles a failed fetch: returns the `not_found` outcome, or records the problem and rethrows. */
export async function onProblem(ctx: JobContext, key: { resource: string; kind: string }, err: unknown): Promise<JobResult> {
  const problem = problemDetails(err);
  if (!problem) throw err;
  const notFound = isNotCovered(err);
  const at = ctx.now();
  const details = sql`coalesce(${resourceState.details}, '{}'::jsonb) || ${JSON.stringify({ problem })}::jsonb`;
  const values = { source: 'gateway', resource: key.resource, kind: key.kind, status: notFound ? 'not_found' : 'failed', lastAttemptAt: at, lastRunId: ctx.runId };
  await ctx.warehouse.db
    .insert(resourceState)
    .values({ ...values, lastError: (err as Error).message.slice(0, 2000), details: { problem } })
    .onConflictDoUpdate({
      target: [resourceState.source, resourceState.resource],
      // On failure the runner writes status and error next; only the problem is added here.
      set: notFound ? { ...values, lastError: (err as Error).message.slice(0, 2000), details } : { details, lastAttemptAt: at },
    });
  if (!notFound) throw err;
  ctx.logger.info({ code: problem.code, instance: problem.instance, requestId: problem.requestId }, 'not covered by the gateway; existing rows kept');
  return { status: 'not_found', rows: 0 };
}
