// One tesync in one process: the in-process sync of `tesync sync` against the simulator, into
// a Postgres database (DATABASE_URL) or, with no DATABASE_URL, the embedded Postgres server
// tesync runs in its TE_DATA_DIR, for the phases asked (a first sync into an empty warehouse,
// then an unchanged re-sync). Its own CPU time and peak RSS are what the bench reports, so it
// runs in a child process of its own (run.ts syncChild); runSyncPhases is the same code
// in-process.
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { performSync } from '../../src/commands/sync-session.ts';
import { loadConfig } from '../../src/config.ts';
import { limitHeapGrowth } from '../../src/heap.ts';
import { createLogger } from '../../src/logger.ts';
import { InProcessBudget, type BudgetPolicy } from '../../src/upstream/budget.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { CLOCK_TICK_MS } from './machine.ts';
import { emptyBuckets, rateLimitReport, type PerBucket, type RateLimitReport, type RequestRow } from './figures.ts';
import { syncEnv, type BucketName, type Scenario } from './scenario.ts';

/** `postgres`: a database of a server the bench was given; `embedded`: a TE_DATA_DIR of tesync's own. */
export type Target = { kind: 'postgres'; url: string } | { kind: 'embedded'; dir: string };

export interface SyncJob {
  scenario: Scenario;
  simUrl: string;
  target: Target;
  phases: ('full' | 'resync')[];
  /** Overrides of the rate budget's policy (DEFAULT_BUDGET_POLICY otherwise), to compare settings. */
  budgetPolicy?: Partial<BudgetPolicy>;
}

export interface PhaseResult {
  phase: 'full' | 'resync';
  status: string;
  wallMs: number;
  requests: number;
  requestsByBucket: PerBucket;
  byStatus: Record<string, number>;
  rateLimits: RateLimitReport;
  rowsWritten: number;
  failed: number;
  /** CPU time of this process (tesync). */
  cpuMs: number;
  /**
   * CPU time of the Postgres processes serving this process: its backends, and with the
   * embedded server its background processes too (the whole server is tesync's). Null when
   * unreadable; a process that exits during the phase is not counted.
   */
  postgresCpuMs: number | null;
  /** Highest RSS sampled during the phase. */
  peakRssMb: number;
}

export interface SyncJobResult {
  target: Target['kind'];
  /** openWarehouse: with the embedded target, the server's initdb (first time) and start. */
  openMs: number;
  migrateMs: number;
  /** The server's version (`show server_version`). */
  serverVersion: string | null;
  /** RSS once modules are loaded and the warehouse migrated, before the sync. */
  baselineRssMb: number;
  phases: PhaseResult[];
  /** process.resourceUsage().maxRSS: the peak over the process's life. */
  maxRssMb: number;
  /** CPU time of the whole process (start-up, migration, every phase, every thread). */
  processCpuMs: number;
  /** Rows of the big tables after the last phase. */
  tableRows: Record<string, number>;
}

const RSS_SAMPLE_MS = 100;

/** The environment of `tesync sync` for this job: DATABASE_URL, or none and a TE_DATA_DIR. */
export function jobEnv(job: SyncJob): Record<string, string> {
  const where: Record<string, string> = job.target.kind === 'postgres' ? { DATABASE_URL: job.target.url } : { TE_DATA_DIR: job.target.dir };
  return { ...syncEnv(job.scenario, job.simUrl), ...where };
}

export async function runSyncPhases(job: SyncJob): Promise<SyncJobResult> {
  const config = loadConfig(jobEnv(job));
  const logger = createLogger({ level: 'warn', secrets: config.secrets });
  // As `tesync sync` opens it (src/commands/sync.ts).
  const o0 = Date.now();
  const warehouse = await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const openMs = Date.now() - o0;
  try {
    const m0 = Date.now();
    await warehouse.migrate();
    const migrateMs = Date.now() - m0;
    const baselineRssMb = process.memoryUsage.rss() / 2 ** 20;
    const phases: PhaseResult[] = [];
    for (const phase of job.phases) {
      let peak = process.memoryUsage.rss();
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), RSS_SAMPLE_MS);
      const pgBefore = await postgresCpu(warehouse);
      const cpu0 = process.cpuUsage();
      const budget = new InProcessBudget(job.budgetPolicy ? { policy: job.budgetPolicy } : {});
      const out = await performSync(config, logger, warehouse, { sources: ['app', 'gateway'], trigger: `bench-${phase}`, budget });
      const cpu = process.cpuUsage(cpu0);
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage.rss());
      const pgAfter = await postgresCpu(warehouse);
      const rows = await requestRows(warehouse, out.runId);
      phases.push({
        phase,
        status: out.status,
        wallMs: out.durationMs,
        requests: out.requests.total,
        requestsByBucket: byBucket(rows),
        byStatus: out.requests.byStatus,
        rateLimits: rateLimitReport(rows),
        rowsWritten: out.stats.rows,
        failed: out.stats.failed,
        cpuMs: (cpu.user + cpu.system) / 1000,
        postgresCpuMs: pgBefore && pgAfter ? cpuDelta(pgBefore, pgAfter) : null,
        peakRssMb: peak / 2 ** 20,
      });
    }
    const rows = await tableRows(warehouse);
    const usage = process.cpuUsage();
    const [version] = await warehouse.query<{ server_version: string }>(sql`show server_version`).catch(() => []);
    return { target: job.target.kind, openMs, migrateMs, serverVersion: version?.server_version ?? null, baselineRssMb, phases, maxRssMb: process.resourceUsage().maxRSS / 1024, processCpuMs: (usage.user + usage.system) / 1000, tableRows: rows };
  } finally {
    await warehouse.close();
  }
}

function byBucket(rows: readonly RequestRow[]): PerBucket {
  const n = emptyBuckets();
  for (const r of rows) if (r.bucket in n) n[r.bucket as BucketName]++;
  return n;
}

async function requestRows(w: Warehouse, runId: string): Promise<RequestRow[]> {
  const rows = await w.query<{ bucket: string; http_status: number | null; started_ms: string; duration_ms: number; rate_limit_remaining: number | null }>(
    sql`select bucket, http_status, (extract(epoch from started_at) * 1000)::bigint::text as started_ms, duration_ms, rate_limit_remaining from sync.requests where run_id = ${runId}`,
  );
  return rows.map((r) => ({
    bucket: r.bucket,
    httpStatus: r.http_status === null ? null : Number(r.http_status),
    startedAtMs: Number(r.started_ms),
    durationMs: Number(r.duration_ms),
    rateLimitRemaining: r.rate_limit_remaining === null ? null : Number(r.rate_limit_remaining),
  }));
}

const BIG_TABLES = ['app.metric_history', 'app.chart_points', 'gateway.chart_points', 'gateway.trend_points', 'sync.raw_responses'];

async function tableRows(w: Warehouse): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of BIG_TABLES) {
    const [r] = await w.query<{ n: string }>(sql.raw(`select count(*)::text as n from ${t}`));
    out[t] = Number(r?.n ?? 0);
  }
  return out;
}

/**
 * Clock ticks of each Postgres process serving this one, read from /proc (same machine): the
 * backends of this database on a shared server; every process pg_stat_activity lists (the
 * checkpointer, the WAL writer... included) on the embedded server, which is tesync's alone.
 */
async function postgresCpu(w: Warehouse): Promise<Map<number, number> | null> {
  try {
    const rows = await w.query<{ pid: number }>(w.kind === 'postgres' ? sql`select pid from pg_stat_activity where datname = current_database()` : sql`select pid from pg_stat_activity`);
    const out = new Map<number, number>();
    for (const { pid } of rows) {
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch (err) {
        // Gone since the query (an autovacuum worker, a closed connection): not counted.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(pid), Number(fields[11]) + Number(fields[12]));
    }
    return out;
  } catch {
    return null;
  }
}

function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let ticks = 0;
  for (const [pid, t] of after) ticks += t - (before.get(pid) ?? 0);
  return ticks * CLOCK_TICK_MS;
}

/** Child-process entry: one `run` message in, one result (or error) out. */
if (process.send && process.argv[1]?.endsWith('sync-process.ts')) {
  process.once('message', (job: SyncJob) => {
    // As `tesync sync` does (src/cli.ts).
    limitHeapGrowth();
    runSyncPhases(job).then(
      (result) => process.send!({ type: 'done', result }, () => process.exit(0)),
      (err: unknown) => process.send!({ type: 'error', message: (err as Error).stack ?? String(err) }, () => process.exit(1)),
    );
  });
}
