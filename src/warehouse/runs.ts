// sync.runs: one row per walk, from start to its final status.
import { eq } from 'drizzle-orm';
import { runs } from '../../schema/warehouse/sync.ts';
import type { Db } from './connection.ts';
import { withReconnect } from './retry.ts';

export type RunStatus = 'running' | 'succeeded' | 'partial' | 'failed';

export async function startRun(db: Db, run: { id: string; trigger: string; sources: string[]; options?: unknown; at: Date }): Promise<void> {
  await withReconnect(() => db.insert(runs).values({
    id: run.id,
    trigger: run.trigger,
    sources: run.sources,
    options: run.options ?? {},
    startedAt: run.at,
    status: 'running',
  }));
}

export async function finishRun(db: Db, id: string, end: { status: RunStatus; stats: unknown; error?: string; at: Date }): Promise<void> {
  await withReconnect(() =>
    db
      .update(runs)
      .set({ status: end.status, stats: end.stats, error: end.error ?? null, finishedAt: end.at })
      .where(eq(runs.id, id)),
  );
}
