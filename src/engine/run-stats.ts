// What a walk did, for the summary, sync.runs.stats and the run's status.
import type { RequestSummary } from '../store/books/request-summary.ts';
import type { RunStatus } from '../store/books/runs.ts';
import type { Failure } from '../lib/failure.ts';
import { recordable, RECORD_CHARS } from '../lib/recordable.ts';

/**
 * One failed job of a walk, as data: hints and summaries read the fields, `error` is for
 * people. `source`, `status` and `type` are absent only from entries written before failures
 * were data (older sync.runs.stats, a run tracked in Redis across an upgrade).
 */
export interface WalkFailure {
  job: string;
  resource: string;
  source?: string;
  status?: Failure['status'];
  type?: string;
  code?: string;
  httpStatus?: number;
  bucket?: string;
  /** `<error class>: <message>`: for people, never parsed; recordable (src/lib/recordable.ts), at most RECORD_CHARS. */
  error: string;
}

export interface WalkStats {
  planned: number;
  done: number;
  failed: number;
  cancelled: number;
  rows: number;
  /** `source.group` → status → count */
  byGroup: Record<string, Record<string, number>>;
  failures: WalkFailure[];
}

/** The most failures a walk keeps for its summary (sync.runs.stats, the tracker in Redis). */
export const MAX_FAILURES = 50;

/** How long a run ledger keeps a run after it last planned a job (the Redis keys' time to live). */
export const RUN_TTL_MS = 7 * 24 * 3600_000;

/** Pure: a walk's entry for a failed job, from judgeFailure's record; its error recordable whatever it says. */
export function walkFailure(job: { name: string; source: string }, resource: string, f: Omit<Failure, 'retryable'>): WalkFailure {
  const entry: WalkFailure = { job: job.name, resource: recordable(resource, RECORD_CHARS), source: job.source, status: f.status, type: f.type, error: recordable(f.message, RECORD_CHARS) };
  if (f.code !== undefined) entry.code = f.code;
  if (f.httpStatus !== undefined) entry.httpStatus = f.httpStatus;
  if (f.bucket !== undefined) entry.bucket = f.bucket;
  return entry;
}

export function emptyStats(): WalkStats {
  return { planned: 0, done: 0, failed: 0, cancelled: 0, rows: 0, byGroup: {}, failures: [] };
}

/**
 * Pure: a failure entry read back (Redis, sync.runs.stats), whatever version wrote it; its
 * texts recordable (a version before they were may have kept a long or NUL-carrying one).
 * Entries from before failures were data have only job, resource and error; their source
 * is the job name's prefix (`app.tokens`, `gateway.screener`).
 */
export function readWalkFailure(value: unknown): WalkFailure {
  const v = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  const str = (x: unknown) => (typeof x === 'string' ? x : undefined);
  const job = str(v.job) ?? '?';
  const entry: WalkFailure = { job, resource: recordable(str(v.resource) ?? '?', RECORD_CHARS), error: recordable(str(v.error) ?? (typeof value === 'string' ? value : ''), RECORD_CHARS) };
  const source = str(v.source) ?? (job.includes('.') ? job.slice(0, job.indexOf('.')) : undefined);
  if (source !== undefined) entry.source = source;
  const status = str(v.status);
  if (status === 'failed' || status === 'invalid' || status === 'rate_limited' || status === 'not_found') entry.status = status;
  for (const key of ['type', 'code', 'bucket'] as const) {
    const s = str(v[key]);
    if (s !== undefined) entry[key] = s;
  }
  if (typeof v.httpStatus === 'number') entry.httpStatus = v.httpStatus;
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
