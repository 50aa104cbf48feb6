// What the BullMQ processors need, built once per worker process by the runtime.
import type { JobDefinition, JobRequest, Source, SyncSettings } from '../../engine/kit/types.ts';
import type { Config } from '../../lib/config.ts';
import type { Upstream } from '../../upstream/request.ts';
import type { RequestRecorder } from '../../ports/recorder.ts';
import type { Warehouse } from '../../store/connection.ts';
import type { WarehouseClock } from '../../store/warehouse-clock.ts';
import type { Failure } from '../../lib/failure.ts';
import type { PlanDeps } from './plan.ts';
import type { AnyQueue, QueueBackendKind } from './backend.ts';

/** Hooks for metrics; the runner works without them. */
export interface RunnerEvents {
  /** `failure`: why, for a job that failed (its labels in tesync_jobs_processed_total). */
  jobSettled(job: JobDefinition<any>, status: string, rows: number, ms: number, failure?: Failure): void;
  /** A job handed back to its queue because the bucket's wait was longer than a job may hold its slot. */
  rateLimited(queue: string, waitMs: number): void;
  handedBack(queue: string): void;
  /** A run this worker closed: its notifications can go out now. */
  runFinished?(runId: string, status: string): void;
}

/** What the composition root knows of the job catalog: the runner imports no jobs itself. */
export interface WalkPlan {
  catalog: ReadonlyMap<string, JobDefinition<any>>;
  /** Where a walk of these sources starts. */
  walkRoots(sources: readonly Source[]): JobRequest[];
  /** Every resource group of the catalog. */
  groups: readonly string[];
  /** The configured sources. */
  sources: readonly Source[];
  /** Handler settings for a walk (`full`: ignore change markers). */
  settings(full: boolean): SyncSettings;
  /**
   * Throws when the warehouse no longer mirrors this worker's upstream (rebound since the
   * worker started): a walk checks it before it opens its run.
   */
  checkUpstream?(): Promise<void>;
}

export interface RunnerDeps extends PlanDeps {
  plan: WalkPlan;
  config: Config;
  warehouse: Warehouse;
  /** This process's reading of the warehouse's clock: the times its jobs stamp before they write. */
  clock: WarehouseClock;
  upstream: Upstream;
  recorder: RequestRecorder;
  walkQueue: AnyQueue;
  /** TE_QUEUE_PREFIX: the namespace of the queues, runs and budgets. */
  prefix: string;
  /** Where the queues are: recorded with each run, so a worker judges only the runs of its own backend (lost-runs.ts). */
  queueBackend: QueueBackendKind;
  events?: RunnerEvents;
  /** True once SIGTERM/SIGINT arrived: aborted jobs are handed back, not failed. */
  shuttingDown(): boolean;
}
