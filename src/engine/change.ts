// Change detection: a resource whose upstream marker (freshness, asOf, row count) is the
// same as at its last successful fetch is not fetched again. A marker is trusted for a
// bounded time only, so a marker that failed to move cannot hide changes for ever.
import type { ResourceStateRow } from '../store/resource-state.ts';

/** Statuses a marker vouches for: a success, and upstream's answer that there is nothing yet. */
const TRUSTED: ReadonlySet<string> = new Set(['ok', 'unchanged', 'not_materialized']);

export function markerUnchanged(state: ResourceStateRow | undefined, marker: string | null | undefined, now: Date, maxAgeMs: number): boolean {
  if (!state || !marker || state.freshness !== marker) return false;
  if (!TRUSTED.has(state.status)) return false;
  return state.lastSuccessAt !== null && now.getTime() - state.lastSuccessAt.getTime() < maxAgeMs;
}
