// A fetch job: one resource of one run, through the same handler `tesync sync` runs.
//
// What its errors become in BullMQ:
//   RateLimitedError (the bucket is closed longer than a job may hold its slot): the bucket's
//     queue is rate limited for that long and the job returns to waiting, no attempt used.
//   aborted by shutdown: handed back to waiting for another worker, no attempt used.
//   retryable (judgeFailure: e.g. the database restarted): thrown, BullMQ retries with backoff.
//   anything else, or the last attempt: recorded like the in-process runner records it, then
//     failed for good (UnrecoverableError) so BullMQ does not retry it.
import { UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type { JobDefinition, JobResult } from '../../../jobs/types.ts';
import { RateLimitedError } from '../../errors.ts';
import type { Upstream } from '../../upstream/client.ts';
import { writeFailure } from '../../warehouse/resource-state.ts';
import { judgeFailure, type FailureVerdict } from '../failure.ts';
import type { RunnerDeps } from './deps.ts';
import { fetchJobData, type FetchJobData } from './job-data.ts';
import { enqueueRequests } from './plan.ts';
import { FETCH_ATTEMPTS } from './queues.ts';
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
  const def = deps.catalog.get(data.job);
  const payload = def?.payload.safeParse(data.payload);
  if (!def || !payload?.success) {
    const error = def ? `payload invalid: ${payload?.error?.issues[0]?.message}` : `unknown job ${data.job}`;
    await settle(deps, job, data, { kind: 'failed', group: data.job, status: 'failed', failure: { job: data.job, resource: '?', error } });
    throw new RecordedFailure(error);
  }
  const resource = def.resource(payload.data);
  const logger = deps.logger.child({ runId: data.runId, job: def.name, resource });
  const started = Date.now();
  const context = {
    warehouse: deps.warehouse,
    upstream: signal ? withSignal(deps.upstream, signal) : deps.upstream,
    logger,
    now: () => new Date(),
    runId: data.runId,
    settings: deps.plan.settings(data.full),
  };
  let result: JobResult;
  try {
    logger.debug({ attempt: job.attemptsMade + 1 }, 'job started');
    result = await def.handle(context, payload.data);
  } catch (err) {
    if (signal?.aborted && deps.shuttingDown() && token) {
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
    const verdict = judgeFailure(err);
    if (verdict.retryable && job.attemptsMade + 1 < (job.opts.attempts ?? FETCH_ATTEMPTS)) {
      logger.warn({ attempt: job.attemptsMade + 1, err: verdict.message }, 'job failed; BullMQ tries again');
      throw err;
    }
    if (verdict.answered) {
      // Upstream's answer about the resource: its state says so, the job is done.
      await writeVerdict(deps, data.runId, def, resource, verdict);
      await deps.recorder.flush();
      await settle(deps, job, data, { kind: 'done', rows: 0, group: `${def.source}.${def.group}`, status: verdict.status });
      deps.events?.jobSettled(def, verdict.status, 0, Date.now() - started);
      logger.info({ ms: Date.now() - started, status: verdict.status, err: verdict.message }, 'job done: upstream says the resource does not exist');
      return { status: verdict.status, rows: 0 };
    }
    logger.warn({ ms: Date.now() - started, status: verdict.status, err: verdict.message }, 'job failed');
    await recordFailure(deps, job, data, def, resource, verdict);
    deps.events?.jobSettled(def, verdict.status, 0, Date.now() - started);
    throw new RecordedFailure(verdict.message);
  }
  // Follow-ups first: the run must not look finished between this job and its children.
  await enqueueRequests(deps, data, result.followUps ?? [], { roots: false });
  // The run's request figures are read from sync.requests when it finishes.
  await deps.recorder.flush();
  await settle(deps, job, data, { kind: 'done', rows: result.rows, group: `${def.source}.${def.group}`, status: result.status });
  deps.events?.jobSettled(def, result.status, result.rows, Date.now() - started);
  logger.info({ ms: Date.now() - started, status: result.status, rows: result.rows }, 'job done');
  return { status: result.status, rows: result.rows };
}

/** BullMQ failed a job without our processor saying so (stalled too often): record it once. */
export async function onFetchFailed(deps: RunnerDeps, job: Job | undefined, err: Error): Promise<void> {
  if (!job || err instanceof RecordedFailure) return;
  const state = await job.getState();
  if (state !== 'failed' && state !== 'unknown') return; // it will be retried
  const data = fetchJobData.safeParse(job.data);
  if (!data.success) return;
  const def = deps.catalog.get(data.data.job);
  const payload = def?.payload.safeParse(data.data.payload);
  if (!def || !payload?.success) return;
  const verdict = { status: 'failed', retryable: false, message: `${err.name}: ${err.message}` } satisfies FailureVerdict;
  deps.logger.warn({ runId: data.data.runId, job: def.name, err: verdict.message }, 'job failed in BullMQ');
  await recordFailure(deps, job, data.data, def, def.resource(payload.data), verdict);
}

async function recordFailure(deps: RunnerDeps, job: Job, data: FetchJobData, def: JobDefinition<any>, resource: string, verdict: FailureVerdict): Promise<void> {
  await writeVerdict(deps, data.runId, def, resource, verdict);
  await deps.recorder.flush();
  await settle(deps, job, data, { kind: 'failed', group: `${def.source}.${def.group}`, status: verdict.status, failure: { job: def.name, resource, error: verdict.message } });
}

function writeVerdict(deps: RunnerDeps, runId: string, def: JobDefinition<any>, resource: string, verdict: FailureVerdict): Promise<void> {
  return writeFailure(deps.warehouse.db, {
    source: def.source,
    resource,
    kind: def.group,
    status: verdict.status,
    error: verdict.message.slice(0, 2000),
    runId,
    at: new Date(),
  }).catch((e: unknown) => deps.logger.error({ err: e }, 'could not record the failure'));
}

async function settle(deps: RunnerDeps, job: Job, data: FetchJobData, outcome: Parameters<RunnerDeps['tracker']['settle']>[2]): Promise<void> {
  const { pending } = await deps.tracker.settle(data.runId, job.id!, outcome);
  // Also when this call did not count the job (it ran before): the earlier attempt may
  // have died between counting and queueing the finish.
  if (pending === 0) await queueFinish(deps, data.runId);
}

/** Every request of the job is aborted with the job (shutdown, lost lock). */
function withSignal(upstream: Upstream, signal: AbortSignal): Upstream {
  return { get: (req) => upstream.get({ ...req, signal: req.signal ? AbortSignal.any([req.signal, signal]) : signal }) };
}
