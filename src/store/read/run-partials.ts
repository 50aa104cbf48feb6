// The resources a run wrote `partial` with a note of why (sync.resource_state `last_error`
// of a success: a list not whole, items or chart points refused alone), for the summary
// `tesync sync` prints beside its failures.
import { sql } from 'drizzle-orm';
import type { Warehouse } from '../connection.ts';

export interface PartialResource {
  source: string;
  resource: string;
  /** Why it is not whole (src/engine/job/partial-note.ts). */
  note: string;
}

/** The run's partial resources that say why, by source and resource, at most `limit`; with the count of all. */
export async function readRunPartials(w: Warehouse, runId: string, limit: number): Promise<{ resources: PartialResource[]; total: number }> {
  const rows = await w.query<{ source: string; resource: string; last_error: string; total: number }>(sql`
    select source, resource, last_error, count(*) over ()::int as total
    from sync.resource_state
    where last_run_id = ${runId}::uuid and status = 'partial' and last_error is not null
    order by source, resource
    limit ${limit}`);
  return { resources: rows.map((r) => ({ source: r.source, resource: r.resource, note: r.last_error })), total: Number(rows[0]?.total ?? 0) };
}
