// `tesync enqueue`: queues a walk now for the running workers, optionally waiting for it.
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import type { Config } from '../lib/config.ts';
import { groups } from '../resources/index.ts';
import { enqueueWalk } from '../runners/bullmq/enqueue.ts';
import { queueBackendKind, type QueueBackend, type QueueBackendKind } from '../runners/bullmq/backend.ts';
import { migrateQueueBackend, openQueueBackend } from '../runners/bullmq/open-backend.ts';
import { pickedUp, watchRun, type RunView } from '../runners/bullmq/run-watch.ts';
import { isScheduleId, SCHEDULES } from '../runners/bullmq/schedules.ts';
import { emptyStats, type WalkStats } from '../engine/run-stats.ts';
import { openWarehouse, type Warehouse } from '../store/connection.ts';
import type { RunStatus } from '../store/runs.ts';
import { UsageError, type CommandContext } from './context.ts';
import { formatDuration } from './eta.ts';
import { createProgressDisplay } from './progress.ts';
import { formatSummary } from './sync.ts';
import type { RequestSummary } from '../store/request-summary.ts';
import { configuredUpstreams, ensureBoundUpstream } from './upstream-check.ts';
import { onlyArg, sourcesArg, WALK_OPTIONS } from './walk-args.ts';
import { configuredSources } from './sync-session.ts';

const HELP = `Usage: tesync enqueue [--schedule ID | --only GROUP,...] [--source S] [--token SLUG]... [--full] [--wait [--timeout SECONDS]] [--json] [--force]

Queues a walk now; running workers (tesync worker) do it, sharing the rate budget.
  --schedule ID  the walk a schedule makes (${SCHEDULES.map((s) => s.id).join(', ')})
  --only G,...   only these resource groups (${groups().join(', ')})
  --source S     only this source (app or gateway)
  --token SLUG   only this token's resources (repeatable)
  --full         ignore change markers: fetch everything again
  --wait         wait for the run to finish, showing its progress, print its summary;
                 exit 1 if it failed
  --timeout S    with --wait: give up after S seconds (default 3600; exit 1)
  --json         print JSON instead of text
  --force        with DATABASE_URL bound to another upstream: rebind it to this one
                 (recorded in sync.upstream_binding_log; without it: exit 2, nothing queued)`;

const POLL_MS = 500;
/** A walk no worker has taken after this long is said to be waiting for one. */
export const NO_WORKER_MS = 5_000;
/** Off a terminal, a progress line at most this often. */
const LOG_EVERY_MS = 10_000;

/** The settings workers must share with this command to take its walks, per backend. */
const SAME_SETTINGS: Record<QueueBackendKind, string> = {
  redis: 'REDIS_URL and TE_QUEUE_PREFIX',
  postgres: 'DATABASE_URL (or TE_DATA_DIR) and TE_QUEUE_PREFIX, without REDIS_URL',
};

/** Pure: the warning for a run no worker has started: where the workers should be. */
export function noWorkerLine(afterMs: number, workers: number | undefined, prefix: string, backend: Pick<QueueBackend, 'kind' | 'where'>): string {
  const waited = `no worker has started this run after ${Math.round(afterMs / 1000)} s`;
  if (workers !== undefined && workers > 0) {
    return `${waited}: ${workers} worker${workers === 1 ? ' listens' : 's listen'} under TE_QUEUE_PREFIX=${prefix}, busy with other walks; it starts when one is free`;
  }
  const none = workers === 0 ? `none listens on ${backend.where} under TE_QUEUE_PREFIX=${prefix}; ` : '';
  return `${waited}: ${none}is \`tesync worker\` running with the same ${SAME_SETTINGS[backend.kind]}${workers === 0 ? '' : ` (${prefix})`}?`;
}

/** Pure: the progress of a queued run, one line. */
export function runLine(view: Pick<RunView, 'stats'> | undefined, started: boolean, elapsedMs: number): string {
  const took = formatDuration(Math.floor(elapsedMs / 1000) * 1000);
  if (!started) return `queued, waiting for a worker… ${took}`;
  if (!view) return `running… ${took}`;
  const s = view.stats;
  const parts = [`${s.done + s.failed}/${s.planned} done`];
  if (s.failed > 0) parts.push(`${s.failed} failed`);
  if (s.deduplicated > 0) parts.push(`${s.deduplicated} left to another run`);
  parts.push(took);
  return `running: ${parts.join(' | ')}`;
}

export async function runEnqueue({ config, logger, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: { ...WALK_OPTIONS, schedule: { type: 'string' }, timeout: { type: 'string' } },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  // No source configured here (a worker run with --demo, or configured elsewhere): the walk is
  // of every source the workers have.
  const sources = values.source === undefined && configuredSources(config).length === 0 ? undefined : sourcesArg(config, values.source);
  if (values.schedule !== undefined && !isScheduleId(values.schedule)) throw new UsageError(`--schedule must be one of ${SCHEDULES.map((s) => s.id).join(', ')}`);
  if (values.schedule !== undefined && values.only) throw new UsageError('--schedule and --only do not go together');
  const only = onlyArg(values.only);
  const timeoutS = values.timeout === undefined ? 3600 : Number(values.timeout);
  if (!Number.isFinite(timeoutS) || timeoutS <= 0) throw new UsageError('--timeout must be a positive number of seconds');
  const onPostgres = queueBackendKind(config) === 'postgres';
  if (values.wait && !config.databaseUrl && !onPostgres) throw new UsageError('--wait reads the run from the warehouse: set DATABASE_URL');

  // The walk's run is written by the workers, who check their own upstream; checking the one
  // configured here too refuses a walk meant for another warehouse before it is queued. On the
  // Postgres backend the warehouse (embedded or not) is where the queues are.
  const warehouse = config.databaseUrl || onPostgres ? await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, maxConnections: 2 }) : undefined;
  let backend: QueueBackend | undefined;
  try {
    if (warehouse) {
      await warehouse.migrate();
      await migrateQueueBackend({ config, warehouse });
      await ensureBoundUpstream(warehouse, configuredUpstreams(config, sources ?? []), { command: 'enqueue', force: values.force, logger });
    }
    backend = await openQueueBackend({ config, warehouse, name: 'tesync-enqueue', logger });
    const { runId, jobId } = await enqueueWalk(backend, {
      ...(values.schedule !== undefined ? { schedule: values.schedule } : { groups: only.length > 0 ? only : null }),
      tokens: values.token ?? [],
      ...(sources ? { sources } : {}),
      full: values.full,
    });
    if (!values.wait || !warehouse) {
      process.stdout.write(values.json ? `${JSON.stringify({ runId, jobId })}\n` : `Queued walk ${jobId} (run ${runId}); workers will pick it up.\n`);
      return 0;
    }
    return await waitForRun(config, warehouse, backend, runId, jobId, { json: values.json, timeoutS });
  } finally {
    await backend?.close();
    await warehouse?.close();
  }
}

/** `--wait`: the run's progress until it ends, then its summary. */
async function waitForRun(config: Config, warehouse: Warehouse, backend: QueueBackend, runId: string, jobId: string, options: { json: boolean; timeoutS: number }): Promise<number> {
  const { json, timeoutS } = options;
  const watch = watchRun(backend, runId, jobId);
  // On a terminal the run's progress is one line, redrawn; elsewhere a line now and then
  // (never with --json: its stdout is the summary alone).
  const progress = process.stderr.isTTY && !json ? createProgressDisplay() : undefined;
  const say = (line: string) => (progress ? progress.print(line, process.stderr) : process.stderr.write(line));
  try {
    const started = Date.now();
    const deadline = started + timeoutS * 1000;
    let warned = false;
    let logged = { at: started, line: '' };
    for (;;) {
      const [run] = await warehouse.query<{ status: RunStatus; stats: (WalkStats & { requests: RequestSummary }) | null; started_at: string; finished_at: string | null }>(
        sql`select status, stats, started_at::text, finished_at::text from sync.runs where id = ${runId}`,
      );
      const view = run?.status === 'running' || !run ? await watch.read().catch(() => undefined) : undefined;
      const picked = run !== undefined || (view !== undefined && pickedUp(view, false));
      if (!picked && !warned && Date.now() - started >= NO_WORKER_MS) {
        warned = true;
        say(`tesync: ${noWorkerLine(Date.now() - started, view?.workers, config.worker.queuePrefix, backend)}\n`);
      }
      if (picked && warned) {
        warned = false;
        say(`tesync: a worker started the run after ${Math.round((Date.now() - started) / 1000)} s\n`);
      }
      if (!run || run.status === 'running') {
        const line = runLine(view, picked, Date.now() - started);
        if (progress) progress.show(line);
        else if (!json && Date.now() - logged.at >= LOG_EVERY_MS && line !== logged.line) {
          process.stderr.write(`tesync: run ${runId}: ${line}\n`);
          logged = { at: Date.now(), line };
        }
      }
      // Failed for good before its run began (a worker bound elsewhere refused it): nothing to wait for.
      if (!run && view?.walk === 'failed') {
        progress?.stop();
        process.stderr.write(`tesync: the walk of run ${runId} failed before it started: ${view.failedReason}\n`);
        return 1;
      }
      if (run && run.status !== 'running') {
        progress?.stop();
        const durationMs = new Date(run.finished_at ?? Date.now()).getTime() - new Date(run.started_at).getTime();
        // A run that failed before any job (no source) has no stats.
        const stats = run.stats?.requests ? run.stats : { ...emptyStats(), requests: { total: 0, byStatus: {}, rateLimited: 0, failedAttempts: 0 } };
        const outcome = { runId, status: run.status, stats, requests: stats.requests, durationMs };
        process.stdout.write(json ? `${JSON.stringify(outcome)}\n` : formatSummary(outcome));
        return run.status === 'failed' ? 1 : 0;
      }
      if (Date.now() > deadline) {
        progress?.stop();
        process.stderr.write(`tesync: run ${runId} ${run ? 'has not finished' : 'has not started (is a worker running?)'} after ${timeoutS} s\n`);
        return 1;
      }
      await delay(POLL_MS);
    }
  } finally {
    progress?.stop();
    await watch.close();
  }
}
