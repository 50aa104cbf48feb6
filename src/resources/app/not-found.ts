// App-host resources a 404 said do not exist (`token_not_found`, `chart_not_found`: recorded
// `not_found` by the runner, src/lib/failure.ts) are not asked again until the list that
// plans them says they exist again. The planners keep the rule: the token list for a token's
// routes (snapshot, history, chart catalog, bundle), a token's chart catalog for its charts.
//
// Rule: a `not_found` resource is planned again when
//   - its list entry's marker (a token's `freshness`; a chart's freshness and row count, each
//     without upstream's volatile fields: an `asOf` a recomputation moved says nothing
//     changed) differs from the one the entry had when the 404 came: upstream says it
//     changed; or
//   - a whole list (complete token list, catalog without unreadable items) left it out since
//     the 404 (for a token route: the token unlisted, or its coverage flag off) and now
//     plans it again: it went away and came back.
// Otherwise it is left out, and nothing is sent for it.
//
// The planner keeps what it needs in the resource's state, `details.notFound`: `at` (the
// 404's last_attempt_at: a later 404 starts afresh), `marker` (the entry's marker in the list
// the 404's run was planned from, i.e. the one stored before this run's list is written) and
// `absent`. Planning consumes nothing: a resource planned again stays `not_found` (and is
// planned again) until its job runs; a success clears the state, a new 404 a fresh mark.
import { isDeepStrictEqual } from 'node:util';
import type { JobContext, JobRequest } from '../../engine/types.ts';
import type { NotFoundState } from '../../store/known.ts';

export interface NotFoundMark {
  at: string;
  marker: string | null;
  absent: boolean;
}

export type { NotFoundState };

/** What the list says now of a resource it plans. */
export interface PlannedEntry {
  marker: string | null;
  /** The entry's marker as stored before this list was written (null: not stored). */
  previous: string | null;
}

/** Pure: the state's mark, when it describes the state's current 404. */
export function currentMark(state: NotFoundState): NotFoundMark | null {
  const d = state.details;
  const m = typeof d === 'object' && d !== null ? (d as Record<string, unknown>).notFound : undefined;
  if (typeof m !== 'object' || m === null) return null;
  const mark = m as Partial<NotFoundMark>;
  if (typeof mark.at !== 'string' || mark.at !== state.lastAttemptAt?.toISOString() || typeof mark.absent !== 'boolean') return null;
  return { at: mark.at, marker: typeof mark.marker === 'string' ? mark.marker : null, absent: mark.absent };
}

/**
 * Pure: whether to ask a `not_found` resource again, and the mark to store (null when the
 * stored one stands). `entry`: what the list says of it now, undefined when it does not plan
 * it; `whole`: the list came back whole (only then does leaving it out mean it is absent).
 */
export function judgeNotFound(state: NotFoundState, entry: PlannedEntry | undefined, whole: boolean): { ask: boolean; mark: NotFoundMark | null } {
  const stored = currentMark(state);
  let mark = stored ?? { at: state.lastAttemptAt?.toISOString() ?? '', marker: entry?.previous ?? null, absent: false };
  let ask = false;
  if (!entry) {
    if (whole) mark = { ...mark, absent: true };
  } else {
    ask = mark.absent || mark.marker !== entry.marker;
  }
  return { ask, mark: stored && isDeepStrictEqual(stored, mark) ? null : mark };
}

/**
 * The `not_found` states of app resources under `prefix` of the given kinds (resource groups):
 * for the token list, once a run.
 */
export function readNotFound(ctx: JobContext, prefix: string, kinds: readonly string[]): Promise<NotFoundState[]> {
  return ctx.settings.full ? Promise.resolve([]) : ctx.known.notFoundUnder(prefix, kinds);
}

/** The `not_found` states among the given app resources (by key: for a per-token planner). */
export function readNotFoundOf(ctx: JobContext, resources: readonly string[]): Promise<NotFoundState[]> {
  return ctx.settings.full ? Promise.resolve([]) : ctx.known.notFoundOf(resources);
}

/**
 * Applies the rule to the `not_found` states a planner read: stores their marks and returns
 * the resources not to ask. `planned`: the resources the list plans now, by resource.
 */
export async function screenNotFound(ctx: JobContext, states: readonly NotFoundState[], planned: ReadonlyMap<string, PlannedEntry>, whole: boolean): Promise<Set<string>> {
  const leaveOut = new Set<string>();
  for (const s of states) {
    const entry = planned.get(s.resource);
    const { ask, mark } = judgeNotFound(s, entry, whole);
    if (entry && !ask) leaveOut.add(s.resource);
    if (mark) await ctx.known.markNotFound(s.resource, mark);
  }
  if (leaveOut.size > 0) ctx.logger.info({ resources: leaveOut.size }, 'not asking again for resources upstream said do not exist, until their list says they are back');
  return leaveOut;
}

/** The follow-ups without those left out; `resourceOf` names a follow-up's resource. */
export function withoutLeftOut(followUps: readonly JobRequest[], leaveOut: ReadonlySet<string>, resourceOf: (f: JobRequest) => string | null): JobRequest[] {
  if (leaveOut.size === 0) return [...followUps];
  return followUps.filter((f) => {
    const r = resourceOf(f);
    return r === null || !leaveOut.has(r);
  });
}
