// `tesync worker`: registers the job schedulers and processes jobs until SIGTERM/SIGINT,
// then lets active jobs finish (or hands them back) and exits 0.
import { parseArgs } from 'node:util';
import { catalog, groups, walkRoots } from '../resources/index.ts';
import { queueBackendKind } from '../runners/bullmq/backend.ts';
import { startWorkerRuntime } from '../runners/bullmq/runtime.ts';
import { plannedSchedulers } from '../runners/bullmq/schedules.ts';
import { openWarehouse } from '../store/connection.ts';
import { UsageError, untilSignal, type CommandContext } from './context.ts';
import { configuredSources, settingsFrom } from './sync-session.ts';
import { configuredUpstreams, ensureBoundUpstream } from './upstream-check.ts';

const HELP = `Usage: tesync worker [--force]

Runs the scheduled walks (TE_SCHEDULE_*) and the jobs of every walk, sharing the queues
and the upstream rate budget with every other worker of the same queue backend and
TE_QUEUE_PREFIX: Redis when REDIS_URL is set, otherwise the warehouse's own Postgres
(DATABASE_URL, or the embedded server in TE_DATA_DIR, kept up while the worker runs).
Serves /healthz and /metrics on TE_METRICS_PORT. Stops on SIGTERM or SIGINT: active jobs
finish within TE_WORKER_SHUTDOWN_GRACE_MS or are handed back.
To start a walk now: tesync enqueue. See docs/operations.md.
  --force  run on a warehouse bound to another upstream: rebind it to this worker's
           (recorded in sync.upstream_binding_log; without it: exit 2, nothing written)`;

export async function runWorker({ config, logger, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({ args: argv, strict: true, options: { force: { type: 'boolean', default: false }, help: { type: 'boolean' } } });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (configuredSources(config).length === 0) throw new UsageError('no source is configured: set TE_APP_URL and/or TE_GATEWAY_URL (see the README)');

  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, databasePool: config.databasePool });
  try {
    await warehouse.migrate();
    // Before the runtime starts: it settles lost runs, a write.
    const upstreams = configuredUpstreams(config, configuredSources(config));
    await ensureBoundUpstream(warehouse, upstreams, { command: 'worker', force: values.force, logger });
    const stop = untilSignal();
    const plan = {
      catalog,
      walkRoots,
      groups: groups(),
      sources: configuredSources(config),
      settings: (full: boolean) => settingsFrom(config, full),
      // Another process may rebind the warehouse while this worker runs: each walk looks again.
      checkUpstream: async () => void (await ensureBoundUpstream(warehouse, upstreams, { command: 'worker', force: false, logger })),
    };
    const runtime = await startWorkerRuntime({ config, logger, warehouse, plan });
    logger.info(
      {
        metricsPort: runtime.metricsPort,
        concurrency: config.worker.concurrency,
        prefix: config.worker.queuePrefix,
        queues: queueBackendKind(config),
        warehouse: warehouse.location,
        schedules: Object.fromEntries(plannedSchedulers(config).map((s) => [s.id, s.pattern ?? 'off'])),
      },
      'worker ready',
    );
    const signal = await stop;
    logger.info({ signal, graceMs: config.worker.shutdownGraceMs }, 'shutting down: finishing active jobs');
    await runtime.close();
    logger.info('worker stopped');
    return 0;
  } finally {
    await warehouse.close();
  }
}
