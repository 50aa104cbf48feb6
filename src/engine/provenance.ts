// Provenance: every row links to the archived body it was read from (sync.raw_responses), so
// each version in `T_history` can be traced to the response that carried it (contract: time
// and history). The column is bookkeeping: a row written again unchanged keeps its first link,
// as it keeps its `fetched_at`.
import { getTableColumns } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { bodyKey } from '../upstream/recorder.ts';
import type { JobContext, Source, TableWrite } from './types.ts';

const hasLink = (table: PgTable) => 'rawResponseId' in getTableColumns(table);

/**
 * Sets `raw_response_id` on the rows of each write: the body the row names (`fromEach`: the
 * page of a list it was on), else the body the write names (`from`), else the last one the job
 * read (a paged list's last page: the one that completed it). Rows of a body that is not
 * archived keep null. Returns each write's body id: also the body that closes the rows the
 * write removes (null: none).
 */
export async function linkToBodies(ctx: JobContext, source: Source, writes: readonly TableWrite[]): Promise<(number | null)[]> {
  const read = ctx.ledger.understood;
  const last = read.at(-1);
  const bodyOf = (w: TableWrite) => (w.from === undefined ? last : w.from);
  const named = writes.flatMap((w) => [bodyOf(w), ...(w.fromEach ?? [])]);
  const bodies = [...new Map(named.filter((b) => b !== undefined && b !== null).map((b) => [bodyKey(b), b])).values()];
  const ids = bodies.length === 0 ? new Map<string, number>() : await ctx.archive.archivedIds(source, bodies);
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
