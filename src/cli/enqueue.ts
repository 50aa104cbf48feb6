// `tesync enqueue`: queues a walk now for the running workers, optionally waiting for it.
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { Config } from '../lib/config.ts';
import { wrapToWidth } from '../lib/display-width.ts';
import { groups } from '../resources/index.ts';
import { enqueueWalk } from '../runners/bullmq/enqueue.ts';
import { queueBackendKind, type QueueBackend, type QueueBackendKind } from '../runners/bullmq/backend.ts';
import { migrateQueueBackend, openQueueBackend } from '../runners/bullmq/open-backend.ts';
import { WALK_QUEUE } from '../runners/bullmq/queues.ts';
import { pickedUp, watchRun, type RunView } from '../runners/bullmq/run-watch.ts';
import { EXPORT_SCHEDULE, isScheduleId, SCHEDULES } from '../runners/bullmq/schedules.ts';
import type { ExportSummary } from '../export/export.ts';
import { describe as describeExport } from './export.ts';
import { emptyStats, type WalkStats } from '../ports/run-ledger.ts';
import { openWarehouse, type Warehouse } from '../store/connection.ts';
import { readRunRecord } from '../store/read/run-record.ts';
import { WarehouseClock } from '../store/warehouse-clock.ts';
import type { RunStatus } from '../store/books/runs.ts';
import { joinNegativeValues, positiveNumberFlag } from './flag-values.ts';
import { listedTokens, unknownSlugs } from '../store/read/listed-tokens.ts';
import { outputWidth, UsageError, type CommandContext } from './context.ts';
import { formatDuration } from './eta.ts';
import { INTERRUPT_EXIT_CODE, signalName, type InterruptSignal } from './interrupt.ts';
import { createProgressDisplay } from './progress.ts';
import { formatSummary } from './sync.ts';
import type { RequestSummary } from '../store/books/request-summary.ts';
import { configuredUpstreams, ensureBoundUpstream } from './upstream-check.ts';
import { onlyArg, sourcesArg, unknownTokensLine, WALK_OPTIONS } from './walk-args.ts';
import { configuredSources } from './sync-session.ts';
import { optionLines } from './help-text.ts';

/** `--wait-timeout`'s default: how long a walk may wait for a worker to take it, in seconds. */
export const DEFAULT_WAIT_TIMEOUT_S = 120;

const HELP = [
  `Usage: tesync enqueue [--schedule ID | --only GROUP,...] [--source S]
                      [--token SLUG]... [--full]
                      [--wait [--wait-timeout SECONDS] [--timeout SECONDS]]
                      [--json] [--force]

Queues a walk now; running workers (tesync worker) do it, sharing the rate
budget. Without --wait it says how many workers are connected, or that none is.`,
  ...optionLines(
    [
      ['--schedule ID', `the walk a schedule makes (${SCHEDULES.map((s) => s.id).join(', ')}); export: no walk, the daily archives into the workers' TE_EXPORT_DIR`],
      ['--only G,...', `only these resource groups (${groups().join(', ')})`],
      ['--source S', 'only this source (app or gateway)'],
      ['--token SLUG', "only this token's resources (repeatable)"],
      ['--full', 'ignore change markers: fetch everything again'],
      ['--wait', 'wait for the run to finish, showing its progress, print its summary; exit 1 if it failed'],
      ['--wait-timeout S', `with --wait: when no worker has taken the walk within S seconds (default ${DEFAULT_WAIT_TIMEOUT_S}), remove it from the queue and exit 1 (a walk nobody took must not start later, when a worker comes)`],
      ['--timeout S', 'with --wait: give up after S seconds (default 3600; exit 1); a walk no worker has taken by then is removed, as with --wait-timeout'],
      ['--json', 'print JSON instead of text'],
      ['--force', 'with DATABASE_URL bound to another upstream: rebind it to this one (recorded in sync.upstream_binding_log; without it: exit 2, nothing queued)'],
    ],
    17,
  ),
].join('\n');

const POLL_MS = 500;
/** A walk no worker has taken after this long is said to be waiting for one. */
export const NO_WORKER_MS = 5_000;
/** Off a terminal, a progress line at most this often (and only when what it says changed). */
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

/**
 * Pure: what `enqueue` without `--wait` says of the walk it queued, by the workers connected
 * to its queues now (undefined: the backend would not say): none connected is said, with where
 * they should be, not that workers will pick it up.
 */
export function queuedLine(jobId: string, runId: string, workers: number | undefined, prefix: string, backend: Pick<QueueBackend, 'kind' | 'where'>): string {
  const queued = `Queued walk ${jobId} (run ${runId})`;
  if (workers === undefined) return `${queued}; a worker under TE_QUEUE_PREFIX=${prefix} will pick it up.`;
  if (workers > 0) return `${queued}; ${workers} worker${workers === 1 ? ' is' : 's are'} connected and will pick it up.`;
  return `${queued}; no worker is connected to ${backend.where} under TE_QUEUE_PREFIX=${prefix}: it starts when \`tesync worker\` runs with the same ${SAME_SETTINGS[backend.kind]}.`;
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

/** One look at the queued run. */
export interface WaitObservation {
  /** Since the wait began. */
  elapsedMs: number;
  /** sync.runs has the run: a worker began it. */
  runStarted: boolean;
  /** What the queue backend says of the walk; undefined when it could not be read. */
  view: Pick<RunView, 'walk' | 'stats' | 'workers'> | undefined;
}

/** What the wait says after one look. */
export interface WaitStep {
  /** Lines said once each, above the progress: no worker has taken the walk; one took it after all. */
  notices: string[];
  /** The progress line (redrawn on a terminal). */
  line: string;
  /** Off a terminal: the progress line to log now, if any. */
  log: string | undefined;
  /** A worker has taken the walk (and it stays taken, as the notices say). */
  picked: boolean;
}

/**
 * Pure (state of its own): what `enqueue --wait` says as it looks at the run, every line once.
 * A walk a worker took stays taken (a view that could not be read, or a walk job waiting for
 * its next try, does not make the notice that no worker took it say it again). Off a terminal
 * a progress line is logged when what it says changed, not only its clock, at most every
 * LOG_EVERY_MS; a walk no worker took is the notice's to say, not a line every 10 s.
 */
export function createWaitNarrator(prefix: string, backend: Pick<QueueBackend, 'kind' | 'where'>): (o: WaitObservation) => WaitStep {
  let picked = false;
  let warned = false;
  let lastView: WaitObservation['view'];
  let logged = { atMs: 0, state: '' };
  return (o) => {
    lastView = o.view ?? lastView;
    const failedUnstarted = !o.runStarted && o.view?.walk === 'failed';
    const wasPicked = picked;
    picked ||= o.runStarted || (o.view !== undefined && pickedUp(o.view, false));
    const notices: string[] = [];
    if (!picked && !warned && o.elapsedMs >= NO_WORKER_MS) {
      warned = true;
      notices.push(noWorkerLine(o.elapsedMs, o.view?.workers, prefix, backend));
    }
    // Refused before it began: the failure says it, not that a worker started the run.
    if (picked && !wasPicked && warned && !failedUnstarted) notices.push(`a worker started the run after ${Math.round(o.elapsedMs / 1000)} s`);
    const line = runLine(lastView, picked, o.elapsedMs);
    const state = runLine(lastView, picked, 0);
    let log: string | undefined;
    if (picked && o.elapsedMs - logged.atMs >= LOG_EVERY_MS && state !== logged.state) {
      log = line;
      logged = { atMs: o.elapsedMs, state };
    }
    return { notices, line, log, picked };
  };
}

export async function runEnqueue({ config, logger, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: joinNegativeValues(argv, ['--timeout', '--wait-timeout']),
    strict: true,
    options: { ...WALK_OPTIONS, schedule: { type: 'string' }, timeout: { type: 'string' }, 'wait-timeout': { type: 'string' } },
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
  if (values.schedule === EXPORT_SCHEDULE && (values.token?.length || values.full)) throw new UsageError('--schedule export walks nothing: --token and --full do not go with it');
  const only = onlyArg(values.only);
  const timeoutS = values.timeout === undefined ? 3600 : positiveNumberFlag('--timeout', values.timeout, 'seconds', '600');
  const waitTimeoutS = values['wait-timeout'] === undefined ? DEFAULT_WAIT_TIMEOUT_S : positiveNumberFlag('--wait-timeout', values['wait-timeout'], 'seconds', '300');
  const onPostgres = queueBackendKind(config) === 'postgres';
  if (values.wait && !config.databaseUrl && !onPostgres) throw new UsageError('--wait reads the run from the warehouse: set DATABASE_URL');

  // The walk's run is written by the workers, who check their own upstream; checking the one
  // configured here too refuses a walk meant for another warehouse before it is queued. On the
  // Postgres backend the warehouse (embedded or not) is where the queues are.
  const warehouse = config.databaseUrl || onPostgres ? await openWarehouse({ databaseUrl: config.databaseUrl, sessionUrl: config.databaseSessionUrl, dataDir: config.dataDir, maxConnections: 2 }) : undefined;
  let backend: QueueBackend | undefined;
  const listSources = sources ?? ['app', 'gateway'];
  try {
    if (warehouse) {
      await warehouse.migrate();
      // A slug no token list holds, as last fetched, walks nothing: most likely a typo. Lists
      // never fetched yet cannot say, and a --wait judges again against the lists its walk fetched.
      if (values.token?.length) {
        const listed = await listedTokens(warehouse, listSources);
        const unknown = listed.length > 0 ? unknownSlugs(values.token, listed) : [];
        if (unknown.length > 0) throw new UsageError(`${unknownTokensLine(unknown, 'queued')} (the lists as last fetched)`);
      }
      await ensureBoundUpstream(warehouse, configuredUpstreams(config, sources ?? []), { command: 'enqueue', force: values.force, logger });
      await migrateQueueBackend({ config, warehouse });
    }
    backend = await openQueueBackend({ config, warehouse, name: 'tesync-enqueue', logger });
    const { runId, jobId } = await enqueueWalk(backend, {
      ...(values.schedule !== undefined ? { schedule: values.schedule } : { groups: only.length > 0 ? only : null }),
      tokens: values.token ?? [],
      ...(sources ? { sources } : {}),
      full: values.full,
    });
    if (!values.wait || !warehouse) {
      const workers = await backend.workersCount().catch(() => undefined);
      const line = queuedLine(jobId, runId, workers, config.worker.queuePrefix, backend);
      process.stdout.write(values.json ? `${JSON.stringify({ runId, jobId, workers: workers ?? null })}\n` : `${wrapToWidth(line, outputWidth(process.stdout)).join('\n')}\n`);
      return 0;
    }
    const code = await waitForRun(config, warehouse, backend, runId, jobId, { json: values.json, timeoutS, waitTimeoutS });
    const unknown = code === 0 && values.token?.length ? unknownSlugs(values.token, await listedTokens(warehouse, listSources)) : [];
    if (unknown.length === 0) return code;
    process.stderr.write(`tesync: ${unknownTokensLine(unknown, 'fetched')}\n`);
    return 2;
  } finally {
    await backend?.close();
    await warehouse?.close();
  }
}

/**
 * Pure: the line of a wait that gave up on a walk no worker took (removed from the queue), or
 * that found a worker had taken it after all (left to it).
 */
export function notTakenLine(runId: string, afterS: number, flag: '--wait-timeout' | '--timeout'): string {
  return `no worker took the walk of run ${runId} within ${afterS} s (${flag}): removed it from the queue, so it will not start later, when a worker comes; start \`tesync worker\` and enqueue it again`;
}

/**
 * Removes the walk job while no worker holds it; false when one took it meanwhile (its lock
 * keeps it: both queue backends remove only a job nobody holds).
 */
async function withdrawWalk(backend: QueueBackend, jobId: string): Promise<boolean> {
  const queue = backend.queue(WALK_QUEUE);
  try {
    return (await queue.remove(jobId)) === 1 || (await queue.getJobState(jobId)) === 'unknown';
  } finally {
    await queue.close();
  }
}

/** SIGINT/SIGTERM while waiting: the first one, until disposed. */
function watchSignals(): { readonly received: InterruptSignal | undefined; readonly aborted: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  let received: InterruptSignal | undefined;
  const on = (signal: InterruptSignal) => {
    received ??= signal;
    controller.abort();
  };
  const onInt = () => on('SIGINT');
  const onTerm = () => on('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return {
    get received() {
      return received;
    },
    aborted: controller.signal,
    dispose() {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    },
  };
}

interface WaitOptions {
  json: boolean;
  /** `--timeout`: the whole wait. */
  timeoutS: number;
  /** `--wait-timeout`: the wait for a worker to take the walk. */
  waitTimeoutS: number;
}

/**
 * `--wait`: the run's progress until it ends, then its summary. A walk no worker has taken
 * within --wait-timeout (or --timeout, when shorter) is removed from the queue: the command
 * gives up on it, and it must not start hours later when a worker appears. Ctrl-C or SIGTERM
 * stops the wait only: the walk stays queued, or running.
 */
async function waitForRun(config: Config, warehouse: Warehouse, backend: QueueBackend, runId: string, jobId: string, options: WaitOptions): Promise<number> {
  const { json, timeoutS, waitTimeoutS } = options;
  const watch = watchRun(backend, runId, jobId);
  // On a terminal the run's progress is one line, redrawn; elsewhere a line now and then
  // (never with --json: its stdout is the summary alone).
  const progress = process.stderr.isTTY && !json ? createProgressDisplay() : undefined;
  const say = (line: string) => (progress ? progress.print(line, process.stderr) : process.stderr.write(line));
  const narrate = createWaitNarrator(config.worker.queuePrefix, backend);
  const signals = watchSignals();
  const untaken = waitTimeoutS <= timeoutS ? { s: waitTimeoutS, flag: '--wait-timeout' as const } : { s: timeoutS, flag: '--timeout' as const };
  try {
    const started = Date.now();
    const deadline = started + timeoutS * 1000;
    for (;;) {
      const run = await readRunRecord(warehouse, runId);
      const view = run?.status === 'running' || !run ? await watch.read().catch(() => undefined) : undefined;
      const step = narrate({ elapsedMs: Date.now() - started, runStarted: run !== undefined, view });
      for (const notice of step.notices) say(`tesync: ${notice}\n`);
      if (!run || run.status === 'running') {
        if (progress) progress.show(step.line);
        else if (!json && step.log !== undefined) process.stderr.write(`tesync: run ${runId}: ${step.log}\n`);
      }
      // Failed for good before its run began (a worker bound elsewhere refused it): nothing to wait for.
      if (!run && view?.walk === 'failed') {
        progress?.stop();
        process.stderr.write(`tesync: the walk of run ${runId} failed before it started: ${view.failedReason}\n`);
        return 1;
      }
      if (run && run.status !== 'running') {
        progress?.stop();
        // Both ends on the warehouse's clock (a closed run has its end; the clock is read only without one).
        const endedAt = run.finishedAt ?? (await WarehouseClock.read(warehouse.db));
        const durationMs = new Date(endedAt).getTime() - new Date(run.startedAt).getTime();
        if (run.schedule === EXPORT_SCHEDULE) return exportOutcome(runId, run.status, run.stats as ExportSummary | null, run.error, durationMs, json);
        // A run that failed before any job (no source) has no stats.
        const recorded = run.stats as (WalkStats & { requests?: RequestSummary }) | null;
        const stats = recorded?.requests ? { ...recorded, requests: recorded.requests } : { ...emptyStats(), requests: { total: 0, byStatus: {}, rateLimited: 0, failedAttempts: 0 } };
        const outcome = { runId, status: run.status, stats, requests: stats.requests, durationMs };
        process.stdout.write(json ? `${JSON.stringify(outcome)}\n` : formatSummary(outcome));
        return run.status === 'failed' ? 1 : 0;
      }
      // Nobody took it within the bound: withdrawn, unless a worker took it just now (then
      // the next look sees it taken, and the wait goes on).
      if (!step.picked && Date.now() - started >= untaken.s * 1000 && (await withdrawWalk(backend, jobId))) {
        progress?.stop();
        process.stderr.write(`tesync: ${notTakenLine(runId, untaken.s, untaken.flag)}\n`);
        return 1;
      }
      if (Date.now() > deadline) {
        progress?.stop();
        process.stderr.write(`tesync: run ${runId} ${run ? 'has not finished' : 'has not started (is a worker running?)'} after ${timeoutS} s\n`);
        return 1;
      }
      await delay(POLL_MS, undefined, { signal: signals.aborted }).catch(() => {});
      if (signals.received) {
        progress?.stop();
        process.stderr.write(`tesync: ${signalName(signals.received)}: stopped waiting; the walk of run ${runId} stays ${step.picked ? 'with the worker that took it' : 'queued for the workers'}\n`);
        return INTERRUPT_EXIT_CODE[signals.received];
      }
    }
  } finally {
    signals.dispose();
    progress?.stop();
    await watch.close();
  }
}

/** The end of an export run (the `export` schedule): what it wrote, or why it failed. */
function exportOutcome(runId: string, status: RunStatus, summary: ExportSummary | null, error: string | null, durationMs: number, json: boolean): number {
  const wrote = summary?.tables ? summary : null;
  if (json) process.stdout.write(`${JSON.stringify({ runId, status, export: wrote, error, durationMs })}\n`);
  else if (wrote) process.stdout.write(describeExport(wrote));
  if (error !== null && !json) process.stderr.write(`tesync: run ${runId} ${status}: ${error}\n`);
  return status === 'failed' ? 1 : 0;
}
