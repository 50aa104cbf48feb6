// Where a job's follow-ups come from: the jobs that declare it their parent (`plannedBy`),
// each once, or with `each`, once per item it listed. A parent never names its children,
// so adding a resource below a list is its own declaration alone.
import { ROUTES } from '../../upstream/routes.ts';
import { wholeListOf } from './not-found.ts';
import type { JobDefinition, JobRequest, Listed, SyncSettings, WholeList } from '../kit/types.ts';

/** Pure: the jobs that declare `parent` their parent, in the order of their routes in the API (routes.ts). */
export function childrenOf(catalog: ReadonlyMap<string, JobDefinition<any>>, parent: string): JobDefinition<any>[] {
  const order = (j: JobDefinition<any>) => ROUTE_ORDER.indexOf(j.route);
  return [...catalog.values()].filter((j) => j.plannedBy === parent).sort((a, b) => order(a) - order(b));
}

const ROUTE_ORDER = Object.keys(ROUTES);

/**
 * Pure: what a settled job plans: its children that run under these settings, those without
 * `each` once and the others once per listed item (item by item, so that a token's jobs
 * follow each other); and, for a list read whole, the whole list those items state.
 */
export function fanOut(children: readonly JobDefinition<any>[], listed: Listed | undefined, settings: SyncSettings): { followUps: JobRequest[]; wholeList?: WholeList } {
  const enabled = children.filter((c) => c.enabled?.(settings) ?? true);
  const once = enabled.filter((c) => !c.each).map((c) => ({ name: c.name, payload: {} }));
  const perItem = enabled.filter((c) => c.each);
  const fanned = (listed?.items ?? []).flatMap((item) => perItem.flatMap((c) => c.each!(item, settings).map((payload) => ({ name: c.name, payload }))));
  const followUps = [...once, ...fanned];
  if (listed?.wholeUnder === undefined) return { followUps };
  return { followUps, wholeList: wholeListOf(listed.wholeUnder, perItem, fanned) };
}

/**
 * Pure: follow-ups with no `marker` in their payloads. A marker says upstream's list vouched
 * that nothing changed since the last success (the job may skip its fetch); a list the
 * warehouse stored cannot vouch for now.
 */
export function unvouched(followUps: readonly JobRequest[]): JobRequest[] {
  return followUps.map((f) => {
    if (f.payload === null || typeof f.payload !== 'object' || !('marker' in f.payload)) return f;
    const { marker: _marker, ...rest } = f.payload as Record<string, unknown>;
    return { name: f.name, payload: rest };
  });
}
