// Provenance: every row links to the archived body it was read from (sync.raw_responses), so
// each version in `T_history` can be traced to the response that carried it (contract: time
// and history). The column is bookkeeping: a row written again unchanged keeps its first link,
// as it keeps its `fetched_at`.
//
// Linked in two steps, so that the read needs no store: before the write each row names its
// body by its place among the bodies the writes name (a negative number, which no archived id
// is: rows from two bodies stay two rows to the write path's dedupe, as with their ids); in
// the commit's transaction, once the bodies are archived there (commit.ts), the ids replace
// those places on the rows about to be sent.
import { getTableColumns } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { TransientError } from '../../lib/errors.ts';
import { bodyKey, type RawBody } from '../../ports/recorder.ts';
import type { TableWrite } from '../kit/types.ts';

const hasLink = (table: PgTable) => 'rawResponseId' in getTableColumns(table);

/** The bodies a read's writes name, and which of them each write was read from. */
export interface BodyLinks {
  /** The distinct bodies named, each with a digest (a body without one, a 304's, is never archived). */
  bodies: RawBody[];
  /** Per write, the place in `bodies` of the body it was read from (null: none): also the body that closes the rows it removes. */
  ofWrite: (number | null)[];
}

/**
 * Pure: names on the rows of each write the body it was read from: the body the row names
 * (`fromEach`: the page of a list it was on), else the body the write names (`from`), else the
 * last one the job read (`read`: a paged list's last page, the one that completed it); rows of
 * a body without a digest keep null. In place: a token's history is tens of thousands of rows
 * (docs/performance.md).
 */
export function linkProvisionally(read: readonly RawBody[], writes: readonly TableWrite[]): BodyLinks {
  const last = read.at(-1);
  const bodies: RawBody[] = [];
  const places = new Map<string, number>();
  const place = (b: RawBody | null | undefined): number | null => {
    if (!b || b.sha256 === '') return null;
    const key = bodyKey(b);
    let at = places.get(key);
    if (at === undefined) places.set(key, (at = bodies.push(b) - 1));
    return at;
  };
  const ofWrite = writes.map((w) => {
    const own = place(w.from === undefined ? last : w.from);
    const each = (w.fromEach ?? []).map(place);
    if (hasLink(w.table)) {
      const rows = w.rows as Record<string, unknown>[];
      for (let i = 0; i < rows.length; i++) {
        const at = w.fromEach?.[i] ? each[i]! : own;
        rows[i]!.rawResponseId = at === null ? null : -(at + 1);
      }
    }
    return own;
  });
  return { bodies, ofWrite };
}

/**
 * Pure: the archived ids in place of the bodies' places, on the rows about to be sent
 * (`sending`, per write: upsert.ts `PreparedUpsert.sending`); returns each write's body id.
 *
 * A body the job read but the raw responses do not hold (its write failed) refuses the whole
 * write, retried later: no row is written without the body it came from, and the raw
 * responses never lose a body once held (`sync.keep_bodies`), so a link found here always resolves.
 */
export function linkToBodies(links: BodyLinks, ids: ReadonlyMap<string, number>, sending: readonly (readonly Record<string, unknown>[])[]): (number | null)[] {
  const unarchived = links.bodies.filter((b) => !ids.has(bodyKey(b)));
  if (unarchived.length > 0) {
    throw new TransientError(`${unarchived.length === 1 ? 'a body' : `${unarchived.length} bodies`} this write was read from could not be archived (${unarchived[0]!.path}): nothing written, so that no row lacks its body`);
  }
  const idAt = links.bodies.map((b) => ids.get(bodyKey(b))!);
  for (const rows of sending) {
    for (const row of rows) {
      const at = row.rawResponseId;
      if (typeof at === 'number' && at < 0) row.rawResponseId = idAt[-at - 1];
    }
  }
  return links.ofWrite.map((at) => (at === null ? null : idAt[at]!));
}
