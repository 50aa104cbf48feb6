// Provenance: every row links to the archived body it was read from (sync.raw_responses), so
// each version in `T_history` can be traced to the response that carried it (contract: time
// and history). The column is bookkeeping: a row written again unchanged keeps its first link,
// as it keeps its `fetched_at`.
import { getTableColumns } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { TransientError } from '../../lib/errors.ts';
import { bodyKey } from '../../ports/recorder.ts';
import type { JobContext, Source, TableWrite } from '../kit/types.ts';

const hasLink = (table: PgTable) => 'rawResponseId' in getTableColumns(table);

/**
 * Sets `raw_response_id` on the rows of each write: the body the row names (`fromEach`: the
 * page of a list it was on), else the body the write names (`from`), else the last one the job
 * read (a paged list's last page: the one that completed it). Returns each write's body id:
 * also the body that closes the rows the write removes (null: none).
 *
 * A body the job read but the raw responses do not hold (its write failed) refuses the whole
 * write, retried later: no row is written without the body it came from, and the raw
 * responses never lose a body once held (`sync.keep_bodies`), so a link found here always resolves.
 * A body without a digest (a 304 carries none) was never archived: its rows keep null.
 */
export async function linkToBodies(ctx: JobContext, source: Source, writes: readonly TableWrite[]): Promise<(number | null)[]> {
  const read = ctx.findings.understood;
  const last = read.at(-1);
  const bodyOf = (w: TableWrite) => (w.from === undefined ? last : w.from);
  const named = writes.flatMap((w) => [bodyOf(w), ...(w.fromEach ?? [])]);
  const bodies = [...new Map(named.filter((b) => b !== undefined && b !== null).map((b) => [bodyKey(b), b])).values()];
  const ids = bodies.length === 0 ? new Map<string, number>() : await ctx.recorder.rawResponseIds(source, bodies);
  const unarchived = bodies.filter((b) => b.sha256 !== '' && !ids.has(bodyKey(b)));
  if (unarchived.length > 0) {
    throw new TransientError(`${unarchived.length === 1 ? 'a body' : `${unarchived.length} bodies`} this write was read from could not be archived (${unarchived[0]!.path}): nothing written, so that no row lacks its body`);
  }
  return writes.map((w) => {
    const body = bodyOf(w);
    const id = body ? (ids.get(bodyKey(body)) ?? null) : null;
    // In place: a token's history is tens of thousands of rows (docs/performance.md).
    if (hasLink(w.table)) {
      const rows = w.rows as Record<string, unknown>[];
      for (let i = 0; i < rows.length; i++) {
        const own = w.fromEach?.[i];
        rows[i]!.rawResponseId = own ? (ids.get(bodyKey(own)) ?? null) : id;
      }
    }
    return id;
  });
}
