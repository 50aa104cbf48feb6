// sync.runs: one row per walk, from start to its final status.
import { hostname } from 'node:os';
import { and, eq, sql } from 'drizzle-orm';
import { runs } from '../schema/warehouse/sync.ts';
import type { Db } from './connection.ts';
import { fillDailyArchives } from './daily-archive.ts';
import { SERVER_CLOCK } from './known-time.ts';
import { applyRetention, type Housekeeping } from './retention.ts';
import { withReconnect } from './retry.ts';

export type RunStatus = 'running' | 'succeeded' | 'partial' | 'failed';

// A run's times are the server's clock, as every time in the warehouse (SERVER_CLOCK).

export async function startRun(db: Db, run: { id: string; trigger: string; sources: string[]; options?: unknown }): Promise<void> {
  await withReconnect(() => db.insert(runs).values({
    id: run.id,
    trigger: run.trigger,
    sources: run.sources,
    options: run.options ?? {},
    startedAt: SERVER_CLOCK,
    status: 'running',
  }));
}

/**
 * Ends a run: the daily archives filled through its day (whatever its status), then its row;
 * then, with `housekeeping`, sync.requests past its retention removed (retention.ts: cheap
 * when there is nothing to remove, bounded when there is much; never fails the run).
 */
export async function finishRun(db: Db, id: string, end: { status: RunStatus; stats: unknown; error?: string }, housekeeping?: Housekeeping): Promise<void> {
  await withReconnect(() => fillDailyArchives(db));
  await withReconnect(() =>
    db
      .update(runs)
      .set({ status: end.status, stats: end.stats, error: end.error ?? null, finishedAt: SERVER_CLOCK })
      .where(eq(runs.id, id)),
  );
  if (housekeeping) await applyRetention(db, housekeeping);
}

/** Who runs a walk: lets a later run on the same machine tell a killed run from a live one. */
export function runOwner(): { host: string; pid: number } {
  return { host: hostname(), pid: process.pid };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, it is just not ours.
    return (err as { code?: string }).code === 'EPERM';
  }
}

/**
 * Marks `failed` the runs still `running` that were started on this machine by a process
 * that no longer exists (killed, crashed): nobody is left to finish them.
 */
export async function closeAbandonedRuns(db: Db): Promise<number> {
  const { host } = runOwner();
  const open = await db
    .select({ id: runs.id, options: runs.options })
    .from(runs)
    .where(and(eq(runs.status, 'running'), sql`${runs.options}->'owner'->>'host' = ${host}`));
  let closed = 0;
  for (const r of open) {
    const pid = Number((r.options as { owner?: { pid?: unknown } }).owner?.pid);
    if (!Number.isInteger(pid) || alive(pid)) continue;
    if (await abandonRun(db, r.id, `abandoned: process ${pid} on ${host} ended before the run finished`)) closed++;
  }
  return closed;
}

/** Marks a run `failed` with why nobody will finish it, unless it was recorded meanwhile; true when it was still running. */
export async function abandonRun(db: Db, id: string, error: string): Promise<boolean> {
  const closed = await withReconnect(() =>
    db
      .update(runs)
      .set({ status: 'failed', finishedAt: SERVER_CLOCK, error })
      .where(and(eq(runs.id, id), eq(runs.status, 'running')))
      .returning({ id: runs.id }),
  );
  return closed.length > 0;
}
