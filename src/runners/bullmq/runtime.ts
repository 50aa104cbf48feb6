// One worker process: queues, schedulers, the shared rate budget, the processors, metrics, on
// the queue backend the configuration names (backend.ts).
// `tesync worker` starts it and closes it on SIGTERM/SIGINT; tests start several.
import { hostname } from 'node:os';
import { sql } from 'drizzle-orm';
import type { Config } from '../../lib/config.ts';
import type { Logger } from '../../lib/logger.ts';
import { countingBudget, countingRecorder } from '../metrics/instrument.ts';
import { createMetrics, jobLabels, type WorkerMetrics } from '../metrics/metrics.ts';
import { startMetricsServer } from '../metrics/server.ts';
import { readBudgetNow } from '../metrics/page-budget.ts';
import { readPageData, PAGE_REFRESH_SECONDS } from '../metrics/page-data.ts';
import { createStatusPage } from '../metrics/page-handler.ts';
import { readQueues } from '../metrics/page-queues.ts';
import { pageThresholds } from '../metrics/page-thresholds.ts';
import { readFailureBody } from '../../store/read/failure-bodies.ts';
import { readCoverage } from '../../store/read/coverage.ts';
import { createUpstream } from '../../upstream/client.ts';
import { WarehouseRecorder } from '../../store/books/request-log.ts';
import { WarehouseClock } from '../../store/warehouse-clock.ts';
import { LEASE_MARGIN_MS } from '../../upstream/budget/redis-budget.ts';
import type { Bucket } from '../../upstream/routes.ts';
import type { Warehouse } from '../../store/connection.ts';
import { RunDriver } from '../../engine/run/run-driver.ts';
import type { RunnerDeps, RunnerEvents, WalkPlan } from './deps.ts';
import { onFetchFailed, processFetch } from './fetch.ts';
import { FETCH_QUEUES, WALK_QUEUE } from './queues.ts';
import { workerName, type AnyQueue, type AnyWorker, type WorkerSettings } from './backend.ts';
import { migrateQueueBackend, openQueueBackend } from './open-backend.ts';
import { registerSchedulers } from './scheduler.ts';
import { configuredSchedules } from './schedules.ts';
import { processFinish, processWalk } from './walk.ts';
import { settleLostRuns } from './lost-runs.ts';
import { Consumer } from './consumer-watch.ts';
import { startNotifier, type Notifier } from '../notify/notifier.ts';
import { endpointsOf } from '../notify/deliver.ts';

/** Any job count within a second passes: the limiter is there so that queue.rateLimit(ms) takes effect. */
const MANUAL_LIMITER = { max: 1_000_000, duration: 1000 };
const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed', 'waiting-children'] as const;

export interface WorkerRuntimeOptions {
  config: Config;
  logger: Logger;
  warehouse: Warehouse;
  /** The job catalog and settings, from the composition root. */
  plan: WalkPlan;
}

export interface WorkerRuntime {
  metricsPort: number;
  /** Stops taking jobs; active ones finish within the grace period or are handed back. */
  close(): Promise<void>;
  /** Ends the grace period now: active jobs are aborted and handed back to the queue (a second signal). */
  handBack(): void;
}

/** How often a worker looks again for runs nothing would finish (lost-runs.ts). */
const LOST_RUN_SWEEP_MS = 30_000;

export async function startWorkerRuntime(options: WorkerRuntimeOptions): Promise<WorkerRuntime> {
  const { config, logger, warehouse } = options;
  const w = config.worker;
  const prefix = w.queuePrefix;
  await migrateQueueBackend({ config, warehouse });
  const backend = await openQueueBackend({ config, warehouse, name: 'tesync', logger });
  const closers: (() => Promise<unknown>)[] = [() => backend.close()];
  try {
    const walkQueue = backend.queue(WALK_QUEUE);
    const fetchQueues = new Map<Bucket, AnyQueue>(FETCH_QUEUES.map(({ bucket, name }) => [bucket, backend.queue(name)]));
    const queues = [walkQueue, ...fetchQueues.values()];
    closers.unshift(() => Promise.all(queues.map((q) => q.close())));

    const budget = backend.budget(config.requestTimeoutMs + LEASE_MARGIN_MS);
    const metrics = createMetrics({
      queueCounts: () => Promise.all(queues.map(async (q) => ({ queue: q.name, counts: await q.getJobCounts(...JOB_STATES) }))),
      lastSuccess: async () =>
        (
          await warehouse.query<{ source: string; kind: string; s: string | number }>(
            sql`select source, kind, extract(epoch from max(last_success_at))::float8 as s from sync.resource_state where last_success_at is not null group by 1, 2`,
          )
        ).map((r) => ({ source: r.source, group: r.kind, seconds: Number(r.s) })),
      budgets: () => budget.snapshot().map((b) => ({ bucket: b.bucket, remaining: b.remaining })),
      coverage: () => readCoverage(warehouse, 0),
    });
    // One reading of the warehouse's clock for the process: its jobs' stamps and its request log.
    const clock = new WarehouseClock(warehouse.db);
    const recorder = countingRecorder(new WarehouseRecorder(warehouse, logger, { clock }), metrics);
    closers.unshift(() => recorder.close());
    // A job holds its worker slot only this long waiting for budget; past that the bucket's
    // queue is paused and the job handed back (see fetch.ts).
    const upstream = createUpstream({ config: { ...config, maxRateWaitMs: w.rateWaitMs }, budget: countingBudget(budget, metrics), recorder, logger, secrets: config.secrets });

    let shuttingDown = false;
    let notifier: Notifier | undefined;
    const deps: RunnerDeps = {
      plan: options.plan,
      catalog: options.plan.catalog,
      config,
      warehouse,
      clock,
      upstream,
      recorder,
      walkQueue,
      fetchQueues,
      driver: new RunDriver({ warehouse, ledger: backend.ledger, catalog: options.plan.catalog, logger }),
      logger,
      prefix,
      queueBackend: backend.kind,
      events: { ...metricEvents(metrics), runFinished: () => notifier?.kick() },
      shuttingDown: () => shuttingDown,
    };

    // Runs whose work the queues no longer hold would stay `running` for ever (lost-runs.ts).
    const settleLost = () =>
      settleLostRuns(deps).then(
        ({ finishing, lost }) => (finishing + lost > 0 ? logger.info({ finishing, lost }, 'runs left open without work in the queues: finishing or closed') : undefined),
        (err: unknown) => logger.error({ err }, 'could not look for runs left open without work in the queues'),
      );
    await registerSchedulers(walkQueue, configuredSchedules(config), logger);
    // A Redis that restarted without persistence comes back empty: schedulers are registered
    // again on every reconnect (idempotent), so schedules survive it.
    backend.onReconnect(() => {
      if (shuttingDown) return;
      registerSchedulers(walkQueue, configuredSchedules(config), logger).then(
        () => logger.info('queue backend reconnected: schedulers registered again'),
        (err: unknown) => logger.error({ err }, 'could not register schedulers after a reconnect'),
      );
      void settleLost();
    });

    // The name lands on every job it takes (processedBy): which host and process ran what.
    const base: WorkerSettings = { name: workerName(prefix, hostname(), process.pid), lockDuration: w.lockMs, stalledInterval: w.stalledIntervalMs, maxStalledCount: 1 };
    const attach = (worker: AnyWorker): AnyWorker => {
      worker.on('error', (err) => logger.error({ err, queue: worker.name }, 'queue worker error'));
      worker.on('stalled', (jobId) => logger.warn({ queue: worker.name, jobId }, 'stalled job (its worker died or hung) moved back to waiting'));
      if (worker.name !== WALK_QUEUE) {
        worker.on('failed', (job, err) => void onFetchFailed(deps, job, err).catch((e: unknown) => logger.error({ err: e }, 'could not record a failed job')));
      }
      return worker;
    };
    // Each queue's consumer, replaced when found stuck (consumer-watch.ts).
    const consumers = [
      new Consumer(walkQueue, async (job) => (job.name === 'finish' ? processFinish(deps, job) : processWalk(deps, job)), (p) => attach(backend.worker(WALK_QUEUE, p, { ...base, concurrency: 2 }))),
      ...FETCH_QUEUES.map(
        ({ bucket, name }) =>
          new Consumer(fetchQueues.get(bucket)!, (job, token, signal) => processFetch(deps, job, token, signal), (p) => attach(backend.worker(name, p, { ...base, concurrency: w.concurrency, limiter: MANUAL_LIMITER }))),
      ),
    ];
    const workers = () => consumers.map((c) => c.worker);
    const checkConsumers = async () => {
      for (const c of consumers) {
        if (shuttingDown) return;
        const old = await c.check().catch((err: unknown) => void logger.error({ err, queue: c.queue.name }, 'could not look at a queue consumer'));
        if (old) logger.warn({ queue: old.name }, 'a queue consumer took no job for a sweep while one was ready to take: replaced by a new one');
      }
    };
    // Aborted jobs see shuttingDown and go back to waiting, no attempt used (fetch.ts).
    const handBack = () => {
      shuttingDown = true;
      for (const worker of workers()) worker.cancelAllJobs('shutdown');
    };
    closers.unshift(async () => {
      shuttingDown = true;
      const grace = setTimeout(() => {
        logger.warn({ graceMs: w.shutdownGraceMs }, 'grace period over: aborting active jobs and handing them back');
        handBack();
      }, w.shutdownGraceMs);
      try {
        const open = (await Promise.all(consumers.map(async (c) => ((await c.close()) ? [] : [c.queue.name])))).flat();
        if (open.length > 0) logger.warn({ queues: open }, 'queue consumers still closing after their jobs ended: their connections dropped');
      } finally {
        clearTimeout(grace);
      }
    });

    const server = await startMetricsServer({
      port: w.metricsPort,
      registry: metrics.registry,
      // The check of the queues is named for their backend: `redis`, or `queues` (in the warehouse's Postgres).
      checks: { [backend.kind === 'redis' ? 'redis' : 'queues']: () => backend.ping(), postgres: async () => void (await warehouse.query(sql`select 1`)) },
      // The status page at `/`: the warehouse, the shared budget and the queues, read when asked.
      pageFor: config.worker.statusPage === 'all' ? 'all' : 'local',
      hosts: config.worker.statusHosts,
      page: config.worker.statusPage === 'off' ? undefined : createStatusPage({
        read: () =>
          readPageData({
            warehouse,
            servedBy: `tesync worker ${base.name}`,
            refreshSeconds: PAGE_REFRESH_SECONDS,
            thresholds: (nowMs) => pageThresholds(config, nowMs),
            budget: () => readBudgetNow(budget),
            queues: () => readQueues(backend, queues, walkQueue),
            notifyEndpoints: endpointsOf(config.notify.urls).map((e) => e.label),
          }),
        body: (id) => readFailureBody(warehouse, id),
        secrets: config.secrets,
        logger,
      }),
      logger,
    });
    closers.push(() => server.close());
    await Promise.all(workers().map((worker) => worker.waitUntilReady()));
    await settleLost();
    // And on a timer: a failover's new primary may lack the finish a worker queued on the old one
    // (written there, not yet passed on), and its slot table may be seen before that write's turn;
    // the same failover may leave a consumer blocked for good (consumer-watch.ts).
    let sweeping = false;
    const sweep = setInterval(() => {
      if (shuttingDown || sweeping) return;
      sweeping = true;
      void settleLost()
        .then(checkConsumers)
        .finally(() => (sweeping = false));
    }, LOST_RUN_SWEEP_MS);
    sweep.unref();
    closers.unshift(async () => clearInterval(sweep));
    // Its heartbeat, what only a read can see, and the outbox's delivery, on a tick of its own.
    if (config.notify.urls.length > 0 && !config.notify.secret) logger.warn('TE_NOTIFY_SECRET is not set: notifications go out unsigned, and receivers cannot tell them from anyone\'s');
    notifier = startNotifier({ warehouse, config, logger, worker: { name: workerName(prefix, hostname(), process.pid), figures: { host: hostname(), pid: process.pid, queuePrefix: prefix } } });
    closers.push(() => notifier!.close());

    let closing: Promise<void> | undefined;
    return {
      metricsPort: server.port,
      close: () => (closing ??= runAll(closers, logger)),
      handBack,
    };
  } catch (err) {
    await runAll(closers, logger);
    throw err;
  }
}

async function runAll(closers: (() => Promise<unknown>)[], logger: Logger): Promise<void> {
  for (const close of closers) {
    try {
      await close();
    } catch (err) {
      logger.warn({ err }, 'error while shutting down');
    }
  }
}

function metricEvents(m: WorkerMetrics): RunnerEvents {
  return {
    jobSettled(job, status, rows, ms, failure) {
      m.jobs.inc(jobLabels(job, status, failure));
      m.jobSeconds.observe({ source: job.source, group: job.group }, ms / 1000);
      if (rows > 0) m.rows.inc({ source: job.source, group: job.group }, rows);
    },
    rateLimited: (queue) => m.queuePauses.inc({ queue }),
    handedBack: (queue) => m.handedBack.inc({ queue }),
  };
}
