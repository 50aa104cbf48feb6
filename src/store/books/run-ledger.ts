// The run ledger's tables, sync.run_counts and sync.run_jobs (src/schema/warehouse/sync.ts):
// the statements of the run ledger on Postgres (postgres-run-ledger.ts), each step
// one statement, as each step of the Redis ledger is one script.
//
// - A job counts once: `enter` counts it only when its row is inserted (`on conflict do
//   nothing`), `settle` only when it flips the row's `settled` (`and not settled`). A second
//   settle of the job, from any connection, waits on the first one's row lock, then finds the
//   row settled and counts nothing (read committed re-reads the row it waited for).
// - The counts are a row per run, updated in the same statement as the job's row: atomic with
//   it, and a settle's `pending` is the count after it in the order settles commit (updates of
//   the row queue on its lock), so the last settle of a run reads 0, as with Redis. Counting
//   `run_jobs` instead would cost a settle a scan of its run, and concurrent settles reading
//   their own snapshots could each see the other pending.
// - Every statement takes a job's row before its run's counts; the removal of expired runs
//   takes them in separate statements, so the two never wait on each other in a cycle.
// - A run's rows go 7 days (the caller's `ttlMs`) after its last new job, as the Redis keys
//   that each entry renews, or when `expireRun` says; they are removed when a run enters its
//   first job (one indexed delete, for every deployment), not the moment they expire.
import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db } from '../connection.ts';
import { SERVER_CLOCK } from '../warehouse-clock.ts';
import { withReconnect } from '../../lib/reconnect.ts';

/** One run of one deployment (the workers' queue prefix). */
export interface LedgerRun {
  prefix: string;
  runId: string;
}

/** What the ledger adds up per run: the engine's RunStats, its failures as stored (JSON). */
export interface RunCounts {
  planned: number;
  done: number;
  failed: number;
  deduplicated: number;
  rows: number;
  byGroup: Record<string, Record<string, number>>;
  failures: unknown[];
}

const expiry = (ms: number) => sql`${SERVER_CLOCK} + ${ms}::bigint * interval '1 millisecond'`;

/** Enters a job: `new` the first time (counted), then `pending` until it settles, `settled` after. */
export async function enterRunJob(db: Db, run: LedgerRun, jobId: string, ttlMs: number): Promise<'new' | 'pending' | 'settled'> {
  const [row] = await execute<{ planned: number | null }>(
    db,
    sql`with job as (
          insert into sync.run_jobs (queue_prefix, run_id, job_id) values (${run.prefix}, ${run.runId}, ${jobId})
          on conflict do nothing
          returning job_id
        ), counts as (
          insert into sync.run_counts as c (queue_prefix, run_id, planned, pending, expires_at)
          select ${run.prefix}, ${run.runId}, 1, 1, ${expiry(ttlMs)} from job
          on conflict (queue_prefix, run_id) do update
            set planned = c.planned + 1, pending = c.pending + 1, expires_at = excluded.expires_at
          returning c.planned
        )
        select (select planned from counts) as planned`,
  );
  const planned = row?.planned ?? null;
  if (planned === null) {
    // Entered before. A statement of its own: it sees an entry that committed while this one waited.
    const [job] = await execute<{ settled: boolean }>(db, sql`select settled from sync.run_jobs where ${isRun(run)} and job_id = ${jobId}`);
    return job && !job.settled ? 'pending' : 'settled';
  }
  // A run's first job (again after a deduplicated one): the moment to clear the expired runs.
  if (planned === 1) await removeExpiredRuns(db);
  return 'new';
}

/**
 * Settles a job: `add` (its outcome's counts) is counted only by the call that takes it out of
 * what is pending. Returns whether this call counted it and how many of the run's jobs are pending.
 */
export async function settleRunJob(db: Db, run: LedgerRun, jobId: string, add: RunCounts, maxFailures: number): Promise<{ counted: boolean; pending: number }> {
  const [row] = await execute<{ pending: number }>(
    db,
    sql`with job as (
          update sync.run_jobs set settled = true
          where ${isRun(run)} and job_id = ${jobId} and not settled
          returning job_id
        )
        update sync.run_counts c set pending = c.pending - 1, ${addCounts(add, maxFailures)}
        where ${isRun(run, sql`c.`)} and exists (select from job)
        returning c.pending`,
  );
  if (row) return { counted: true, pending: row.pending };
  return { counted: false, pending: await runPending(db, run) };
}

/** Adds to a run's counts without a job (a follow-up that could not be resolved). */
export async function addToRun(db: Db, run: LedgerRun, add: RunCounts, maxFailures: number, ttlMs: number): Promise<void> {
  const first: RunCounts = { ...add, failures: add.failures.slice(0, maxFailures) };
  await execute(
    db,
    sql`insert into sync.run_counts as c (queue_prefix, run_id, planned, done, failed, deduplicated, rows, by_group, failures, expires_at)
        values (${run.prefix}, ${run.runId}, ${first.planned}, ${first.done}, ${first.failed}, ${first.deduplicated}, ${first.rows},
                ${JSON.stringify(first.byGroup)}::jsonb, ${JSON.stringify(first.failures)}::jsonb, ${expiry(ttlMs)})
        on conflict (queue_prefix, run_id) do update set ${addCounts(add, maxFailures)}`,
  );
}

/** `c.planned + ...` for every count, the failures kept up to `maxFailures` (the first ones). */
function addCounts(add: RunCounts, maxFailures: number): SQL {
  const groups = Object.keys(add.byGroup).length === 0
    ? sql`c.by_group`
    : sql`(select coalesce(jsonb_object_agg(grp, statuses), '{}'::jsonb) from (
             select grp, jsonb_object_agg(status, n) as statuses from (
               select g.key as grp, s.key as status, sum(s.value::bigint) as n
               from (select * from jsonb_each(c.by_group) union all select * from jsonb_each(${JSON.stringify(add.byGroup)}::jsonb)) g,
                    jsonb_each_text(g.value) s
               group by 1, 2) per_status
             group by grp) per_group)`;
  const failures = add.failures.length === 0
    ? sql`c.failures`
    : sql`case when jsonb_array_length(c.failures) >= ${maxFailures}::int then c.failures
            else (select jsonb_agg(f order by i) from jsonb_array_elements(c.failures || ${JSON.stringify(add.failures)}::jsonb) with ordinality x(f, i)
                  where i <= ${maxFailures}::int) end`;
  return sql`planned = c.planned + ${add.planned}::int, done = c.done + ${add.done}::int, failed = c.failed + ${add.failed}::int,
             deduplicated = c.deduplicated + ${add.deduplicated}::int, rows = c.rows + ${add.rows}::bigint,
             by_group = ${groups}, failures = ${failures}`;
}

export async function runPending(db: Db, run: LedgerRun): Promise<number> {
  const [row] = await execute<{ pending: number }>(db, sql`select pending from sync.run_counts where ${isRun(run)}`);
  return row?.pending ?? 0;
}

/** Whether the job was entered in the run and has not settled (false once the run's rows are gone). */
export async function isRunJobPending(db: Db, run: LedgerRun, jobId: string): Promise<boolean> {
  const [row] = await execute<{ settled: boolean }>(db, sql`select settled from sync.run_jobs where ${isRun(run)} and job_id = ${jobId}`);
  return row !== undefined && !row.settled;
}

/** The run's counts; undefined for a run the ledger has no rows of. */
export async function readRunCounts(db: Db, run: LedgerRun): Promise<RunCounts | undefined> {
  const [row] = await execute<{ planned: number; done: number; failed: number; deduplicated: number; rows: string | number; by_group: RunCounts['byGroup']; failures: unknown[] }>(
    db,
    sql`select planned, done, failed, deduplicated, rows, by_group, failures from sync.run_counts where ${isRun(run)}`,
  );
  if (!row) return undefined;
  const { by_group: byGroup, rows, ...counts } = row;
  return { ...counts, rows: Number(rows), byGroup };
}

/** The run's rows go `ms` from now (at the next removal after that). */
export async function expireRun(db: Db, run: LedgerRun, ms: number): Promise<void> {
  await execute(db, sql`update sync.run_counts set expires_at = ${expiry(ms)} where ${isRun(run)}`);
}

/** Removes every deployment's runs past their time: their jobs first (the order settles take), then their counts. */
export async function removeExpiredRuns(db: Db): Promise<void> {
  await execute(
    db,
    sql`delete from sync.run_jobs j using sync.run_counts c
        where c.expires_at < ${SERVER_CLOCK} and j.queue_prefix = c.queue_prefix and j.run_id = c.run_id`,
  );
  // A run that entered a job since has a later time again, and stays.
  await execute(db, sql`delete from sync.run_counts where expires_at < ${SERVER_CLOCK}`);
}

function isRun(run: LedgerRun, alias: SQL = sql``): SQL {
  return sql`${alias}queue_prefix = ${run.prefix} and ${alias}run_id = ${run.runId}`;
}

// Tried again after a dropped connection (withReconnect): an entry or settle that had committed
// finds its job counted and counts nothing twice; addToRun may count twice, as a retried job would.
async function execute<T>(db: Db, statement: SQL): Promise<T[]> {
  return withReconnect(async () => rowsOf<T>(await db.execute(statement)));
}
