// The run ledger: where a run's counts live while its jobs run, whichever runner runs them.
// Each job is entered once before it runs and settled once after (a job may run twice: a
// worker dies after the work but before its queue hears of it, so only the settle that removes
// a job from what is pending counts it). The run driver (src/engine/run/run-driver.ts) keeps a run
// over it; three ledgers keep the contract: in memory for `tesync sync` (one process,
// src/engine/run/memory-run-ledger.ts), in Redis for workers (src/runners/bullmq/redis-run-ledger.ts)
// and in the warehouse for workers without Redis (src/store/books/postgres-run-ledger.ts).
// Declared here, below the store and the engine, so the store can hold a ledger too.
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

/** What a walk did, for the summary, sync.runs.stats and the run's status. */
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

export interface RunStats extends WalkStats {
  /** Resources another run had queued already: that run fetches them. */
  deduplicated: number;
}

/** The most failures a walk keeps for its summary (sync.runs.stats, the ledgers). */
export const MAX_FAILURES = 50;

/** How long a shared run ledger keeps a run after it last entered a job (the Redis keys' time to live). */
export const RUN_TTL_MS = 7 * 24 * 3600_000;

export function emptyStats(): WalkStats {
  return { planned: 0, done: 0, failed: 0, cancelled: 0, rows: 0, byGroup: {}, failures: [] };
}

export function emptyRunStats(): RunStats {
  return { ...emptyStats(), deduplicated: 0 };
}

/** What entering a job found: entered now for the first time, entered before and still pending, or settled already. */
export type EntryState = 'new' | 'pending' | 'settled';

/** How a job of the run ended, as the ledger counts it. */
export interface SettledJob {
  kind: 'done' | 'failed' | 'deduplicated';
  rows?: number;
  /** `source.group` and the resource status, for the per-group counts. */
  group?: string;
  status?: string;
  /** Kept for the summary (the first MAX_FAILURES of a run). */
  failure?: WalkFailure;
}

export interface RunLedger {
  /** Enters a job in the run; only the first entry of a job id counts it (in `planned`). */
  enter(runId: string, jobId: string): Promise<EntryState>;
  /** Counts a job's outcome once; returns how many jobs of the run are still pending. */
  settle(runId: string, jobId: string, job: SettledJob): Promise<{ counted: boolean; pending: number }>;
  /** A follow-up that could not even be planned (unreadable payload): a failure of the run. */
  noteFailure(runId: string, failure: WalkFailure): Promise<void>;
  pending(runId: string): Promise<number>;
  stats(runId: string): Promise<RunStats>;
}

/**
 * Pure: the counts a settled job adds to its run's stats, the rule every ledger keeps (the Redis
 * one in run-settle.lua). A job another run had queued already is taken back out of this run's `planned`.
 */
export function countSettled(stats: RunStats, job: SettledJob): void {
  if (job.kind === 'deduplicated') {
    stats.planned--;
    stats.deduplicated++;
  } else {
    stats[job.kind]++;
    stats.rows += job.rows ?? 0;
    if (job.group && job.status) {
      const g = (stats.byGroup[job.group] ??= {});
      g[job.status] = (g[job.status] ?? 0) + 1;
    }
  }
  if (job.failure && stats.failures.length < MAX_FAILURES) stats.failures.push(job.failure);
}

/**
 * Pure: a failure entry read back (a ledger, sync.runs.stats), whatever version wrote it; its
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
