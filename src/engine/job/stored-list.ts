// What a list that failed or was refused still plans (contract: "A refused or failed list is
// not the end of the walk"): its children, from the list the warehouse holds.
import type { Failure } from '../../lib/failure.ts';
import type { ResourceStateRow } from '../../store/books/resource-state.ts';
import { fanOut, unvouched } from './fan-out.ts';
import { declarationInput, storedPlan } from './job-input.ts';
import type { JobContext, JobDefinition, JobRequest, KnownAsk } from '../kit/types.ts';

/** The job that failed: its definition, payload and the jobs that declare it their parent. */
interface FailedList {
  job: JobDefinition<any>;
  payload: unknown;
  children: readonly JobDefinition<any>[];
}

/**
 * Pure: whether a list that failed so still plans its children (from the stored list). Yes
 * when upstream answered and the answer was refused, was a 5xx, or held the bucket: the host
 * is up, and its other routes may answer. No when it says the list does not exist (404), when
 * it refused the request (another 4xx: a key refused is refused on every route), and when no
 * answer came at all (a connection refused, a name not found, a timeout): the children would
 * ask the same host, and a sync of an unreachable upstream ends at its roots.
 */
export function walksOnBelow(failure: Pick<Failure, 'status' | 'httpStatus' | 'answered'>): boolean {
  if (failure.answered) return false;
  if (failure.status === 'invalid' || failure.status === 'rate_limited') return true;
  return failure.httpStatus !== undefined && failure.httpStatus >= 500;
}

/**
 * What a job that failed or was refused still plans: its children, fanned out over the items
 * the warehouse holds from its last complete list (`JobDefinition.unchanged`), never a whole
 * list (nothing is retired, forgotten or removed by it) and with no marker (nothing vouches
 * that they did not change, so each is fetched). `from`: when that list was stored, when any
 * of its items were.
 */
export async function plannedFromStored(ctx: JobContext, planned: FailedList, state: ResourceStateRow | undefined, asks?: KnownAsk): Promise<{ followUps: JobRequest[]; from: string | null }> {
  if (planned.children.length === 0) return { followUps: [], from: null };
  let items: readonly unknown[] = [];
  try {
    const input = declarationInput(ctx, planned.payload, state);
    // `asks`: the stored plan's questions, as the try's declaration read named them (read
    // again when the try failed before it).
    items = (await storedPlan(ctx, planned.job, input, asks ?? planned.job.declared(input).unchangedKnows)).items ?? [];
  } catch (err) {
    ctx.logger.warn({ err }, 'could not read the stored list; planning only what needs no list');
  }
  const { followUps } = fanOut(planned.children, { items }, ctx.settings);
  const from = items.length > 0 ? (state?.lastSuccessAt?.toISOString() ?? 'an earlier run') : null;
  if (from) ctx.logger.info({ planned: followUps.length, from }, 'list not read: its children planned from the list the warehouse holds');
  return { followUps: unvouched(followUps), from };
}
