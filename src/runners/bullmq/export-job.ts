// The `export` schedule's job: the daily archives out as Parquet into TE_EXPORT_DIR
// (src/export/export.ts: only the days new or changed since the export before), recorded in
// sync.runs like a walk. No upstream request. The archives are filled first: a day is final
// once a fill ran after its end, so the export shortly after midnight writes the day just over
// as it ended, whether or not a walk finished since.
//
// Its run is opened and closed by the run driver (src/engine/run/run-driver.ts), as a walk's is;
// its work is no job on the run ledger, so it closes with the export's own record.
// What went wrong is the run's record (failed, with its error), not the job's: the job
// completes, and the schedule's next tick tries again. Only a run that cannot be opened (the
// warehouse out of reach) fails the job, for BullMQ to try again.
import type { Job } from 'bullmq';
import { errorLine } from '../../lib/recordable.ts';
import { DAILY_ARCHIVE_NAMES } from '../../schema/warehouse/history.ts';
import { fillDailyArchives } from '../../store/write/daily-archive.ts';
import { exportWarehouse, type ExportSummary } from '../../export/export.ts';
import type { RunEnding } from '../../engine/run/run-driver.ts';
import type { RunnerDeps } from './deps.ts';
import { EXPORT_SCHEDULE } from './schedules.ts';

export async function processExport(deps: Pick<RunnerDeps, 'config' | 'warehouse' | 'driver' | 'logger' | 'prefix' | 'queueBackend'>, job: Job, runId: string, trigger: string): Promise<{ runId: string; queued: number }> {
  const logger = deps.logger.child({ runId, schedule: EXPORT_SCHEDULE });
  const to = deps.config.exportDir;
  // A job tried again after its worker died goes on with its run; one recorded is done.
  const existing = await deps.driver.status(runId);
  if (existing && existing !== 'running') return { runId, queued: 0 };
  if (!existing) {
    // The prefix, backend and job tell a later worker whether the queues still hold the run (lost-runs.ts).
    const options = { schedule: EXPORT_SCHEDULE, to: to ?? null, tables: DAILY_ARCHIVE_NAMES, job: job.id, queuePrefix: deps.prefix, queueBackend: deps.queueBackend };
    await deps.driver.open({ id: runId, trigger, sources: [], options });
    logger.info({ trigger, to }, 'export started');
  }
  let end: RunEnding;
  try {
    if (!to) throw new Error('TE_EXPORT_DIR is not set for this worker: nowhere to export to');
    await fillDailyArchives(deps.warehouse.db);
    const summary = await exportWarehouse(deps.warehouse, logger, { to, tables: DAILY_ARCHIVE_NAMES });
    end = { status: 'succeeded', stats: summary };
  } catch (err) {
    end = { status: 'failed', stats: {}, error: `export failed: ${errorLine(err)}` };
  }
  try {
    await deps.driver.closeWith(runId, end);
    if (end.status === 'succeeded') logger.info({ tables: (end.stats as ExportSummary).tables }, 'export finished');
    else logger.error({ error: end.error }, 'export failed');
  } catch (err) {
    // Closed with the least record, or not at all: lost-runs.ts closes a run left open.
    logger.error({ err, status: end.status }, 'could not record the end of the export');
  }
  return { runId, queued: 0 };
}
