// One walk in this process: the wiring shared by `tesync sync` and `tesync demo`.
// Part of the composition root: the one place that builds clients and hands them to jobs.
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { catalog, walkRoots, type JobDefinition, type Source, type SyncSettings } from '../resources/index.ts';
import type { Config } from '../lib/config.ts';
import type { Logger } from '../lib/logger.ts';
import { emptyPendingWork, runWalk, type PendingWork } from '../runners/in-process.ts';
import { inScope } from '../runners/walk-scope.ts';
import type { WalkStats } from '../ports/run-ledger.ts';
import { MemoryRunLedger } from '../engine/run/memory-run-ledger.ts';
import { RunInterrupted } from '../engine/run/close-run.ts';
import { RunDriver, walkStopped } from '../engine/run/run-driver.ts';
import {
  createUpstream,
  InProcessBudget,
  type BucketStatus,
  type RateBudget,
  type RetryPolicy,
} from '../upstream/index.ts';
import type { Warehouse } from '../store/connection.ts';
import { WarehouseRecorder } from '../store/books/request-log.ts';
import { tellingRequests } from '../ports/recorder.ts';
import type { RequestSummary } from '../store/books/request-summary.ts';
import { WarehouseClock } from '../store/warehouse-clock.ts';
import { runOwner, type RunStatus } from '../store/books/runs.ts';
import { readRunPartials, type PartialResource } from '../store/read/run-partials.ts';
import { withSignal } from '../upstream/with-signal.ts';
import { deliverPending } from '../runners/notify/deliver.ts';
import { watch } from '../runners/notify/watch.ts';

/** How long `tesync sync` delivers notifications at its end, at most (then one attempt may finish). */
export const SYNC_DELIVERY_BUDGET_MS = 10_000;

/** The outbox delivered for a bounded time at a sync's end; never throws, never fails the sync. */
export async function deliverAtSyncEnd(config: Config, warehouse: Warehouse, logger: Logger): Promise<void> {
  if (config.notify.urls.length === 0) return;
  if (!config.notify.secret) logger.warn('TE_NOTIFY_SECRET is not set: notifications go out unsigned, and receivers cannot tell them from anyone\'s');
  const sent = await deliverPending({
    warehouse,
    urls: config.notify.urls,
    secret: config.notify.secret,
    warehouseName: warehouse.location,
    secrets: config.secrets,
    logger,
    budgetMs: SYNC_DELIVERY_BUDGET_MS,
  });
  if (sent.failed + sent.dead > 0) logger.warn({ ...sent }, 'notifications: some not delivered; the next sync or a worker tries again');
}

export interface SyncRequest {
  sources: Source[];
  tokens?: string[];
  only?: string[];
  full?: boolean;
  trigger: string;
  /** The run's id, when the caller needs it before the run starts (the sync lock names it). */
  runId?: string;
  /** The sources whose sync lock the caller holds (src/store/books/source-lock.ts): runs of theirs left `running` are abandoned. */
  heldSources?: readonly string[];
  /** Test knob: shorter retry delays. */
  retry?: Partial<RetryPolicy>;
  /** Test knob: the jobs, one of them changed (a reader that does not understand a form yet). */
  catalog?: ReadonlyMap<string, JobDefinition<any>>;
  budget?: RateBudget;
  /** Called a few times a second while the walk runs, and once at its end. */
  onProgress?: (progress: LiveProgress) => void;
  signal?: AbortSignal;
  /** Given the interrupt's record as it is written: a second signal waits for it (src/cli/interrupt.ts). */
  hold?: (work: Promise<unknown>) => void;
  /** The warehouse's clock as jobs read it (`RunContext.now`; tests move it); known time stays the server's. */
  clock?: WarehouseClock['now'];
}

export interface LiveProgress {
  stats: WalkStats;
  /** Upstream attempts so far (retries included). */
  requests: number;
  buckets: BucketStatus[];
  elapsedMs: number;
  /** Jobs still queued and running per bucket, and whether the walk may still plan more. */
  pending: PendingWork;
  /** Per bucket: attempts answered so far and their total duration (the pace when the budget does not bind). */
  requestTimes: Record<string, RequestTimes>;
}

export interface RequestTimes {
  count: number;
  ms: number;
  /** The highest X-RateLimit-Remaining answered: the limit, less one, of a host that does not send its limit. */
  maxRemaining?: number;
}

const PROGRESS_INTERVAL_MS = 250;

export interface SyncOutcome {
  runId: string;
  status: RunStatus;
  stats: WalkStats;
  requests: RequestSummary;
  durationMs: number;
  /** Resources the run wrote `partial`, saying why (the first PARTIALS_SHOWN), and how many in all. */
  partials?: { resources: PartialResource[]; total: number };
}

/** How many partial resources a sync's outcome names. */
export const PARTIALS_SHOWN = 10;

export function settingsFrom(config: Config, full: boolean): SyncSettings {
  return {
    full,
    appBundles: Boolean(config.app?.apiKey),
    historyOverlapDays: config.historyOverlapDays,
    historyFullRefetchMs: config.historyFullRefetchDays * 86_400_000,
    historyFromParam: config.historyFromParam,
    gatewayHistoryPeriods: config.gatewayHistoryPeriods,
    gatewayChartTimeframes: config.gatewayChartTimeframes,
    markerMaxAgeMs: config.markerMaxAgeMs,
    maxListBytes: config.maxListBytes,
    batchSize: 2000,
  };
}

/** The sources a command may walk: those asked for, which must be configured. */
export function configuredSources(config: Config): Source[] {
  const out: Source[] = [];
  if (config.app) out.push('app');
  if (config.gateway) out.push('gateway');
  return out;
}

export async function performSync(config: Config, logger: Logger, warehouse: Warehouse, req: SyncRequest): Promise<SyncOutcome> {
  const started = Date.now();
  // Times a job stamps, markers' ages and the request log, on the warehouse's clock, read once
  // for the session (a job's `now` may be moved in tests: `req.clock`).
  const clock = new WarehouseClock(warehouse.db);
  if (!req.clock) await clock.refresh();
  const now = req.clock ?? clock.now;
  const runId = req.runId ?? randomUUID();
  const budget = req.budget ?? new InProcessBudget();
  let requestCount = 0;
  const requestTimes: Record<string, RequestTimes> = {};
  const recorder = tellingRequests(new WarehouseRecorder(warehouse, logger, { clock }), (r) => {
    requestCount++;
    const t = (requestTimes[r.bucket] ??= { count: 0, ms: 0 });
    t.count++;
    t.ms += r.durationMs;
    if (r.rateLimitRemaining !== undefined && r.rateLimitRemaining > (t.maxRemaining ?? -1)) t.maxRemaining = r.rateLimitRemaining;
  });
  const client = createUpstream({ config, budget, recorder, logger, secrets: config.secrets, ...(req.retry ? { retry: req.retry } : {}) });
  // Every request and budget wait of the walk listens to this one signal.
  if (req.signal) setMaxListeners(0, req.signal);
  const upstream = req.signal ? withSignal(client, req.signal) : client;
  const scope = { groups: req.only && req.only.length > 0 ? req.only : null, tokens: req.tokens ?? [] };
  const filter = (job: JobDefinition<any>, payload: unknown) => inScope(scope, job, payload);
  const abandoned = await RunDriver.closeAbandoned(warehouse, { of: 'syncs', ...(req.heldSources ? { heldSources: req.heldSources } : {}) });
  if (abandoned.length > 0) logger.warn({ runs: abandoned.length }, 'closed runs whose process had ended without finishing them');
  const runLogger = logger.child({ runId });
  const jobs = req.catalog ?? catalog;
  const driver = new RunDriver({ warehouse, ledger: new MemoryRunLedger(), catalog: jobs, logger });
  const settings = settingsFrom(config, Boolean(req.full));
  // The settings its reads ran with, which a replay reads the archive with again (src/replay/).
  await driver.open({ id: runId, trigger: req.trigger, sources: req.sources, options: { tokens: scope.tokens, only: scope.groups ?? [], full: Boolean(req.full), owner: runOwner(), settings } });
  // The interrupt's time is taken on the server the moment it comes, before the writes in
  // flight finish: the run ends then, and a second signal that kills us still leaves it known.
  let interruptMarked: Promise<void> = Promise.resolve();
  const markInterrupt = () => {
    const reason: unknown = req.signal?.reason;
    if (!(reason instanceof RunInterrupted)) return;
    interruptMarked = driver.markInterrupted(runId, reason.signal).catch((err: unknown) => logger.error({ err }, 'could not record the interrupt'));
    req.hold?.(interruptMarked);
  };
  if (req.signal?.aborted) markInterrupt();
  else req.signal?.addEventListener('abort', markInterrupt, { once: true });
  runLogger.info({ sources: req.sources }, 'sync started');
  const stats = driver.ledger.live(runId);
  const pending = emptyPendingWork();
  const report = () => req.onProgress?.({ stats, requests: requestCount, buckets: budget.snapshot(), elapsedMs: Date.now() - started, pending, requestTimes });
  const ticker = req.onProgress ? setInterval(report, PROGRESS_INTERVAL_MS) : undefined;
  const housekeeping = { requestsRetentionDays: config.requestsRetentionDays, logger: runLogger };
  const interruptedBy = () => (req.signal?.reason instanceof RunInterrupted ? req.signal.reason : undefined);
  try {
    try {
      await runWalk({
        catalog: jobs,
        roots: walkRoots(req.sources),
        context: { warehouse, upstream, recorder, logger: runLogger, now, runId, settings },
        concurrency: config.concurrency,
        filter,
        driver,
        pending,
        ...(req.signal ? { signal: req.signal } : {}),
      });
    } finally {
      clearInterval(ticker);
      req.signal?.removeEventListener('abort', markInterrupt);
      report();
      await recorder.close();
    }
  } catch (err) {
    // The walk itself broke (not a job: those fail into the stats): the run is closed here,
    // not left `running` for a later command to find abandoned, then the command fails.
    await interruptMarked;
    await driver.fail(runId, walkStopped(err), { stats, housekeeping, interrupted: interruptedBy() }).catch((closeErr: unknown) => runLogger.error({ err: closeErr }, 'could not close the run'));
    throw err;
  }
  await interruptMarked;
  const interrupted = interruptedBy();
  const { status, requests } = await driver.close(runId, housekeeping, interrupted);
  const durationMs = Date.now() - started;
  runLogger.info({ status, durationMs, done: stats.done, failed: stats.failed, rows: stats.rows, requests: requests.total }, 'sync finished');
  // What only a read can see (a group overdue, coverage short, a bucket held) is judged once the run is closed.
  await watch({ warehouse, config, logger: runLogger });
  const partials = await readRunPartials(warehouse, runId, PARTIALS_SHOWN);
  return { runId, status, stats, requests, durationMs, ...(partials.total > 0 ? { partials } : {}) };
}

