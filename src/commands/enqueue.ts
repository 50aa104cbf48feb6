// `tesync enqueue`: queues a walk now for the running workers, optionally waiting for it.
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { groups } from '../../jobs/index.ts';
import { enqueueWalk } from '../runner/bullmq/enqueue.ts';
import { isScheduleId, SCHEDULES } from '../runner/bullmq/schedules.ts';
import { emptyStats, type WalkStats } from '../runner/stats.ts';
import { openWarehouse } from '../warehouse/connection.ts';
import type { RunStatus } from '../warehouse/runs.ts';
import { UsageError, type CommandContext } from './context.ts';
import { formatSummary } from './sync.ts';
import type { RequestSummary } from '../warehouse/request-summary.ts';
import { onlyArg, sourcesArg } from './walk-args.ts';

const HELP = `Usage: tesync enqueue [--schedule ID | --only GROUP,...] [--source S] [--token SLUG]... [--full] [--wait [--timeout SECONDS]] [--json]

Queues a walk now; running workers (tesync worker) do it, sharing the rate budget.
  --schedule ID  the walk a schedule makes (${SCHEDULES.map((s) => s.id).join(', ')})
  --only G,...   only these resource groups (${groups().join(', ')})
  --source S     only this source (app or gateway)
  --token SLUG   only this token's resources (repeatable)
  --full         ignore change markers: fetch everything again
  --wait         wait for the run to finish, print its summary; exit 1 if it failed
  --timeout S    with --wait: give up after S seconds (default 3600; exit 1)
  --json         print JSON instead of text`;

const POLL_MS = 500;

export async function runEnqueue({ config, argv }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      schedule: { type: 'string' },
      only: { type: 'string', multiple: true },
      source: { type: 'string', multiple: true },
      token: { type: 'string', multiple: true },
      full: { type: 'boolean', default: false },
      wait: { type: 'boolean', default: false },
      timeout: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const sources = sourcesArg(config, values.source);
  if (values.schedule !== undefined && !isScheduleId(values.schedule)) throw new UsageError(`--schedule must be one of ${SCHEDULES.map((s) => s.id).join(', ')}`);
  if (values.schedule !== undefined && values.only) throw new UsageError('--schedule and --only do not go together');
  const only = onlyArg(values.only);
  const timeoutS = values.timeout === undefined ? 3600 : Number(values.timeout);
  if (!Number.isFinite(timeoutS) || timeoutS <= 0) throw new UsageError('--timeout must be a positive number of seconds');
  if (values.wait && !config.databaseUrl) throw new UsageError('--wait reads the run from the warehouse: set DATABASE_URL');

  const { runId, jobId } = await enqueueWalk(config, {
    ...(values.schedule !== undefined ? { schedule: values.schedule } : { groups: only.length > 0 ? only : null }),
    tokens: values.token ?? [],
    sources,
    full: values.full,
  });
  if (!values.wait) {
    process.stdout.write(values.json ? `${JSON.stringify({ runId, jobId })}\n` : `Queued walk ${jobId} (run ${runId}); workers will pick it up.\n`);
    return 0;
  }
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, maxConnections: 1 });
  try {
    const deadline = Date.now() + timeoutS * 1000;
    for (;;) {
      const [run] = await warehouse.query<{ status: RunStatus; stats: (WalkStats & { requests: RequestSummary }) | null; started_at: string; finished_at: string | null }>(
        sql`select status, stats, started_at::text, finished_at::text from sync.runs where id = ${runId}`,
      );
      if (run && run.status !== 'running') {
        const durationMs = new Date(run.finished_at ?? Date.now()).getTime() - new Date(run.started_at).getTime();
        // A run that failed before any job (no source) has no stats.
        const stats = run.stats?.requests ? run.stats : { ...emptyStats(), requests: { total: 0, byStatus: {}, rateLimited: 0, failedAttempts: 0 } };
        const outcome = { runId, status: run.status, stats, requests: stats.requests, durationMs };
        process.stdout.write(values.json ? `${JSON.stringify(outcome)}\n` : formatSummary(outcome));
        return run.status === 'failed' ? 1 : 0;
      }
      if (Date.now() > deadline) {
        process.stderr.write(`tesync: run ${runId} ${run ? 'has not finished' : 'has not started (is a worker running?)'} after ${timeoutS} s\n`);
        return 1;
      }
      await delay(POLL_MS);
    }
  } finally {
    await warehouse.close();
  }
}
