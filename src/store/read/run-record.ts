// A run as sync.runs records it, for a command that waits for its end (`tesync enqueue --wait`).
import { sql } from 'drizzle-orm';
import type { Warehouse } from '../connection.ts';
import type { RunStatus } from '../books/runs.ts';

export interface RunRecord {
  status: RunStatus;
  /** sync.runs.stats as recorded: a walk's stats with its requests, an export's summary; `{}` or null before it ends. */
  stats: unknown;
  /** Both times as the server prints them (text): read back with `new Date`. */
  startedAt: string;
  finishedAt: string | null;
  /** The worker schedule that made it (`options.schedule`), if any. */
  schedule: string | null;
  error: string | null;
}

/** The run's record; undefined while sync.runs has no such run (no worker has begun it). */
export async function readRunRecord(w: Warehouse, runId: string): Promise<RunRecord | undefined> {
  const [row] = await w.query<{ status: RunStatus; stats: unknown; started_at: string; finished_at: string | null; schedule: string | null; error: string | null }>(
    sql`select status, stats, started_at::text, finished_at::text, options->>'schedule' as schedule, error from sync.runs where id = ${runId}`,
  );
  if (!row) return undefined;
  return { status: row.status, stats: row.stats, startedAt: row.started_at, finishedAt: row.finished_at, schedule: row.schedule, error: row.error };
}
