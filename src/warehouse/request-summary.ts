// The request figures of a run, for sync.runs.stats, whichever runner ran it.
import { sql } from 'drizzle-orm';
import type { Warehouse } from './connection.ts';

export interface RequestSummary {
  total: number;
  byStatus: Record<string, number>;
  rateLimited: number;
  failedAttempts: number;
}

export async function summarizeRunRequests(warehouse: Warehouse, runId: string): Promise<RequestSummary> {
  const rows = await warehouse.query<{ status: string; n: string }>(
    sql`select coalesce(http_status::text, 'network') as status, count(*)::text as n from sync.requests where run_id = ${runId} group by 1`,
  );
  const byStatus = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  const total = Object.values(byStatus).reduce((a, b) => a + b, 0);
  const failedAttempts = Object.entries(byStatus)
    .filter(([s]) => s === 'network' || Number(s) >= 500)
    .reduce((a, [, n]) => a + n, 0);
  return { total, byStatus, rateLimited: byStatus['429'] ?? 0, failedAttempts };
}
