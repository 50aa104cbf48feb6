// The one 404 rule. A resource upstream said does not exist (a 404 whose code is
// `token_not_found`, `chart_not_found`, `token-not-found` or `chart-item-not-found`:
// src/lib/failure.ts) is recorded `not_found` with the marker its job was planned with
// (`details.notFoundMarker`), and is not asked again while it is planned with that marker:
//   - its list's entry changed (a token's freshness, a chart's freshness and row count, the
//     gateway's read plane): planned with another marker, it is asked again;
//   - a whole list left it out (the token unlisted, its coverage flag off, the chart no longer
//     in its catalog): the list forgets the 404 (`WholeList`, in the list's own transaction),
//     so once it is listed again it is asked again, whatever its marker;
//   - without a marker nothing tells it unchanged: it is asked every run;
//   - a full sync asks everything.
// A success clears the state; a new 404 records the marker afresh.
import { isRecord } from '../../schema/upstream/values.ts';
import type { ResourceStateRow } from '../../store/books/resource-state.ts';
import type { JobDefinition, JobRequest, WholeList } from '../kit/types.ts';

/** Pure: whether a resource recorded `not_found` under `marker` is still to be left alone. */
export function stillNotFound(state: Pick<ResourceStateRow, 'status' | 'details'> | undefined, marker: string | null | undefined): boolean {
  if (!state || state.status !== 'not_found' || !marker) return false;
  return isRecord(state.details) && state.details.notFoundMarker === marker;
}

/** What a 404 keeps in the resource's state. */
export const notFoundDetails = (marker: string | null) => ({ notFoundMarker: marker });

/** Pure: the whole list that `jobs`' follow-ups state, under `under`. */
export function wholeListOf(under: string, jobs: readonly JobDefinition<any>[], followUps: readonly JobRequest[]): WholeList {
  const byName = new Map(jobs.map((j) => [j.name, j]));
  const planned = followUps.flatMap((f) => {
    const job = byName.get(f.name);
    const p = job?.payload.safeParse(f.payload);
    return job && p?.success ? [job.resource(p.data)] : [];
  });
  return { under, groups: jobs.map((j) => j.group), planned };
}
