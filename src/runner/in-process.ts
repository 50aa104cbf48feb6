// The runner behind `tesync sync`: a bounded-concurrency loop over the walk. Follow-up
// jobs are deduplicated by resource; one resource failing never stops the others.
//
// Jobs queue in one lane per upstream bucket, each lane with `concurrency` slots (as the
// worker has one queue per bucket): a job waiting for its bucket's budget holds a slot of
// that bucket only. With one shared queue, a bucket out of budget until its reset filled
// every slot with its waiting jobs and left the other buckets' budget unspent.
import { setTimeout as delay } from 'node:timers/promises';
import type { JobContext, JobDefinition, JobRequest, JobResult } from '../../jobs/types.ts';
import { isRouteName, ROUTES } from '../upstream/routes.ts';
import { writeFailure } from '../warehouse/resource-state.ts';
import { withReconnect } from '../warehouse/retry.ts';
import { judgeFailure } from './failure.ts';
import { emptyStats, type WalkStats } from './stats.ts';

export interface WalkOptions {
  catalog: ReadonlyMap<string, JobDefinition<any>>;
  roots: JobRequest[];
  context: JobContext;
  concurrency: number;
  /** Which follow-ups to run (`--token`, `--only`); roots always run. */
  filter?: (job: JobDefinition<any>, payload: unknown) => boolean;
  /** Extra attempts for a job whose failure may pass (database restart). */
  jobRetries?: number;
  retryDelayMs?: number;
  onProgress?: (stats: WalkStats) => void;
  signal?: AbortSignal;
  /** Filled in as the walk goes, for live progress; a fresh one when absent. */
  stats?: WalkStats;
}

interface Planned {
  job: JobDefinition<any>;
  payload: unknown;
  resource: string;
}

export async function runWalk(options: WalkOptions): Promise<WalkStats> {
  const { context, catalog } = options;
  const stats = options.stats ?? emptyStats();
  const seen = new Set<string>();
  const lanes = new Map<string, { queue: Planned[]; active: number }>();

  const plan = (req: JobRequest, isRoot: boolean) => {
    const job = catalog.get(req.name);
    if (!job) {
      context.logger.error({ job: req.name }, 'unknown job requested; skipped');
      return;
    }
    const parsed = job.payload.safeParse(req.payload);
    if (!parsed.success) {
      context.logger.error({ job: req.name, issue: parsed.error.issues[0]?.message }, 'job payload invalid; skipped');
      stats.failed++;
      return;
    }
    if (!isRoot && options.filter && !options.filter(job, parsed.data)) return;
    const resource = job.resource(parsed.data);
    const id = `${job.source}/${resource}`;
    if (seen.has(id)) return;
    seen.add(id);
    stats.planned++;
    const bucket = bucketOf(job);
    let lane = lanes.get(bucket);
    if (!lane) lanes.set(bucket, (lane = { queue: [], active: 0 }));
    lane.queue.push({ job, payload: parsed.data, resource });
  };

  const execute = async (p: Planned): Promise<void> => {
    const logger = context.logger.child({ job: p.job.name, resource: p.resource });
    const started = Date.now();
    const attempts = 1 + (options.jobRetries ?? 2);
    for (let attempt = 1; ; attempt++) {
      try {
        logger.debug('job started');
        const result: JobResult = await p.job.handle({ ...context, logger }, p.payload);
        stats.done++;
        stats.rows += result.rows;
        countStatus(stats, p.job, result.status);
        logger.info({ ms: Date.now() - started, status: result.status, rows: result.rows }, 'job done');
        for (const f of result.followUps ?? []) plan(f, false);
        return;
      } catch (err) {
        const verdict = judgeFailure(err);
        if (verdict.retryable && attempt < attempts && !options.signal?.aborted) {
          logger.warn({ attempt, err: verdict.message }, 'job failed; trying again');
          await delay((options.retryDelayMs ?? 1000) * attempt);
          continue;
        }
        countStatus(stats, p.job, verdict.status);
        if (verdict.answered) {
          stats.done++;
          logger.info({ ms: Date.now() - started, status: verdict.status, err: verdict.message }, 'job done: upstream says the resource does not exist');
        } else {
          stats.failed++;
          if (stats.failures.length < 50) stats.failures.push({ job: p.job.name, resource: p.resource, error: verdict.message });
          logger.warn({ ms: Date.now() - started, status: verdict.status, err: verdict.message }, 'job failed');
        }
        await withReconnect(() => writeFailure(context.warehouse.db, {
          source: p.job.source,
          resource: p.resource,
          kind: p.job.group,
          status: verdict.status,
          error: verdict.message.slice(0, 2000),
          runId: context.runId,
          at: context.now(),
        })).catch((e: unknown) => logger.error({ err: e }, 'could not record the failure'));
        return;
      }
    }
  };

  for (const r of options.roots) plan(r, true);
  const queued = () => [...lanes.values()].reduce((n, l) => n + l.queue.length, 0);
  await new Promise<void>((resolve) => {
    const pump = () => {
      for (const lane of lanes.values()) {
        while (lane.active < options.concurrency && lane.queue.length > 0 && !options.signal?.aborted) {
          const next = lane.queue.shift()!;
          lane.active++;
          void execute(next).finally(() => {
            lane.active--;
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
  stats.cancelled = queued();
  return stats;
}

/** The bucket a job's requests go to (the worker's queues use the same rule). */
function bucketOf(job: JobDefinition<any>): string {
  if (isRouteName(job.name)) return ROUTES[job.name].bucket;
  return job.source === 'app' ? 'app-public' : 'gateway';
}

function countStatus(stats: WalkStats, job: JobDefinition<any>, status: string): void {
  const group = (stats.byGroup[`${job.source}.${job.group}`] ??= {});
  group[status] = (group[status] ?? 0) + 1;
}
