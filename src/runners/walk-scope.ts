// Which follow-ups a walk runs, under either runner: the groups it covers (planners always),
// and the tokens it was asked for. Roots always run.
import type { JobDefinition } from '../engine/kit/types.ts';

/** Groups that plan the others (catalogs, token lists): every walk runs them, whatever its scope. */
export const PLANNER_GROUPS: readonly string[] = ['catalog', 'tokens'];

/**
 * Whether a job may plan follow-ups: the planner groups, and list jobs that plan their items
 * (a token's charts) even when unchanged. While one is queued or running, a walk's total may
 * still grow (progress shows its ETA as a lower bound).
 */
export function mayPlan(job: Pick<JobDefinition<any>, 'group' | 'unchanged'>): boolean {
  return PLANNER_GROUPS.includes(job.group) || job.unchanged !== undefined;
}

export interface WalkScope {
  /** Null: every group. Plain (`screener`) or qualified (`app.screener`) names. */
  groups: readonly string[] | null;
  /** Empty: every token. */
  tokens: readonly string[];
}

export function inScope(scope: WalkScope, job: Pick<JobDefinition<any>, 'source' | 'group' | 'token'>, payload: unknown): boolean {
  if (scope.groups && !PLANNER_GROUPS.includes(job.group) && !scope.groups.includes(job.group) && !scope.groups.includes(`${job.source}.${job.group}`)) return false;
  if (scope.tokens.length > 0 && job.token) {
    const slug = job.token(payload);
    if (slug !== undefined && !scope.tokens.includes(slug)) return false;
  }
  return true;
}
