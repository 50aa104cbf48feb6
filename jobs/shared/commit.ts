// Rows and the resource state that describes them, in one transaction.
import { writeSuccess, type SuccessState } from '../../src/warehouse/resource-state.ts';
import type { PgTable } from 'drizzle-orm/pg-core';
import { prepareUpsert, type Executor, type PreparedUpsert, type UpsertOptions } from '../../src/warehouse/upsert.ts';
import { isRecord } from '../../schema/upstream/values.ts';
import type { JobContext } from '../types.ts';
import { guarded, refuse, type CellTally } from './understood.ts';

export type StateFields = Omit<SuccessState, 'runId' | 'at'> & {
  /** How the response's cells were read: judged before anything is written. */
  cells?: CellTally;
};

/**
 * The one write path of a resource. A tally that shows the response was not understood, or
 * rows that contradict each other, refuse it whole: nothing written, its body kept `invalid`.
 * Unreadable single cells make an `ok` resource `partial`, their counts in its state.
 */
export async function commit(ctx: JobContext, state: StateFields, write: (tx: Executor) => Promise<number>): Promise<number> {
  const { cells, ...fields } = state;
  const refusal = cells?.refusal();
  if (refusal) throw await refuse(ctx, refusal);
  const unreadable = cells?.unreadable ?? 0;
  const status = committedStatus(state);
  const details = cells && unreadable > 0 ? { ...(isRecord(fields.details) ? fields.details : {}), ...cells.summary() } : fields.details;
  return guarded(ctx, () =>
    ctx.warehouse.db.transaction(async (tx) => {
      const rows = await write(tx as unknown as Executor);
      await writeSuccess(tx as unknown as Executor, { ...fields, status, details, runId: ctx.runId, at: ctx.now(), rowCount: fields.rowCount ?? rows });
      return rows;
    }),
  );
}

/** The status a handler reports for a committed resource (`partial` when cells were unreadable). */
export function committedStatus(state: Pick<StateFields, 'status' | 'cells'>): string {
  return (state.cells?.unreadable ?? 0) > 0 && state.status === 'ok' ? 'partial' : state.status;
}

/**
 * A handler's big batch made ready before its transaction (deduplicated, in key order, its key
 * range probed), written by `run(tx)` inside it. Rows that contradict each other refuse the
 * resource here, before anything is written.
 */
export function prepareRows<T extends PgTable>(ctx: JobContext, table: T, rows: T['$inferInsert'][], options: UpsertOptions<T>): Promise<PreparedUpsert> {
  return guarded(ctx, () => prepareUpsert(ctx.warehouse.db, table, rows, options));
}

/** Columns every normalized row carries. */
export function rowMeta(ctx: JobContext, extra: { asOf?: Date | null; freshness?: string | null; status?: string } = {}) {
  return {
    fetchedAt: ctx.now(),
    asOf: extra.asOf ?? null,
    freshness: extra.freshness ?? null,
    status: extra.status ?? 'ok',
    runId: ctx.runId,
  };
}

/** The UTC calendar date of a moment, for the daily archives. */
export function utcDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}
