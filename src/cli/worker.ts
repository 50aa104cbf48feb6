// `tesync worker`: registers the job schedulers and processes jobs until SIGTERM/SIGINT,
// then lets active jobs finish (or hands them back) and exits 0.
import { parseArgs } from 'node:util';
import { catalog, groups, walkRoots } from '../resources/index.ts';
import { queueBackendKind } from '../runners/bullmq/backend.ts';
import { startWorkerRuntime, type WorkerRuntime } from '../runners/bullmq/runtime.ts';
import { configuredSchedules } from '../runners/bullmq/schedules.ts';
import { openWarehouse } from '../store/connection.ts';
import { UsageError, untilSignal, type CommandContext } from './context.ts';
import { configuredSources, settingsFrom } from './sync-session.ts';
import { configuredUpstreams, ensureBoundUpstream, simulatorUpstreams } from './upstream-check.ts';
import { DEMO_TOKENS, startDemoSimulator, withDemoUpstreams } from './demo-simulator.ts';
import { createWorkerTerminal, type WorkerTerminal } from './worker-terminal.ts';
import { readRunRecord } from '../store/read/run-record.ts';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';
import type { UpstreamIdentity } from '../store/books/upstream-identity.ts';

const HELP = `Usage: tesync worker [--force] [--demo] [--json]

Runs the scheduled walks (TE_SCHEDULE_*) and the jobs of every walk, sharing
the queues and the upstream rate budget with every other worker of the same
queue backend and TE_QUEUE_PREFIX: Redis when REDIS_URL is set, otherwise the
warehouse's own Postgres (DATABASE_URL, or the embedded server in TE_DATA_DIR,
kept up while the worker runs). Serves /healthz and /metrics on
TE_METRICS_PORT. Stops on SIGTERM or SIGINT: active jobs finish within
TE_WORKER_SHUTDOWN_GRACE_MS or are handed back; a second signal hands them
back at once. To start a walk now: tesync enqueue. See docs/operations.md.
  --force  run on a warehouse bound to another upstream: rebind it to this
           worker's (recorded in sync.upstream_binding_log; without it: exit 2,
           nothing written)
  --demo   the bundled simulator as the upstream, as tesync demo runs it (its
           ${DEMO_TOKENS} tokens): keeps the demo's warehouse fresh on the schedules
           until Ctrl-C
  --json   pino JSON log lines on a terminal too (off a terminal they always
           are); on a terminal, without it: a line in words per event and a
           progress line`;

export async function runWorker(context: CommandContext): Promise<number> {
  const { argv } = context;
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      force: { type: 'boolean', default: false },
      demo: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  // A person at a terminal reads lines in words and a progress line (worker-terminal.ts); off
  // a terminal (or with --json) the JSON lines are as ever: tools and tests parse them.
  const terminal = process.stderr.isTTY && !values.json ? createWorkerTerminal(context.logger) : undefined;
  const logger = terminal?.logger ?? context.logger;
  const phase = (text: string) => terminal?.phase(text);
  try {
    if (values.demo) phase('starting the bundled simulator');
    const demo = values.demo ? await startDemoSimulator() : undefined;
    try {
      const config = demo ? withDemoUpstreams(context.config, { ...demo, url: demo.sim.url }) : context.config;
      // The simulator is one upstream whatever its port, as the demo bound it.
      const upstreams = demo ? simulatorUpstreams(['app', 'gateway']) : configuredUpstreams(config, configuredSources(config));
      if (demo) logger.info({ simulator: demo.sim.url }, 'the bundled simulator is the upstream (--demo)');
      return await work(config, logger, upstreams, values.force, phase, terminal);
    } finally {
      await demo?.sim.close();
    }
  } finally {
    terminal?.stop();
  }
}

async function work(config: Config, logger: Logger, upstreams: ReadonlyMap<string, UpstreamIdentity>, force: boolean, phase: (text: string) => void, terminal: WorkerTerminal | undefined): Promise<number> {
  if (configuredSources(config).length === 0) throw new UsageError('no source is configured: set TE_APP_URL and/or TE_GATEWAY_URL (see the README), or try --demo');

  phase(config.databaseUrl ? 'opening the warehouse' : 'starting the embedded warehouse');
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, sessionUrl: config.databaseSessionUrl, dataDir: config.dataDir, databasePool: config.databasePool });
  // A walk another worker finished ends in that worker's log only: the terminal looks it up.
  const unwatch = terminal?.watchRuns(async (runId) => (await readRunRecord(warehouse, runId))?.status);
  try {
    phase('updating the warehouse schema');
    await warehouse.migrate();
    // Before the runtime starts: it settles lost runs, a write.
    phase("checking the warehouse's upstream");
    await ensureBoundUpstream(warehouse, upstreams, { command: 'worker', force, logger });
    // A second signal ends the grace period: the active jobs go back to the queue at once.
    let runtime: WorkerRuntime | undefined;
    const stop = untilSignal((again) => {
      logger.warn({ signal: again }, `${again} again: handing the active jobs back to the queue now`);
      runtime?.handBack();
    });
    const plan = {
      catalog,
      walkRoots,
      groups: groups(),
      sources: configuredSources(config),
      settings: (full: boolean) => settingsFrom(config, full),
      // Another process may rebind the warehouse while this worker runs: each walk looks again.
      checkUpstream: async () => void (await ensureBoundUpstream(warehouse, upstreams, { command: 'worker', force: false, logger })),
    };
    phase('starting the queues and schedules');
    runtime = await startWorkerRuntime({ config, logger, warehouse, plan });
    logger.info(
      {
        metricsPort: runtime.metricsPort,
        concurrency: config.worker.concurrency,
        prefix: config.worker.queuePrefix,
        queues: queueBackendKind(config),
        warehouse: warehouse.location,
        schedules: Object.fromEntries(configuredSchedules(config).map((s) => [s.id, s.pattern ?? 'off'])),
      },
      'worker ready',
    );
    const signal = await stop;
    logger.info({ signal, graceMs: config.worker.shutdownGraceMs }, 'shutting down: finishing active jobs');
    await runtime.close();
    logger.info('worker stopped');
    return 0;
  } finally {
    unwatch?.();
    await warehouse.close();
  }
}
