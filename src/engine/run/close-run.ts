// How a run ends, under either runner (the run driver, run-driver.ts, calls it): its status
// from what its jobs did and what upstream answered, recorded with its stats and request figures.
import type { Warehouse } from '../../store/connection.ts';
import { summarizeRunRequests, type RequestSummary } from '../../store/books/request-summary.ts';
import { withReconnect } from '../../lib/reconnect.ts';
import { finishRun, type RunStatus } from '../../store/books/runs.ts';
import type { Housekeeping } from '../../store/books/retention.ts';
import { WarehouseError } from '../../lib/errors.ts';
import { errorLine, recordable, RECORD_CHARS } from '../../lib/recordable.ts';
import type { WalkStats } from '../../ports/run-ledger.ts';
import { finalRunStatus, runStatus } from './run-stats.ts';

/** The reason a walk was aborted by a signal: its run closes `interrupted` (src/cli/interrupt.ts). */
export class RunInterrupted extends Error {
  override readonly name = 'RunInterrupted';
  constructor(readonly signal: string) {
    super(`interrupted by ${signal}`);
  }
}

/**
 * Closes a run whose jobs all settled: its status from what they did and what upstream
 * answered (finalRunStatus), or `interrupted` at its signal's time; recorded with its stats and
 * request summary; the daily archives filled and retention applied as every run's end does.
 * Never leaves it `running` (finishRun closes it with the least record when the full one
 * cannot be written): requests that cannot be counted close it with its stats alone, its
 * status from them (runStatus), and then the failure is thrown.
 */
export async function closeRun(
  warehouse: Warehouse,
  runId: string,
  stats: WalkStats,
  housekeeping: Housekeeping,
  interrupted?: RunInterrupted,
): Promise<{ status: RunStatus; requests: RequestSummary }> {
  let requests: RequestSummary;
  try {
    requests = await withReconnect(() => summarizeRunRequests(warehouse, runId));
  } catch (err) {
    const status = interrupted ? 'interrupted' : runStatus(stats);
    const why = `its requests could not be counted (${recordable(errorLine(err), 200)})`;
    await finishRun(warehouse.db, runId, { status, stats, error: interrupted ? `${interrupted.message}; ${why}` : why }, housekeeping);
    throw new WarehouseError(recordable(`run ${runId} closed ${status}, but ${why}`, RECORD_CHARS), { cause: err });
  }
  // An interrupted run is neither a success nor a failure of upstream's or ours: what it did is
  // kept, what it did not reach is counted, and the next run goes on from there.
  const status = interrupted ? 'interrupted' : finalRunStatus(stats, requests);
  await finishRun(warehouse.db, runId, { status, stats: { ...stats, requests }, ...(interrupted ? { error: interrupted.message } : {}) }, housekeeping);
  return { status, requests };
}
