// The mass-removal check of the contract: a set that would lose more than a fifth of its
// members at once (three or more) is removed only when a second response, fetched again at
// once, agrees; otherwise the first is recorded `invalid` and nothing is removed. A list cut
// short on the way (a proxy, a timeout upstream, a page lost without a count) looks whole to
// every other check, and would otherwise delist, close or delete for good in one run.
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { absentKeys } from '../../store/write/set-removal.ts';
import type { Executor } from '../../store/write/table-shape.ts';
import type { TableWrite } from '../kit/types.ts';

/** What one `replace` write would remove. */
export interface PendingRemoval {
  /** Which of the outcome's writes. */
  write: number;
  /** The table and the set, e.g. `app.tokens` or `gateway.token_sections {"tokenSlug":"aurora"}`. */
  set: string;
  members: number;
  /** The keys (JSON arrays) of the members that would leave, sorted. */
  absent: string[];
}

/** Pure: whether losing `absent` of `members` at once needs a second response to agree. */
export function isMassRemoval(members: number, absent: number): boolean {
  return absent >= 3 && absent * 5 > members;
}

/** The removals the outcome's `replace` writes would make, per set (only sets that lose members). */
export async function pendingRemovals(db: Executor, writes: readonly TableWrite[]): Promise<PendingRemoval[]> {
  const out: PendingRemoval[] = [];
  for (const [i, w] of writes.entries()) {
    if (!w.replace) continue;
    const { members, absent } = await absentKeys(db, w.table, w.rows, w.replace);
    if (absent.length > 0) out.push({ write: i, set: `${nameOf(w.table)}${Object.keys(w.replace).length ? ` ${JSON.stringify(w.replace)}` : ''}`, members, absent });
  }
  return out;
}

/** Pure: the removals that need a second response to agree. */
export function massRemovals(pending: readonly PendingRemoval[]): PendingRemoval[] {
  return pending.filter((p) => isMassRemoval(p.members, p.absent.length));
}

/** Pure: whether two fetches would remove exactly the same members of the same sets. */
export function sameRemovals(a: readonly PendingRemoval[], b: readonly PendingRemoval[]): boolean {
  const key = (list: readonly PendingRemoval[]) => JSON.stringify([...list].map((p) => [p.set, p.absent]).sort());
  return key(a) === key(b);
}

/**
 * Pure: what the removals of a read fetched again at once decide (`earlier`: those of the reads
 * before it, in order, each of which said fetch again). The first is written unless it removes
 * more than a fifth of a set; a second that removes exactly the same members is written; when it
 * disagrees, a third decides: the answer two of the three agree on is written (the third's
 * rows), the outvoted read named; when all three disagree, nothing is written.
 */
export function removalVerdict(earlier: readonly (readonly PendingRemoval[])[], now: readonly PendingRemoval[]): { write: true; outvoted?: number } | { write: false; again: boolean } {
  if (earlier.length === 0) return massRemovals(now).length === 0 ? { write: true } : { write: false, again: true };
  if (earlier.length === 1) return sameRemovals(earlier[0]!, now) ? { write: true } : { write: false, again: true };
  if (sameRemovals(now, earlier[1]!)) return { write: true, outvoted: 0 };
  if (sameRemovals(now, earlier[0]!)) return { write: true, outvoted: 1 };
  return { write: false, again: false };
}

/** Pure: the words of a refusal, naming the set and the counts (never a body). */
export function describeRemovals(mass: readonly PendingRemoval[]): string {
  return mass.map((p) => `${p.set} would lose ${p.absent.length} of ${p.members}`).join('; ');
}

function nameOf(table: PgTable): string {
  const c = getTableConfig(table);
  return c.schema ? `${c.schema}.${c.name}` : c.name;
}
