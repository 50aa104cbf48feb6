// A run's jobs as its ledger sees them, the same for both runners: a request entered (or why
// it is not), a job's end counted. Pure: the run driver (run-driver.ts) does the IO.
import type { Failure } from '../../lib/failure.ts';
import type { SettledJob, WalkFailure } from '../../ports/run-ledger.ts';
import { resolveJob, type ResolvedJob } from '../job/lifecycle.ts';
import type { JobDefinition, JobRequest } from '../kit/types.ts';
import { walkFailure } from './run-stats.ts';

/** Which requests of a run to run: roots always; follow-ups only when `inScope` says so. */
export interface EntryScope {
  root: boolean;
  inScope?: (job: JobDefinition<any>, payload: unknown) => boolean;
}

export type EntryStep =
  | { kind: 'enter'; resolved: ResolvedJob }
  | { kind: 'out of scope' }
  /** Cannot run (unknown job, unreadable payload): `failure` is the run's to count, for a job the catalog knows. */
  | { kind: 'unplannable'; error: string; failure?: WalkFailure };

/** Pure: what a run does with a job request. */
export function entryStep(catalog: ReadonlyMap<string, JobDefinition<any>>, req: JobRequest, scope: EntryScope): EntryStep {
  const p = resolveJob(catalog, req);
  if ('error' in p) return { kind: 'unplannable', error: p.error, ...(catalog.has(req.name) ? { failure: unplannable(req.name, p.error) } : {}) };
  if (!scope.root && scope.inScope && !scope.inScope(p.job, p.payload)) return { kind: 'out of scope' };
  return { kind: 'enter', resolved: p };
}

/** Pure: the failure entry of a job that could not be resolved (no resource to name). */
export function unplannable(job: string, error: string): WalkFailure {
  return { job, resource: '?', error };
}

/** What one try of a job ended with (the lifecycle's result, or BullMQ's own failure). */
export interface JobEnd {
  status: string;
  rows: number;
  failure?: Omit<Failure, 'retryable'> | undefined;
}

/** Pure: a job's end as the ledger counts it: failed with its failure entry, or done with its rows; per `source.group` and status. */
export function settledJob(p: Pick<ResolvedJob, 'job' | 'resource'>, end: JobEnd): SettledJob {
  const group = `${p.job.source}.${p.job.group}`;
  if (end.failure) return { kind: 'failed', group, status: end.status, failure: walkFailure(p.job, p.resource, end.failure) };
  return { kind: 'done', rows: end.rows, group, status: end.status };
}
