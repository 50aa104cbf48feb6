// A walk's failures as its stats keep them, and the status a run is recorded with, from what
// its jobs did (the stats themselves are the run ledger's: src/ports/run-ledger.ts).
import type { RequestSummary } from '../../store/books/request-summary.ts';
import type { RunStatus } from '../../store/books/runs.ts';
import type { Failure } from '../../lib/failure.ts';
import { recordable, RECORD_CHARS } from '../../lib/recordable.ts';
import type { WalkFailure, WalkStats } from '../../ports/run-ledger.ts';

/** Pure: a walk's entry for a failed job, from judgeFailure's record; its error recordable whatever it says. */
export function walkFailure(job: { name: string; source: string }, resource: string, f: Omit<Failure, 'retryable'>): WalkFailure {
  const entry: WalkFailure = { job: job.name, resource: recordable(resource, RECORD_CHARS), source: job.source, status: f.status, type: f.type, error: recordable(f.message, RECORD_CHARS) };
  if (f.code !== undefined) entry.code = f.code;
  if (f.httpStatus !== undefined) entry.httpStatus = f.httpStatus;
  if (f.bucket !== undefined) entry.bucket = f.bucket;
  return entry;
}

/**
 * succeeded: everything done and read whole; partial: some resources failed, or were written
 * with cells that could not be read; failed: nothing got done.
 */
export function runStatus(stats: WalkStats): RunStatus {
  const someIncomplete = Object.values(stats.byGroup).some((statuses) => (statuses.partial ?? 0) > 0);
  if (stats.failed === 0 && stats.cancelled === 0 && !someIncomplete) return 'succeeded';
  if (stats.done === 0) return 'failed';
  return 'partial';
}

/**
 * The statuses of a settled resource that stand for no data of it: a failure (FailureStatus),
 * a refusal recorded as the resource's status (a bundle's 401/402/403), or not asked at all.
 * Any other status (`ok`, `unchanged`, `partial`, ...) is data the source gave.
 */
const NO_DATA = new Set(['failed', 'invalid', 'rate_limited', 'not_found', 'unauthorized', 'no_credits', 'missing_scope', 'skipped', 'cancelled']);

/** Pure: whether any resource of `source` settled with data (its groups are `source.group`). */
function sourceGaveData(stats: WalkStats, source: string): boolean {
  return Object.entries(stats.byGroup).some(([group, statuses]) => group.startsWith(`${source}.`) && Object.entries(statuses).some(([s, n]) => n > 0 && !NO_DATA.has(s)));
}

/**
 * The status a run is recorded with, by either runner: `failed` when upstream refused every
 * request (401), or when a configured source produced nothing because its key was refused on
 * every request that carries it (the gateway's key, on every gateway route): a run that leaves
 * a source empty for a key that will not work until it is fixed has not done its job, and its
 * exit code says so. Otherwise runStatus, except that a key refused on every request that needs
 * it (requests.keyRefusals) makes a run that would have `succeeded` `partial`: its other
 * resources are fine (the app's public routes, when only the app key that fetches bundles was
 * refused), but what the key fetches was not, and will not be until the key is fixed.
 */
export function finalRunStatus(stats: WalkStats, requests: RequestSummary): RunStatus {
  if (requests.total > 0 && requests.byStatus['401'] === requests.total) return 'failed';
  const refusals = requests.keyRefusals ?? [];
  if (refusals.some((r) => !sourceGaveData(stats, r.source))) return 'failed';
  const status = runStatus(stats);
  return status === 'succeeded' && refusals.length > 0 ? 'partial' : status;
}
