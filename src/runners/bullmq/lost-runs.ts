// Runs of this queue prefix and backend that sync.runs has `running` but whose work the queues
// no longer hold. A graceful stop is not one of them: it hands its jobs back to the queues, and
// their runs resume when a worker starts. These are the runs that nothing would ever finish:
// the finish job was lost, or the queues lost the run's jobs (`tesync reset`, a Redis that
// restarted empty). A worker looks for them when it starts, after Redis reconnects, and every
// 30 s (runtime.ts LOST_RUN_SWEEP_MS).
import type { Logger } from '../../lib/logger.ts';
import type { Warehouse } from '../../store/connection.ts';
import { RunDriver } from '../../engine/run/run-driver.ts';
import { LOST_RUN_ERROR } from '../../store/books/runs.ts';
import type { AnyQueue, QueueBackendKind, WorkerLedger } from './backend.ts';
import type { RunnerDeps } from './deps.ts';
import { finishRunIfSettled } from './walk.ts';

export interface LostRunDeps {
  warehouse: Warehouse;
  /** The run driver over the run ledger of the prefix: what it holds of each run. */
  driver: RunDriver<WorkerLedger>;
  walkQueue: AnyQueue;
  prefix: string;
  queueBackend: QueueBackendKind;
  logger: Logger;
  config: RunnerDeps['config'];
  events?: RunnerDeps['events'];
}

/** Walk job states from which the walk still plans its run. */
const LIVE_WALK_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

export type RunFate = 'resumes' | 'finish' | 'lost';

/**
 * Pure: what becomes of a `running` run, from what Redis holds of it. Jobs pending or a walk
 * still to plan: it goes on. Work settled and counted: only its finish is missing. Nothing:
 * nobody can finish it.
 */
export function runFate(r: { pending: number; planned: number; walkState: string | undefined }): RunFate {
  if (r.pending > 0 || (r.walkState !== undefined && LIVE_WALK_STATES.has(r.walkState))) return 'resumes';
  return r.planned > 0 ? 'finish' : 'lost';
}

/**
 * Finishes the runs that only lack their finish, here and now rather than through a finish job
 * (the walk queue's consumer may be what was lost: after a Redis Cluster failover a worker's
 * idle BullMQ consumer was seen never to take a job again); closes as `failed` those nothing
 * can finish (the run driver's closeAbandoned, judged by runFate).
 */
export async function settleLostRuns(deps: LostRunDeps): Promise<{ finishing: number; lost: number }> {
  let finishing = 0;
  const lost = await RunDriver.closeAbandoned(deps.warehouse, {
    of: 'workers',
    prefix: deps.prefix,
    backend: deps.queueBackend,
    lost: async (run) => {
      const walk = run.job ? await deps.walkQueue.getJob(run.job) : undefined;
      const fate = runFate({
        pending: await deps.driver.ledger.pending(run.id),
        planned: (await deps.driver.ledger.stats(run.id)).planned,
        walkState: walk ? await walk.getState() : undefined,
      });
      if (fate === 'finish') {
        await finishRunIfSettled(deps, run.id, deps.logger.child({ runId: run.id }));
        finishing++;
      }
      return fate === 'lost';
    },
  });
  for (const runId of lost) deps.logger.warn({ runId }, `run closed as failed: ${LOST_RUN_ERROR}`);
  return { finishing, lost: lost.length };
}
