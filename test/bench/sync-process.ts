// One tesync in one process: the in-process sync of `tesync sync` against the simulator, into
// a Postgres database (DATABASE_URL) or, with no DATABASE_URL, the embedded Postgres server
// tesync runs in its TE_DATA_DIR, for the phases asked (a first sync into an empty warehouse,
// an unchanged re-sync, a re-sync after the simulator's revision epoch). Its own CPU time and peak RSS are what the bench reports, so it
// runs in a child process of its own (run.ts syncChild); runSyncPhases is the same code
// in-process.
import { sql } from 'drizzle-orm';
import { performSync } from '../../src/cli/sync-session.ts';
import { loadConfig } from '../../src/lib/config.ts';
import { limitHeapGrowth } from '../../src/lib/heap.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { InProcessBudget, type BudgetPolicy } from '../../src/upstream/budget/budget.ts';
import { openWarehouse } from '../../src/store/connection.ts';
import { rateLimitReport, type PerBucket, type RateLimitReport, type TableWrites } from './figures.ts';
import { syncEnv, type Scenario } from './scenario.ts';
import { byBucket, cpuDelta, postgresCpu, requestRows, tableRows, tableWrites } from './warehouse-figures.ts';

/** `postgres`: a database of a server the bench was given; `embedded`: a TE_DATA_DIR of tesync's own. */
export type Target = { kind: 'postgres'; url: string } | { kind: 'embedded'; dir: string };

/**
 * `full`: a first sync into an empty warehouse; `resync`: the same sync again, nothing changed
 * upstream; `revision`: the same sync again (an ordinary re-sync) after the harness moved the
 * simulator to its revision epoch (sim.setEpoch(2): revised past values, changed lists, a
 * relisted token, new days).
 */
export type Phase = 'full' | 'resync' | 'revision';

export interface SyncJob {
  scenario: Scenario;
  simUrl: string;
  target: Target;
  phases: Phase[];
  /** Overrides of the rate budget's policy (DEFAULT_BUDGET_POLICY otherwise), to compare settings. */
  budgetPolicy?: Partial<BudgetPolicy>;
}

export interface PhaseResult {
  phase: Phase;
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
  /**
   * What the phase's run did to each versioned table (warehouse-figures.ts tableWrites), for
   * the tables where any count is not 0: rows it wrote, versions it closed, rows it rewrote
   * without a change. Read after the phase: neither its wall time nor its CPU counts it.
   */
  tableWrites: Record<string, TableWrites>;
  /** How long reading tableWrites took. */
  tableWritesMs: number;
  /** The CPU of the Postgres processes meanwhile (as postgresCpuMs), so the machine figure counts it as the run's. */
  tableWritesPostgresCpuMs: number | null;
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
  // As `tesync sync` opens it (src/cli/sync.ts).
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
      // Every version this phase closes ends at or after this instant (tesync's clock, as its rows').
      const since = new Date();
      const out = await performSync(config, logger, warehouse, { sources: ['app', 'gateway'], trigger: `bench-${phase}`, budget });
      const cpu = process.cpuUsage(cpu0);
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage.rss());
      const pgAfter = await postgresCpu(warehouse);
      const rows = await requestRows(warehouse, out.runId);
      const t0 = performance.now();
      const writes = await tableWrites(warehouse, out.runId, since);
      const tableWritesMs = performance.now() - t0;
      const pgRead = await postgresCpu(warehouse);
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
        tableWrites: writes,
        tableWritesMs,
        tableWritesPostgresCpuMs: pgAfter && pgRead ? cpuDelta(pgAfter, pgRead) : null,
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

/** Child-process entry: one `run` message in, one result (or error) out. */
// The script itself (sync-process.ts), or its compiled copy (sync-process.js: the smoke test's).
if (process.send && /sync-process\.[jt]s$/.exec(process.argv[1] ?? '') !== null) {
  process.once('message', (job: SyncJob) => {
    // As `tesync sync` does (src/cli/main.ts).
    limitHeapGrowth();
    runSyncPhases(job).then(
      (result) => process.send!({ type: 'done', result }, () => process.exit(0)),
      (err: unknown) => process.send!({ type: 'error', message: (err as Error).stack ?? String(err) }, () => process.exit(1)),
    );
  });
}
