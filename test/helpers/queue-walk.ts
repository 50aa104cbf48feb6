// A walk queued for running `tesync worker` processes, and its end awaited, in the test's own
// process: what `tesync enqueue --wait` does once its checks have passed (enqueueWalk on the
// configured queue backend, then sync.runs read until the run has ended), without starting a
// `tesync` process, which costs seconds of CPU (docs/performance.md, "The test loop"). For cases
// about what the workers do with a walk; the command's own behaviour (its checks, its output,
// its exit codes) is shown where it is run for real (test/cli/enqueue-wait.test.ts,
// test/cli/key-refused.test.ts, the first case of test/runners/bullmq/worker.test.ts).
import postgres from 'postgres';
import { configuredSources } from '../../src/cli/sync-session.ts';
import { emptyStats, type WalkStats } from '../../src/ports/run-ledger.ts';
import { loadConfig } from '../../src/lib/config.ts';
import type { Source } from '../../src/resources/index.ts';
import { queueBackendKind } from '../../src/runners/bullmq/backend.ts';
import { enqueueWalk } from '../../src/runners/bullmq/enqueue.ts';
import { openQueueBackend } from '../../src/runners/bullmq/open-backend.ts';
import { openWarehouse } from '../../src/store/connection.ts';
import type { RequestSummary } from '../../src/store/books/request-summary.ts';
import type { RunStatus } from '../../src/store/books/runs.ts';
import { createTestLogger } from './services.ts';
import { waitFor } from './workers.ts';

export interface WalkAsked {
  /** Only these resource groups (`tesync enqueue --only`); every group when absent. */
  groups?: string[];
  /** Only these sources (`--source`); the configured ones when absent, as the command has it. */
  sources?: Source[];
  full?: boolean;
}

/**
 * Queues a walk as `tesync enqueue` does, for the workers of `env` (the environment a `tesync`
 * process of the test gets: DATABASE_URL, REDIS_URL or none, TE_QUEUE_PREFIX, the sources).
 */
export async function queueWalk(env: Record<string, string>, walk: WalkAsked = {}): Promise<{ runId: string; jobId: string }> {
  const config = loadConfig(env);
  const sources = walk.sources ?? configuredSources(config);
  // The Postgres backend keeps its queues in the warehouse.
  const warehouse = queueBackendKind(config) === 'postgres' ? await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, maxConnections: 2 }) : undefined;
  try {
    const backend = await openQueueBackend({ config, warehouse, name: 'tesync-test-enqueue', logger: createTestLogger([], 'warn').logger });
    try {
      return await enqueueWalk(backend, { groups: walk.groups ?? null, tokens: [], ...(sources.length > 0 ? { sources } : {}), full: walk.full ?? false });
    } finally {
      await backend.close();
    }
  } finally {
    await warehouse?.close();
  }
}

/** A run as `tesync enqueue --wait --json` prints it once it has ended. */
export interface RunEnd {
  runId: string;
  status: RunStatus;
  stats: WalkStats & { requests: RequestSummary };
  requests: RequestSummary;
  durationMs: number;
}

/**
 * Waits until the run `runId` is recorded as ended in the warehouse at `databaseUrl` (polling
 * sync.runs, as `tesync enqueue --wait` does), and returns it as that command prints it. Gives up
 * after `patience(nominalMs)` (a hang guard), or when `signal` aborts (the case is over).
 */
export async function runEnded(databaseUrl: string, runId: string, options: { nominalMs?: number; signal?: AbortSignal } = {}): Promise<RunEnd> {
  const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    return await waitFor(
      `run ${runId} to end`,
      async () => {
        options.signal?.throwIfAborted();
        const [run] = await db<{ status: RunStatus; stats: (WalkStats & { requests: RequestSummary }) | null; started_at: Date; finished_at: Date | null }[]>`
          select status, stats, started_at, finished_at from sync.runs where id = ${runId}`;
        if (!run || run.status === 'running') return undefined;
        // A run that failed before any job (no source) has no stats.
        const stats = run.stats?.requests ? run.stats : { ...emptyStats(), requests: { total: 0, byStatus: {}, rateLimited: 0, failedAttempts: 0 } };
        const durationMs = (run.finished_at ?? new Date()).getTime() - run.started_at.getTime();
        return { runId, status: run.status, stats, requests: stats.requests, durationMs };
      },
      options.nominalMs ?? 60_000,
      200,
    );
  } finally {
    await db.end({ timeout: 5 });
  }
}
