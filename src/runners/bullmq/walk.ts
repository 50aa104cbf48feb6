// The orchestration queue's jobs: a walk (scheduled or enqueued) opens a run and queues its
// roots; a finish job closes the run once its last fetch job settled. The run itself is the
// run driver's (src/engine/run/run-driver.ts), as under `tesync sync`.
import { UnrecoverableError, type Job } from 'bullmq';
import { ConfigError } from '../../lib/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { errorMessage, isQueryError, recordable, RECORD_CHARS, reportedError } from '../../lib/recordable.ts';
import { runningRunsOfSchedule } from '../../store/books/runs.ts';
import type { RunnerDeps } from './deps.ts';
import { finishJobId, runIdFor } from './ids.ts';
import { finishJobData, walkJobData } from './job-data.ts';
import { enqueueRequests, type RunScope } from './plan.ts';
import { WALK_JOB_OPTIONS, WALK_QUEUE } from './queues.ts';
import { describeKeyRefusal } from '../../store/books/request-summary.ts';
import { EXPORT_SCHEDULE, isScheduleId, scheduleGroups } from './schedules.ts';
import { processExport } from './export-job.ts';

/**
 * Run keys stay this long after the run is recorded: a short grace for readers that looked
 * just before it was (`tesync enqueue --wait` reads the counts while sync.runs says
 * `running`). Late duplicates of the run's jobs do not need them: a fetch job not in its
 * run's `pending` set is skipped, keys gone or not (fetch.ts).
 */
export const FINISHED_RUN_KEYS_MS = 120_000;

export async function processWalk(deps: RunnerDeps, job: Job): Promise<{ runId: string; queued: number }> {
  return walk(deps, job).catch((err: unknown) => {
    throw keptFailure(err);
  });
}

async function walk(deps: RunnerDeps, job: Job): Promise<{ runId: string; queued: number }> {
  const data = walkJobData.parse(job.data);
  const runId = data.runId ?? runIdFor(`${deps.prefix}:${WALK_QUEUE}`, job.id!);
  // The export schedule walks nothing: its job exports the daily archives (export-job.ts).
  if (data.schedule === EXPORT_SCHEDULE) return processExport(deps, job, runId, data.trigger);
  const logger = deps.logger.child({ runId, schedule: data.schedule });
  let groups = data.groups ?? null;
  if (data.schedule !== undefined) {
    if (!isScheduleId(data.schedule)) throw new Error(`unknown schedule ${JSON.stringify(data.schedule)}`);
    groups = scheduleGroups(data.schedule, deps.plan.groups);
  }
  const sources = deps.plan.sources.filter((s) => !data.sources || data.sources.includes(s));

  // A walk job that ran before (it stalled, or failed after planning) continues its run.
  const existing = await deps.driver.status(runId);
  if (existing && existing !== 'running') return { runId, queued: 0 };
  if (!existing && data.schedule !== undefined && data.trigger === 'schedule') {
    // A schedule's walk that lasts longer than its period would pile runs (and their jobs in
    // Redis) up: the tick is skipped while the previous walk of the schedule still has work.
    // A walk an operator asked for (`tesync enqueue --schedule`) is not: it was asked for now,
    // and what the other walk still has queued is left to it (deduplicated).
    const previous = await openRunWithWork(deps, data.schedule, runId);
    if (previous) {
      logger.info({ previousRun: previous }, 'scheduled walk skipped: the previous walk of this schedule is still running');
      return { runId, queued: 0 };
    }
  }
  if (!existing) {
    await checkUpstream(deps, logger);
    // The prefix, backend and walk job tell a later worker whether the queues still hold the run's work (lost-runs.ts);
    // the settings, what a replay reads the archive with again (src/replay/).
    const options = { schedule: data.schedule ?? null, groups, tokens: data.tokens, full: data.full, job: job.id, queuePrefix: deps.prefix, queueBackend: deps.queueBackend, settings: deps.plan.settings(Boolean(data.full)) };
    await deps.driver.open({ id: runId, trigger: data.trigger, sources, options });
    logger.info({ trigger: data.trigger, sources, groups }, 'run started');
  }
  if (sources.length === 0) {
    await deps.driver.fail(runId, 'no source is configured');
    return { runId, queued: 0 };
  }
  const scope: RunScope = { runId, groups, tokens: data.tokens, full: data.full };
  const queued = await enqueueRequests(deps, scope, deps.plan.walkRoots(sources), { roots: true });
  if ((await deps.driver.ledger.pending(runId)) === 0) await queueFinish(deps, runId);
  return { runId, queued };
}

/**
 * A walk of a warehouse rebound to another upstream since this worker started writes nothing:
 * said at error level, and not retried (the job fails; the schedule's next tick looks again).
 */
async function checkUpstream(deps: RunnerDeps, logger: Logger): Promise<void> {
  try {
    await deps.plan.checkUpstream?.();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    logger.error({ reason: err.message }, 'walk refused: the warehouse mirrors another upstream than this worker\'s');
    throw new UnrecoverableError(err.message);
  }
}

/** A run of the schedule other than `runId` still `running` with jobs pending, if any. */
async function openRunWithWork(deps: RunnerDeps, schedule: string, runId: string): Promise<string | null> {
  const open = await runningRunsOfSchedule(deps.warehouse.db, schedule, runId);
  // A run whose jobs are all gone (Redis emptied, or its finish on the way) does not hold the schedule.
  for (const id of open) if ((await deps.driver.ledger.pending(id)) > 0) return id;
  return null;
}

export async function queueFinish(deps: Pick<RunnerDeps, 'walkQueue'>, runId: string): Promise<void> {
  // A fixed id: however many jobs see the run empty at once, one finish job is queued. It is
  // removed when done, so a later add is never swallowed by a finished job of the same id;
  // finishing a recorded run again changes nothing.
  await deps.walkQueue.add('finish', { runId }, { ...WALK_JOB_OPTIONS, removeOnComplete: true, jobId: finishJobId(runId) });
}

export async function processFinish(deps: RunnerDeps, job: Job): Promise<string> {
  const { runId } = finishJobData.parse(job.data);
  // The driver's close never leaves the run `running` when its record cannot be written (finishRun);
  // the retry of this job then finds it recorded.
  return finishRunIfSettled(deps, runId, deps.logger.child({ runId })).catch((err: unknown) => {
    throw keptFailure(err);
  });
}

/**
 * The error a walk or finish job fails with, as BullMQ keeps it (its failed reason and stack,
 * which `tesync enqueue --wait` prints): recordable (src/lib/recordable.ts), a failed query
 * said by its driver's error, never drizzle's message with the query's parameters. BullMQ's
 * own signal (UnrecoverableError) passes as it is.
 */
function keptFailure(err: unknown): unknown {
  if (!(err instanceof Error) || err instanceof UnrecoverableError) return err;
  const message = recordable(errorMessage(err), RECORD_CHARS);
  if (message === err.message && !isQueryError(err)) return err;
  const kept = new Error(message, { cause: err });
  const said = reportedError(err);
  kept.name = said instanceof Error ? said.name : err.name;
  return kept;
}

/** Records the run's outcome once nothing of it is pending; the statuses and stats of `tesync sync`. */
export async function finishRunIfSettled(deps: Pick<RunnerDeps, 'driver' | 'config' | 'events'>, runId: string, logger: Logger): Promise<string> {
  const closed = await deps.driver.closeIfSettled(runId, { requestsRetentionDays: deps.config.requestsRetentionDays, logger });
  if (typeof closed === 'string') return closed;
  await deps.driver.ledger.expire(runId, FINISHED_RUN_KEYS_MS);
  const { status, requests, stats, durationMs } = closed;
  for (const r of requests.keyRefusals ?? []) logger.warn({ variable: r.variable, refused: r.refused, answers: r.answers }, describeKeyRefusal(r));
  logger.info({ status, durationMs, done: stats.done, failed: stats.failed, rows: stats.rows, requests: requests.total, deduplicated: stats.deduplicated }, 'run finished');
  deps.events?.runFinished?.(runId, status);
  return status;
}
