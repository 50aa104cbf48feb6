// The runner behind `tesync sync`: a bounded-concurrency loop over the walk. Follow-up
// jobs are deduplicated by resource; one resource failing never stops the others. What a
// job does is the one lifecycle both runners share (src/engine/job/lifecycle.ts); how the run
// plans and counts its jobs, the one run driver (src/engine/run/run-driver.ts). This runner only
// decides when a job runs and how often it is tried.
//
// Jobs queue in one lane per upstream bucket, each lane with `concurrency` slots (as the
// worker has one queue per bucket): a job waiting for its bucket's budget holds a slot of
// that bucket only. With one shared queue, a bucket out of budget until its reset filled
// every slot with its waiting jobs and left the other buckets' budget unspent.
import { setTimeout as delay } from 'node:timers/promises';
import { runJob, type ResolvedJob } from '../engine/job/lifecycle.ts';
import { JOB_RETRY, retryDelayMs } from '../engine/job/retry.ts';
import type { JobDefinition, JobRequest, RunContext } from '../engine/kit/types.ts';
import type { WalkStats } from '../ports/run-ledger.ts';
import { MemoryRunLedger } from '../engine/run/memory-run-ledger.ts';
import { RunDriver } from '../engine/run/run-driver.ts';
import { settledJob } from '../engine/run/run-jobs.ts';
import { mayPlan } from './walk-scope.ts';

/** The work a walk still has, for an ETA: per bucket the jobs waiting and running; the planners among them. */
export interface PendingWork {
  byBucket: Record<string, { queued: number; active: number }>;
  /** Jobs queued or running that may plan more (catalogs, token and chart lists): while any is, the total still grows. */
  planners: number;
  /**
   * Per kind of job (by name): how many are still to settle, how many settled, their time and
   * the jobs they planned: what the pending ones take, and plan, is estimated from the settled.
   */
  kinds: Record<string, KindTally>;
  /** Jobs at once per bucket. */
  concurrency: number;
}

export interface KindTally {
  /** It may plan follow-ups (a catalog, a list). */
  planner: boolean;
  pending: number;
  settled: number;
  /** The settled ones' time, from start to end (retries and writes included). */
  ms: number;
  /** Follow-ups the settled ones planned. */
  planned: number;
}

export function emptyPendingWork(): PendingWork {
  return { byBucket: {}, planners: 0, kinds: {}, concurrency: 1 };
}

export interface WalkOptions {
  catalog: ReadonlyMap<string, JobDefinition<any>>;
  roots: JobRequest[];
  context: RunContext;
  concurrency: number;
  /** Which follow-ups to run (`--token`, `--only`); roots always run. */
  filter?: (job: JobDefinition<any>, payload: unknown) => boolean;
  /** Called as each job ends, with the run's live stats. */
  onProgress?: (stats: WalkStats) => void;
  signal?: AbortSignal;
  /** The run's driver, over `catalog` and a ledger in memory whose live stats are the progress. A fresh one when absent. */
  driver?: RunDriver<MemoryRunLedger>;
  /** Kept up to date as the walk goes, for live progress. */
  pending?: PendingWork;
}

export async function runWalk(options: WalkOptions): Promise<WalkStats> {
  const { context, catalog } = options;
  const runId = context.runId;
  const driver = options.driver ?? new RunDriver({ warehouse: context.warehouse, ledger: new MemoryRunLedger(), catalog, logger: context.logger });
  const stats = driver.ledger.live(runId);
  const lanes = new Map<string, { queue: ResolvedJob[]; active: number }>();
  const pending = options.pending ?? emptyPendingWork();
  pending.concurrency = options.concurrency;
  const count = (p: ResolvedJob, field: 'queued' | 'active', by: number) => {
    const b = (pending.byBucket[p.bucket] ??= { queued: 0, active: 0 });
    b[field] += by;
  };

  const enter = async (req: JobRequest, isRoot: boolean) => {
    const entered = await driver.enter(runId, req, { root: isRoot, ...(options.filter ? { inScope: options.filter } : {}), idOf: jobId });
    // `pending`: queued in this walk already.
    if (entered?.state !== 'new') return false;
    const p = entered.resolved;
    let lane = lanes.get(p.bucket);
    if (!lane) lanes.set(p.bucket, (lane = { queue: [], active: 0 }));
    lane.queue.push(p);
    count(p, 'queued', 1);
    if (mayPlan(p.job)) pending.planners++;
    tally(p).pending++;
    return true;
  };
  const tally = (p: ResolvedJob) => (pending.kinds[p.job.name] ??= { planner: mayPlan(p.job), pending: 0, settled: 0, ms: 0, planned: 0 });

  /** Enters the follow-ups; how many were new to the walk. */
  const planFollowUps = async (requests: readonly JobRequest[]) => {
    let planned = 0;
    for (const f of requests) if (await enter(f, false)) planned++;
    return planned;
  };

  /** Jobs a stop left unfinished: counted with the queued ones as not reached. */
  let stopped = 0;
  const execute = async (p: ResolvedJob): Promise<void> => {
    const logger = context.logger.child({ job: p.job.name, resource: p.resource });
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        logger.debug('job started');
        const last = attempt >= JOB_RETRY.attempts || options.signal?.aborted === true;
        // A walk aborted mid-job (an interrupt, a lost lock): the job's requests stop with it and
        // nothing of it is recorded; the next run does it.
        const r = await runJob(p, { ...context, logger }, { last, passThrough: () => options.signal?.aborted === true });
        const ms = Date.now() - started;
        // Its follow-ups, then its end (the driver's one order). A list that failed still plans
        // its children, from the list the warehouse holds.
        let planned = 0;
        await driver.settle(runId, jobId(p), settledJob(p, r), { requests: r.followUps, plan: async (requests) => void (planned += await planFollowUps(requests)) });
        const t = tally(p);
        t.settled++;
        t.ms += Date.now() - started;
        t.planned += planned;
        if (r.failure) logger.warn({ ms, status: r.status, error: r.failure.message, type: r.failure.type, code: r.failure.code, httpStatus: r.failure.httpStatus }, 'job failed');
        else logger.info({ ms, status: r.status, rows: r.rows }, 'job done');
        return;
      } catch (err) {
        if (options.signal?.aborted) {
          stopped++;
          logger.debug('walk stopped: job left for the next run');
          return;
        }
        // Only a failure worth another try comes here (src/engine/job/lifecycle.ts).
        logger.warn({ attempt, err }, 'job failed; trying again');
        const stop = await delay(retryDelayMs(attempt), undefined, options.signal ? { signal: options.signal } : {}).then(
          () => false,
          () => true,
        );
        if (stop) {
          stopped++;
          return;
        }
      }
    }
  };

  for (const r of options.roots) await enter(r, true);
  const queued = () => [...lanes.values()].reduce((n, l) => n + l.queue.length, 0);
  await new Promise<void>((resolve) => {
    const pump = () => {
      for (const lane of lanes.values()) {
        while (lane.active < options.concurrency && lane.queue.length > 0 && !options.signal?.aborted) {
          const next = lane.queue.shift()!;
          lane.active++;
          count(next, 'queued', -1);
          count(next, 'active', 1);
          void execute(next).finally(() => {
            lane.active--;
            count(next, 'active', -1);
            if (mayPlan(next.job)) pending.planners--;
            tally(next).pending--;
            options.onProgress?.(stats);
            pump();
          });
        }
      }
      const active = [...lanes.values()].some((l) => l.active > 0);
      if (!active && (queued() === 0 || options.signal?.aborted)) resolve();
    };
    pump();
  });
  stats.cancelled = queued() + stopped;
  return stats;
}

/** A job's id in its run: one resource of one source, planned once. */
function jobId(p: ResolvedJob): string {
  return `${p.job.source}/${p.resource}`;
}
