// Turns job requests (a walk's roots, a handler's follow-ups) into fetch jobs: filtered by
// the run's scope, counted once per run, on the queue of the job's bucket.
//
// Ids: the job id is the run and the resource (a run never queues a resource twice); the
// deduplication id is the resource alone, so that while one run has a resource queued or
// running, another run does not queue it again. Planners (catalog, token lists) are not
// deduplicated across runs: each run needs its own to plan its own follow-ups.
import type { RunDriver } from '../../engine/run/run-driver.ts';
import type { JobDefinition, JobRequest } from '../../engine/kit/types.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Bucket } from '../../upstream/routes.ts';
import { fetchJobId, resourceKey } from './ids.ts';
import type { FetchJobData } from './job-data.ts';
import { FETCH_JOB_OPTIONS } from './queues.ts';
import type { AnyQueue, WorkerLedger } from './backend.ts';
import { inScope, PLANNER_GROUPS } from '../walk-scope.ts';

export interface PlanDeps {
  catalog: ReadonlyMap<string, JobDefinition<any>>;
  fetchQueues: ReadonlyMap<Bucket, AnyQueue>;
  /** The run driver (src/engine/run/run-driver.ts) over the run ledger of the prefix (`driver.ledger`): enters and settles the run's jobs. */
  driver: RunDriver<WorkerLedger>;
  logger: Logger;
}

export type RunScope = Omit<FetchJobData, 'job' | 'payload'>;

/** Queues what is in scope and not entered in the run yet; returns how many new jobs were queued. */
export async function enqueueRequests(deps: PlanDeps, run: RunScope, requests: readonly JobRequest[], { roots }: { roots: boolean }): Promise<number> {
  const added = await Promise.all(requests.map((req) => enqueueOne(deps, run, req, roots)));
  return added.filter(Boolean).length;
}

async function enqueueOne(deps: PlanDeps, run: RunScope, req: JobRequest, root: boolean): Promise<boolean> {
  const entered = await deps.driver.enter(run.runId, req, { root, inScope: (job, payload) => inScope(run, job, payload), idOf: (p) => fetchJobId(run.runId, p.job.source, p.resource) });
  // `pending` too: entered before, maybe by an attempt that died before queueing it; adding
  // again with the same id is a no-op when the job exists.
  if (!entered) return false;
  const { resolved: p, id: jobId } = entered;
  const { job: def, resource } = p;
  const queue = deps.fetchQueues.get(p.bucket)!;
  const data: FetchJobData = { ...run, job: def.name, payload: req.payload };
  const dedupe = PLANNER_GROUPS.includes(def.group) ? {} : { deduplication: { id: resourceKey(def.source, resource) } };
  const job = await queue.add(def.name, data, { ...FETCH_JOB_OPTIONS, jobId, ...dedupe });
  if (job.id !== jobId) {
    deps.logger.debug({ job: def.name, resource, queuedAs: job.id }, 'resource already queued by another run; left to it');
    await deps.driver.settle(run.runId, jobId, { kind: 'deduplicated' });
    return false;
  }
  return true;
}
