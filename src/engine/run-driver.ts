// The one lifecycle of a run, under either runner: opened in sync.runs; each job planned once
// on the run ledger before it runs and settled once after; closed with the status both runners
// record. The runners only decide when a job runs and how often it is tried: `tesync sync` in
// a bounded loop in this process (src/runners/in-process.ts, over a MemoryRunLedger), workers
// through BullMQ queues (src/runners/bullmq/, over the Redis or Postgres ledger). The ledger's
// contract is src/ports/run-ledger.ts.
import type { Logger } from '../lib/logger.ts';
import { errorLine, recordable } from '../lib/recordable.ts';
import type { RunLedger, RunStats, SettledJob, WalkFailure, WalkStats } from '../ports/run-ledger.ts';
import type { Warehouse } from '../store/connection.ts';
import type { RequestSummary } from '../store/books/request-summary.ts';
import type { Housekeeping } from '../store/books/retention.ts';
import { finishRun, markInterrupted, runDurationMs, runStatusOf, startRun, type RunStatus } from '../store/books/runs.ts';
import { withReconnect } from '../store/retry.ts';
import { closeRun, type RunInterrupted } from './close-run.ts';
import type { PlannedJob } from './lifecycle.ts';
import { planStep, type PlanScope } from './run-jobs.ts';
import type { JobDefinition, JobRequest } from './types.ts';

export interface RunDriverDeps<L extends RunLedger> {
  warehouse: Warehouse;
  ledger: L;
  catalog: ReadonlyMap<string, JobDefinition<any>>;
  /** Says why a request cannot run. */
  logger: Logger;
}

/** A run as it is opened: `options` keeps its scope and who runs it (its owner, or its queues). */
export interface RunOpening {
  id: string;
  trigger: string;
  sources: readonly string[];
  options?: unknown;
}

/** A job planned in its run: its id there, `new` or `pending` (planned before, maybe by an attempt that died before it ran). */
export interface RunJob {
  planned: PlannedJob;
  id: string;
  state: 'new' | 'pending';
}

export interface ClosedRun {
  status: RunStatus;
  requests: RequestSummary;
  stats: RunStats;
}

export class RunDriver<L extends RunLedger = RunLedger> {
  readonly ledger: L;

  constructor(private readonly deps: RunDriverDeps<L>) {
    this.ledger = deps.ledger;
  }

  /** The run's status in sync.runs; undefined before it is opened. */
  status(runId: string): Promise<RunStatus | undefined> {
    return withReconnect(() => runStatusOf(this.deps.warehouse.db, runId));
  }

  /** Opens a run: `running` in sync.runs from now (the server's clock). */
  open(run: RunOpening): Promise<void> {
    return startRun(this.deps.warehouse.db, { ...run, sources: [...run.sources] });
  }

  /**
   * Records in the running run that a signal came, at the server's time: the moment it ends,
   * kept even when its process is killed before it can close it.
   */
  markInterrupted(runId: string, signal: string): Promise<void> {
    return withReconnect(() => markInterrupted(this.deps.warehouse.db, runId, signal));
  }

  /**
   * Plans a request of the run: the job to run, with its id in the run (`idOf`, the runner's:
   * the ledger counts each id once); undefined when nothing is to run: out of scope, settled
   * already, or unplannable (said, and counted as a failure of the run when the catalog knows it).
   */
  async plan(runId: string, req: JobRequest, scope: PlanScope & { idOf: (p: PlannedJob) => string }): Promise<RunJob | undefined> {
    const step = planStep(this.deps.catalog, req, scope);
    if (step.kind === 'unplannable') {
      this.deps.logger.error({ job: req.name, err: step.error }, 'job cannot run; skipped');
      if (step.failure) await this.ledger.noteFailure(runId, step.failure);
      return undefined;
    }
    if (step.kind === 'out of scope') return undefined;
    const id = scope.idOf(step.planned);
    const state = await this.ledger.plan(runId, id);
    return state === 'settled' ? undefined : { planned: step.planned, id, state };
  }

  /** Counts a job's end once (only the settle that takes it out of what is pending); returns how many are pending after it. */
  settle(runId: string, jobId: string, job: SettledJob): Promise<{ counted: boolean; pending: number }> {
    return this.ledger.settle(runId, jobId, job);
  }

  /** A failure of the run that is no job of it (a request that could not be queued). */
  noteFailure(runId: string, failure: WalkFailure): Promise<void> {
    return this.ledger.noteFailure(runId, failure);
  }

  /**
   * Closes the run with what the ledger counted, whatever is still pending (a walk that
   * stopped leaves what it did not reach): closeRun's status, stats and request figures.
   */
  async close(runId: string, housekeeping: Housekeeping, interrupted?: RunInterrupted): Promise<ClosedRun> {
    const stats = await this.ledger.stats(runId);
    const { status, requests } = await closeRun(this.deps.warehouse, runId, stats, housekeeping, interrupted);
    return { status, requests, stats };
  }

  /**
   * Closes the run once nothing of it is pending and only while sync.runs still has it
   * `running` (another close, or an abandoned-run closer, may have recorded it): then also how
   * long it took, both ends on the server's clock.
   */
  async closeIfSettled(runId: string, housekeeping: Housekeeping): Promise<'pending' | 'recorded already' | (ClosedRun & { durationMs: number })> {
    if ((await this.ledger.pending(runId)) > 0) return 'pending';
    if ((await runStatusOf(this.deps.warehouse.db, runId)) !== 'running') return 'recorded already';
    const closed = await this.close(runId, housekeeping);
    return { ...closed, durationMs: await runDurationMs(this.deps.warehouse.db, runId) };
  }

  /**
   * Closes a run that cannot go on: `failed` (or `interrupted`, when a signal stopped it) with
   * why, and what it did (`stats`); finishRun closes it with the least record when even that
   * cannot be written.
   */
  async fail(runId: string, why: string, end: { stats?: WalkStats; housekeeping?: Housekeeping; interrupted?: RunInterrupted | undefined } = {}): Promise<void> {
    const { interrupted } = end;
    const error = interrupted ? `${interrupted.message}; ${why}` : why;
    await finishRun(this.deps.warehouse.db, runId, { status: interrupted ? 'interrupted' : 'failed', stats: end.stats ?? {}, error }, end.housekeeping);
  }
}

/** Why a walk that threw (not a job of it: those fail into the stats) ended its run. */
export function walkStopped(err: unknown): string {
  return `the walk stopped: ${recordable(errorLine(err), 300)}`;
}
