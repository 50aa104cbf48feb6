// The one lifecycle of a run, under either runner: opened in sync.runs; each job planned once
// on a run ledger before it runs and settled once after (a job may run twice: a worker dies
// after the work but before its queue hears of it, so only the settle that removes a job from
// what is pending counts it); closed when nothing is pending, with the status both runners
// record. The ledger is where a run's counts live: in memory for `tesync sync` (one process),
// in Redis for workers (src/runners/bullmq/run-tracker.ts) or in the warehouse for workers
// without Redis (postgres-run-ledger.ts), the same contract each way.
import type { Db, Warehouse } from '../store/connection.ts';
import { summarizeRunRequests, type RequestSummary } from '../store/books/request-summary.ts';
import { withReconnect } from '../store/retry.ts';
import { finishRun, startRun, type RunStatus } from '../store/books/runs.ts';
import type { Housekeeping } from '../store/books/retention.ts';
import { WarehouseError } from '../lib/errors.ts';
import { errorLine, recordable, RECORD_CHARS } from '../lib/recordable.ts';
import { emptyStats, finalRunStatus, MAX_FAILURES, runStatus, type WalkFailure, type WalkStats } from './run-stats.ts';

/** What planning a job found: first planned now, planned before and still pending, or settled already. */
export type PlanState = 'new' | 'pending' | 'settled';

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

export interface RunStats extends WalkStats {
  /** Resources another run had queued already: that run fetches them. */
  deduplicated: number;
}

export interface RunLedger {
  /** Plans a job of the run; only the first plan of a job id counts it. */
  plan(runId: string, jobId: string): Promise<PlanState>;
  /** Counts a job's outcome once; returns how many jobs of the run are still pending. */
  settle(runId: string, jobId: string, job: SettledJob): Promise<{ counted: boolean; pending: number }>;
  /** A follow-up that could not even be planned (unreadable payload): a failure of the run. */
  noteFailure(runId: string, failure: WalkFailure): Promise<void>;
  pending(runId: string): Promise<number>;
  stats(runId: string): Promise<RunStats>;
}

/**
 * Pure: the counts a settled job adds to its run's stats, the rule every ledger keeps (the Redis
 * one in run-settle.lua). A job another run had queued already leaves this run's plan.
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

/** The ledger of runs walked in this process. `live(runId)` is the stats object itself, for progress. */
export class MemoryRunLedger implements RunLedger {
  private readonly runs = new Map<string, { seen: Set<string>; pending: Set<string>; stats: RunStats }>();

  live(runId: string): RunStats {
    return this.run(runId).stats;
  }

  async plan(runId: string, jobId: string): Promise<PlanState> {
    const r = this.run(runId);
    if (r.pending.has(jobId)) return 'pending';
    if (r.seen.has(jobId)) return 'settled';
    r.seen.add(jobId);
    r.pending.add(jobId);
    r.stats.planned++;
    return 'new';
  }

  async settle(runId: string, jobId: string, job: SettledJob): Promise<{ counted: boolean; pending: number }> {
    const r = this.run(runId);
    const counted = r.pending.delete(jobId);
    if (counted) countSettled(r.stats, job);
    return { counted, pending: r.pending.size };
  }

  async noteFailure(runId: string, failure: WalkFailure): Promise<void> {
    const r = this.run(runId);
    r.stats.failed++;
    if (r.stats.failures.length < MAX_FAILURES) r.stats.failures.push(failure);
  }

  async pending(runId: string): Promise<number> {
    return this.run(runId).pending.size;
  }

  async stats(runId: string): Promise<RunStats> {
    return this.run(runId).stats;
  }

  private run(runId: string) {
    let r = this.runs.get(runId);
    if (!r) this.runs.set(runId, (r = { seen: new Set(), pending: new Set(), stats: { ...emptyStats(), deduplicated: 0 } }));
    return r;
  }
}

/** The reason a walk was aborted by a signal: its run closes `interrupted` (src/cli/interrupt.ts). */
export class RunInterrupted extends Error {
  override readonly name = 'RunInterrupted';
  constructor(readonly signal: string) {
    super(`interrupted by ${signal}`);
  }
}

/** Opens a run: `running` in sync.runs from now (the server's clock); `options` keeps its scope and owner. */
export function openRun(db: Db, run: Parameters<typeof startRun>[1]): Promise<void> {
  return startRun(db, run);
}

/**
 * Closes a run whose jobs all settled: its status from what they did and what upstream
 * answered (finalRunStatus), or `interrupted` at its signal's time; recorded with its stats and
 * request summary; the daily archives filled and retention applied as every run's end does.
 * Never leaves it `running` (finishRun closes it with the least record when the full one
 * cannot be written): requests that cannot be counted close it with its stats alone, its
 * status from them (runStatus), and then the failure is thrown.
 */
export async function closeRun(
  warehouse: Warehouse,
  runId: string,
  stats: WalkStats,
  housekeeping: Housekeeping,
  interrupted?: RunInterrupted,
): Promise<{ status: RunStatus; requests: RequestSummary }> {
  let requests: RequestSummary;
  try {
    requests = await withReconnect(() => summarizeRunRequests(warehouse, runId));
  } catch (err) {
    const status = interrupted ? 'interrupted' : runStatus(stats);
    const why = `its requests could not be counted (${recordable(errorLine(err), 200)})`;
    await finishRun(warehouse.db, runId, { status, stats, error: interrupted ? `${interrupted.message}; ${why}` : why }, housekeeping);
    throw new WarehouseError(recordable(`run ${runId} closed ${status}, but ${why}`, RECORD_CHARS), { cause: err });
  }
  // An interrupted run is neither a success nor a failure of upstream's or ours: what it did is
  // kept, what it did not reach is counted, and the next run goes on from there.
  const status = interrupted ? 'interrupted' : finalRunStatus(stats, requests);
  await finishRun(warehouse.db, runId, { status, stats: { ...stats, requests }, ...(interrupted ? { error: interrupted.message } : {}) }, housekeeping);
  return { status, requests };
}
