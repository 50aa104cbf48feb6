// The one lifecycle of a run, under either runner: opened in sync.runs; each job entered once
// on the run ledger before it runs and settled once after, its follow-ups planned before it
// settles (settle); closed with the status both runners record, by one statement
// (src/store/books/runs.ts), whoever closes it: the runner at its end, the finish of a worker's
// run, a run that cannot go on, the export's run, and runs found abandoned (closeAbandoned).
// The runners only decide when a job runs and how often it is tried: `tesync sync` in a bounded
// loop in this process (src/runners/in-process.ts, over a MemoryRunLedger), workers through
// BullMQ queues (src/runners/bullmq/, over the Redis or Postgres ledger). The ledger's contract
// is src/ports/run-ledger.ts.
import type { Logger } from '../../lib/logger.ts';
import { errorLine, recordable } from '../../lib/recordable.ts';
import type { RunLedger, RunStats, SettledJob, WalkFailure, WalkStats } from '../../ports/run-ledger.ts';
import type { Warehouse } from '../../store/connection.ts';
import type { RequestSummary } from '../../store/books/request-summary.ts';
import type { Housekeeping } from '../../store/books/retention.ts';
import { closeAbandoned, finishRun, markInterrupted, runDurationMs, runStatusOf, startRun, type AbandonPolicy, type RunStatus } from '../../store/books/runs.ts';
import { withReconnect } from '../../lib/reconnect.ts';
import { closeRun, type RunInterrupted } from './close-run.ts';
import { resolveJob, type ResolvedJob } from '../job/lifecycle.ts';
import { entryStep, type EntryScope } from './run-jobs.ts';
import type { JobDefinition, JobRequest } from '../kit/types.ts';

export interface RunDriverDeps<L extends RunLedger> {
  warehouse: Warehouse;
  ledger: L;
  catalog: ReadonlyMap<string, JobDefinition<any>>;
  /** Says why a request cannot run; at debug level, each job entered and settled (naming its run: one driver may serve many). */
  logger: Logger;
}

/** A run as it is opened: `options` keeps its scope and who runs it (its owner, or its queues). */
export interface RunOpening {
  id: string;
  trigger: string;
  sources: readonly string[];
  options?: unknown;
}

/** A job entered in its run: its id there, `new` or `pending` (entered before, maybe by an attempt that died before it ran). */
export interface RunJob {
  resolved: ResolvedJob;
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
   * Enters a request in the run: the job to run, with its id in the run (`idOf`, the runner's:
   * the ledger counts each id once); undefined when nothing is to run: out of scope, settled
   * already, or unplannable (said, and counted as a failure of the run when the catalog knows it).
   */
  async enter(runId: string, req: JobRequest, scope: EntryScope & { idOf: (p: ResolvedJob) => string }): Promise<RunJob | undefined> {
    const step = entryStep(this.deps.catalog, req, scope);
    if (step.kind === 'unplannable') {
      this.deps.logger.error({ runId, job: req.name, err: step.error }, 'job cannot run; skipped');
      if (step.failure) await this.ledger.noteFailure(runId, step.failure);
      return undefined;
    }
    if (step.kind === 'out of scope') return undefined;
    const id = scope.idOf(step.resolved);
    const state = await this.ledger.enter(runId, id);
    this.deps.logger.debug({ runId, jobId: id, resource: `${step.resolved.job.source}/${step.resolved.resource}`, state }, 'job planned');
    return state === 'settled' ? undefined : { resolved: step.resolved, id, state };
  }

  /**
   * A job queued when the run entered it, read back from its request as it starts (a worker's:
   * its queue holds the request, not the job): its declaration and its payload validated again,
   * since a queued job may be older than the code. Not entered again: nothing is counted.
   */
  queued(req: JobRequest): ResolvedJob | { error: string } {
    return resolveJob(this.deps.catalog, req);
  }

  /**
   * Ends a job in its run, in the one order both runners keep: its follow-ups planned first
   * (`next.plan`, the runner's: into its lanes, or onto the queues), then its end counted once
   * on the ledger (only the settle that takes it out of what is pending counts it). Planned
   * before their parent settles, a job's children are pending before it stops being: the run
   * never looks settled between the two (a worker closes its run once nothing is pending).
   * Returns whether this call counted the job and how many of the run's jobs are pending after it.
   */
  async settle(runId: string, jobId: string, job: SettledJob, next?: FollowUps): Promise<{ counted: boolean; pending: number }> {
    if (next && next.requests.length > 0) {
      await next.plan(next.requests);
      this.deps.logger.debug({ runId, jobId, requests: next.requests.length }, 'follow-ups planned');
    }
    const settled = await this.ledger.settle(runId, jobId, job);
    this.deps.logger.debug({ runId, jobId, kind: job.kind, ...settled }, 'job settled');
    return settled;
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
   * why, and what it did (`stats`).
   */
  fail(runId: string, why: string, end: { stats?: WalkStats; housekeeping?: Housekeeping; interrupted?: RunInterrupted | undefined } = {}): Promise<void> {
    const { interrupted } = end;
    const error = interrupted ? `${interrupted.message}; ${why}` : why;
    return this.closeWith(runId, { status: interrupted ? 'interrupted' : 'failed', stats: end.stats ?? {}, error }, end.housekeeping);
  }

  /**
   * Closes a run with the record its caller made: a run whose work is no job on the ledger (the
   * export: its summary), or one that cannot go on (fail). finishRun closes it with the least
   * record when even that cannot be written.
   */
  closeWith(runId: string, end: RunEnding, housekeeping?: Housekeeping): Promise<void> {
    return finishRun(this.deps.warehouse.db, runId, end, housekeeping);
  }

  /**
   * Closes the runs nobody will finish, as `policy` finds them (src/store/books/runs.ts:
   * `tesync sync`'s whose process ended, or a worker prefix's whose queues lost their work):
   * `failed`, or `interrupted` at its signal when one was recorded. Returns their ids. Needs
   * no ledger: the command that looks for them may run no walk.
   */
  static closeAbandoned(warehouse: Warehouse, policy: AbandonPolicy): Promise<string[]> {
    return closeAbandoned(warehouse.db, policy);
  }
}

/** A job's follow-ups, and how its runner plans them (each entered through RunDriver.enter). */
export interface FollowUps {
  requests: readonly JobRequest[];
  plan(requests: readonly JobRequest[]): Promise<unknown>;
}

/** A run's record as its caller closes it: its status, what it did, and why it ended so. */
export interface RunEnding {
  status: RunStatus;
  stats: unknown;
  error?: string;
}

/** Why a walk that threw (not a job of it: those fail into the stats) ended its run. */
export function walkStopped(err: unknown): string {
  return `the walk stopped: ${recordable(errorLine(err), 300)}`;
}
