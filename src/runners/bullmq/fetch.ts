// A fetch job: one resource of one run, through the one job lifecycle `tesync sync` runs
// too (src/engine/job/lifecycle.ts), planned in its run when it was queued (plan.ts) and settled,
// its follow-ups queued first, by the one run driver (src/engine/run/run-driver.ts).
//
// What its errors become in BullMQ:
//   RateLimitedError (the bucket is closed longer than a job may hold its slot): the bucket's
//     queue is rate limited for that long and the job returns to waiting, no attempt used.
//   aborted by shutdown: handed back to waiting for another worker, no attempt used.
//   retryable (judgeFailure: e.g. the database restarted): thrown, BullMQ retries with backoff.
//   anything else, or the last attempt: recorded by the lifecycle, then failed for good
//     (UnrecoverableError) so BullMQ does not retry it.
import { UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import { runJob } from '../../engine/job/lifecycle.ts';
import type { JobRequest, JobResult } from '../../engine/kit/types.ts';
import { RateLimitedError } from '../../lib/errors.ts';
import { withSignal } from '../../upstream/with-signal.ts';
import { writeFailure } from '../../store/books/resource-state.ts';
import { judgeFailure, type Failure } from '../../lib/failure.ts';
import { settledJob, unplannable } from '../../engine/run/run-jobs.ts';
import type { FollowUps } from '../../engine/run/run-driver.ts';
import type { SettledJob } from '../../ports/run-ledger.ts';
import type { RunnerDeps } from './deps.ts';
import { fetchJobData, type FetchJobData } from './job-data.ts';
import { enqueueRequests } from './plan.ts';
import { JOB_RETRY } from '../../engine/job/retry.ts';
import { queueFinish } from './walk.ts';

/** The failure is recorded and counted: BullMQ's `failed` event must not do it again. */
export class RecordedFailure extends UnrecoverableError {
  override name = 'RecordedFailure';
}

/** Shortest queue pause: a RateLimitedError without a usable wait must not spin. */
const MIN_RATE_LIMIT_MS = 1000;

export async function processFetch(deps: RunnerDeps, job: Job, token: string | undefined, signal: AbortSignal | undefined): Promise<JobResult | undefined> {
  const parsed = fetchJobData.safeParse(job.data);
  if (!parsed.success) {
    // Not ours to count: without a run id there is no run. Fail it visibly.
    throw new UnrecoverableError(`job data unreadable: ${parsed.error.issues[0]?.message}`);
  }
  const data = parsed.data;
  // A job the run has settled already (its worker died after settling but before BullMQ
  // recorded the completion, a stalled job run again), or whose run is recorded and gone from
  // Redis: its work is done and counted. Fetching and writing again would only repeat it.
  if (!(await deps.driver.ledger.isPending(data.runId, job.id!))) return skipSettled(deps, job, data);
  const resolved = deps.driver.queued({ name: data.job, payload: data.payload });
  if ('error' in resolved) {
    await settle(deps, job, data, { kind: 'failed', group: data.job, status: 'failed', failure: unplannable(data.job, resolved.error) });
    throw new RecordedFailure(resolved.error);
  }
  const { job: def, resource } = resolved;
  const logger = deps.logger.child({ runId: data.runId, job: def.name, resource });
  const started = Date.now();
  await deps.clock.refresh();
  const context = {
    warehouse: deps.warehouse,
    upstream: signal ? withSignal(deps.upstream, signal) : deps.upstream,
    recorder: deps.recorder,
    logger,
    now: deps.clock.now,
    runId: data.runId,
    settings: deps.plan.settings(data.full),
  };
  const shutdown = () => signal?.aborted === true && deps.shuttingDown() && token !== undefined;
  let r;
  try {
    logger.debug({ attempt: job.attemptsMade + 1 }, 'job started');
    const last = job.attemptsMade + 1 >= (job.opts.attempts ?? JOB_RETRY.attempts);
    r = await runJob(resolved, context, { last, passThrough: (err) => err instanceof RateLimitedError || shutdown() });
  } catch (err) {
    if (shutdown()) {
      await job.moveToWait(token);
      deps.events?.handedBack(job.queueName);
      logger.info('shutting down: job handed back to the queue');
      throw new WaitingError();
    }
    if (err instanceof RateLimitedError) {
      const waitMs = Math.max(MIN_RATE_LIMIT_MS, Math.ceil(err.waitMs));
      const queue = [...deps.fetchQueues.values()].find((q) => q.name === job.queueName)!;
      await queue.rateLimit(waitMs);
      deps.events?.rateLimited(job.queueName, waitMs);
      logger.info({ waitMs, reason: err.reason }, 'bucket closed for longer than a job waits: queue paused, job back to waiting');
      throw Worker.RateLimitError();
    }
    logger.warn({ attempt: job.attemptsMade + 1, err }, 'job failed; BullMQ tries again');
    throw err;
  }
  const ms = Date.now() - started;
  if (r.failure) logger.warn({ ms, status: r.status, error: r.failure.message, type: r.failure.type, code: r.failure.code, httpStatus: r.failure.httpStatus }, 'job failed');
  // The run's request figures are read from sync.requests when it finishes.
  await deps.recorder.flush();
  // Its follow-ups queued, then its end (the driver's one order); a list that failed still
  // plans its children, from the list the warehouse holds. Not when another attempt settled
  // this job meanwhile: that one queued the follow-ups, and the run may be recorded, its keys
  // gone, so planning them again would open it anew.
  const plan = async (requests: readonly JobRequest[]) => {
    if (await deps.driver.ledger.isPending(data.runId, job.id!)) await enqueueRequests(deps, data, requests, { roots: false });
  };
  await settle(deps, job, data, settledJob(resolved, r), { requests: r.followUps, plan });
  if (r.failure) {
    deps.events?.jobSettled(def, r.status, 0, ms, r.failure);
    throw new RecordedFailure(r.failure.message);
  }
  deps.events?.jobSettled(def, r.status, r.rows, ms);
  logger.info({ ms, status: r.status, rows: r.rows }, 'job done');
  return { status: r.status, rows: r.rows };
}

/** BullMQ failed a job without our processor saying so (stalled too often): record it once. */
export async function onFetchFailed(deps: RunnerDeps, job: Job | undefined, err: Error): Promise<void> {
  if (!job || err instanceof RecordedFailure) return;
  const state = await job.getState();
  if (state !== 'failed' && state !== 'unknown') return; // it will be retried
  const data = fetchJobData.safeParse(job.data);
  if (!data.success) return;
  const resolved = deps.driver.queued({ name: data.data.job, payload: data.data.payload });
  if ('error' in resolved) return;
  const { job: def, resource } = resolved;
  // Stalled too often, or the like: BullMQ's own error, failed for good whatever it is.
  const verdict: Failure = { ...judgeFailure(err), status: 'failed', retryable: false, bucket: resolved.bucket };
  deps.logger.warn({ runId: data.data.runId, job: def.name, err }, 'job failed in BullMQ');
  await writeFailure(deps.warehouse.db, { source: def.source, resource, kind: def.group, runId: data.data.runId, at: deps.clock.now(), failure: verdict }).catch((e: unknown) =>
    deps.logger.error({ err: e }, 'could not record the failure'),
  );
  await deps.recorder.flush();
  await settle(deps, job, data.data, settledJob(resolved, { status: verdict.status, rows: 0, failure: verdict }));
}

/** A late duplicate: completes without a request or a write. */
async function skipSettled(deps: RunnerDeps, job: Job, data: FetchJobData): Promise<JobResult> {
  deps.logger.info({ runId: data.runId, job: data.job, jobId: job.id }, 'job already settled in its run; skipped');
  // As in settle: the attempt that settled the run's last job may have died before queueing
  // the finish. A run recorded already makes the finish a no-op.
  if ((await deps.driver.ledger.pending(data.runId)) === 0) await queueFinish(deps, data.runId);
  return { status: 'already_settled', rows: 0 };
}

async function settle(deps: RunnerDeps, job: Job, data: FetchJobData, outcome: SettledJob, next?: FollowUps): Promise<void> {
  const { pending } = await deps.driver.settle(data.runId, job.id!, outcome, next);
  // Also when this call did not count the job (it ran before): the earlier attempt may
  // have died between counting and queueing the finish.
  if (pending === 0) await queueFinish(deps, data.runId);
}
