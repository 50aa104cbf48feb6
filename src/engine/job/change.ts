// Change detection, the one skip rule, on two kinds of evidence:
// - before the fetch, the upstream marker (freshness, asOf, row count): a resource whose marker
//   is the same as at its last successful fetch is not fetched again. A marker is trusted for a
//   bounded time only, so a marker that failed to move cannot hide changes for ever.
// - after the fetch, the body: for a job whose rows come from its body alone
//   (`JobDefinition.rowsFromBodyAlone`), a body byte for byte as last written is not written
//   again; the fetch still counts as a success, so its new marker is kept for the next run.
import type { ResourceStateRow } from '../../store/books/resource-state.ts';
import type { Outcome } from '../kit/types.ts';

/** Statuses a marker vouches for: a success, and upstream's answer that there is nothing yet. */
const TRUSTED: ReadonlySet<string> = new Set(['ok', 'unchanged', 'not_materialized']);

/**
 * Pure: whether the resource's rows are as its last success wrote them (a success, or
 * upstream's answer that there is nothing yet): only then may a marker or an ETag of that
 * success stand for them. A failure, a refusal or rows another job wrote since (bundles
 * recorded `skipped` by a keyless token list) vouch for nothing.
 */
export function vouched(state: Pick<ResourceStateRow, 'status'> | undefined): boolean {
  return state !== undefined && TRUSTED.has(state.status);
}

export function markerUnchanged(state: ResourceStateRow | undefined, marker: string | null | undefined, now: Date, maxAgeMs: number): boolean {
  if (!state || !marker || state.freshness !== marker) return false;
  if (!vouched(state)) return false;
  return state.lastSuccessAt !== null && now.getTime() - state.lastSuccessAt.getTime() < maxAgeMs;
}

/** Statuses whose stored hash is of a body that was written. */
const WRITTEN: ReadonlySet<string> = new Set(['ok', 'unchanged']);

/**
 * Pure: the outcome to commit instead of `outcome` when its body is the one last written (the
 * stored rows, row count and details stand), or null when it must be written.
 */
export function sameBodyAsWritten(state: ResourceStateRow | undefined, outcome: Outcome): Outcome | null {
  if (!state || !outcome.hash || state.hash !== outcome.hash || !WRITTEN.has(state.status) || outcome.status !== 'ok') return null;
  return { status: 'ok', reported: 'unchanged', asOf: outcome.asOf ?? null, hash: outcome.hash, rowCount: state.rowCount, details: state.details };
}
