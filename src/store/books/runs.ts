// sync.runs: one row per walk, from start to its final status. Every statement on it that a
// run, a runner or a command makes is here (what commands and pages show: src/store/read/).
import { hostname } from 'node:os';
import { and, eq, inArray, ne, sql, type SQL } from 'drizzle-orm';
import { WarehouseError } from '../../lib/errors.ts';
import { errorLine, recordable, RECORD_CHARS, recordableJson } from '../../lib/recordable.ts';
import { runs } from '../../schema/warehouse/sync.ts';
import type { Db } from '../connection.ts';
import { fillDailyArchives } from '../write/daily-archive.ts';
import { SERVER_CLOCK } from '../warehouse-clock.ts';
import { applyRetention, type Housekeeping } from './retention.ts';
import { withReconnect } from '../../lib/reconnect.ts';

export type RunStatus = 'running' | 'succeeded' | 'partial' | 'failed' | 'interrupted';

// A run's times are the server's clock, as every time in the warehouse (SERVER_CLOCK). An
// interrupted run keeps `options.interrupted` = { signal, at } from the moment the signal came.

export async function startRun(db: Db, run: { id: string; trigger: string; sources: string[]; options?: unknown }): Promise<void> {
  await withReconnect(() => db.insert(runs).values({
    id: run.id,
    trigger: run.trigger,
    sources: run.sources,
    options: run.options ?? {},
    startedAt: SERVER_CLOCK,
    status: 'running',
  }));
}

/** The most characters of why a close failed, in the record and the error that say so. */
const WHY_CHARS = 200;

/**
 * Ends a run: the daily archives filled through its day (whatever its status), then its row;
 * then, with `housekeeping`, sync.requests past its retention removed (retention.ts: cheap
 * when there is nothing to remove, bounded when there is much; never fails the run).
 *
 * A run is never left `running` by the process that ends it: its error and stats are made
 * recordable first (no U+0000 or unpaired surrogate, each text at most RECORD_CHARS), and
 * when its row still cannot be written (stats that cannot be serialised, the statement
 * refused) it is closed again with the least record (its status, its end and why, no stats:
 * every value one Postgres takes, so only a warehouse out of reach keeps it from being
 * written), and only then does this throw, a WarehouseError saying so. Daily archives that
 * could not be filled do not keep the row from being written: its error says so, and that
 * failure is thrown after it.
 */
export async function finishRun(db: Db, id: string, end: { status: RunStatus; stats: unknown; error?: string }, housekeeping?: Housekeeping): Promise<void> {
  let archives: unknown;
  await withReconnect(() => fillDailyArchives(db)).catch((err: unknown) => {
    archives = err;
  });
  const notFilled = archives === undefined ? undefined : `the daily archives were not filled (${errorLine(archives)})`;
  const said = [end.error, notFilled].filter((e) => e !== undefined);
  try {
    const stats = recordableJson(end.stats, RECORD_CHARS) ?? {};
    const error = said.length === 0 ? null : recordable(said.join('; '), RECORD_CHARS);
    await closeRuns(db, eq(runs.id, id), { status: end.status, stats, error });
  } catch (err) {
    const why = recordable(errorLine(err), WHY_CHARS);
    try {
      const error = recordable([`the first close failed (${why}): closed without its stats`, ...said].join('; '), RECORD_CHARS);
      await closeRuns(db, eq(runs.id, id), { status: end.status, stats: {}, error });
    } catch (again) {
      throw new WarehouseError(recordable(`could not close run ${id} (${why}), nor without its stats (${recordable(errorLine(again), WHY_CHARS)}): it stays running until found abandoned`, RECORD_CHARS), { cause: err });
    }
    throw new WarehouseError(recordable(`could not record the end of run ${id} (${why}): closed ${end.status} without its stats`, RECORD_CHARS), { cause: err });
  }
  if (notFilled !== undefined) throw new WarehouseError(recordable(`run ${id} closed ${end.status}, but ${notFilled}: the next run fills them`, RECORD_CHARS), { cause: archives });
  if (housekeeping) await applyRetention(db, housekeeping);
}

/**
 * How a run is closed: with its record (`stats` and `error` recordable already), or abandoned:
 * `failed` with why, or `interrupted` when its interrupt was recorded (its process quit
 * before closing it), its stats left as they are.
 */
type Closing = { status: RunStatus; stats: unknown; error: string | null } | { abandoned: string };

/**
 * The one statement that closes runs, every close of every run: the runs `which` selects get
 * their status, record and end (on the server's clock; an interrupted run's at its signal).
 * Returns the ids it closed.
 */
async function closeRuns(db: Db, which: SQL, closing: Closing): Promise<string[]> {
  const recorded = sql`${runs.options} ? 'interrupted'`;
  const status = 'abandoned' in closing ? sql`case when ${recorded} then 'interrupted' else 'failed' end` : sql`${closing.status}::text`;
  const error =
    'abandoned' in closing
      ? sql`case when ${recorded} then 'interrupted by ' || (${runs.options}->'interrupted'->>'signal') || '; its process quit before closing the run' else ${recordable(closing.abandoned, RECORD_CHARS)}::text end`
      : closing.error;
  const closed = await withReconnect(() =>
    db
      .update(runs)
      .set({
        status,
        ...('abandoned' in closing ? {} : { stats: closing.stats }),
        error,
        // An interrupted run ends when its signal came (recorded by markInterrupted), not when
        // the writes in flight were done, nor when a later command found it.
        finishedAt: sql`case when ${status} = 'interrupted' then coalesce((${runs.options}->'interrupted'->>'at')::timestamptz, ${SERVER_CLOCK}) else ${SERVER_CLOCK} end`,
      })
      .where(which)
      .returning({ id: runs.id }),
  );
  return closed.map((r) => r.id);
}

/**
 * Records in a running run that a signal came, at the server's time: the moment its command
 * stops, kept even when the process is killed before it can close the run.
 */
export async function markInterrupted(db: Db, id: string, signal: string): Promise<void> {
  await db
    .update(runs)
    .set({ options: sql`${runs.options} || jsonb_build_object('interrupted', jsonb_build_object('signal', ${signal}::text, 'at', ${SERVER_CLOCK}))` })
    .where(and(eq(runs.id, id), eq(runs.status, 'running')));
}

/** Who runs a walk: lets a later run on the same machine tell a killed run from a live one. */
export function runOwner(): { host: string; pid: number } {
  return { host: hostname(), pid: process.pid };
}

/** A run's status; undefined when sync.runs has no such run (not begun yet). */
export async function runStatusOf(db: Db, id: string): Promise<RunStatus | undefined> {
  const [row] = await db.select({ status: runs.status }).from(runs).where(eq(runs.id, id));
  return row?.status as RunStatus | undefined;
}

/** How long a recorded run took, both ends on the server's clock; 0 while it runs. */
export async function runDurationMs(db: Db, id: string): Promise<number> {
  const [row] = await db.select({ ms: sql<number>`(extract(epoch from ${runs.finishedAt} - ${runs.startedAt}) * 1000)::float8` }).from(runs).where(eq(runs.id, id));
  return Math.round(row?.ms ?? 0);
}

/** The runs of a worker schedule still `running`, other than `except`. */
export async function runningRunsOfSchedule(db: Db, schedule: string, except: string): Promise<string[]> {
  const rows = await db
    .select({ id: runs.id })
    .from(runs)
    .where(and(eq(runs.status, 'running'), sql`${runs.options}->>'schedule' = ${schedule}`, ne(runs.id, except)));
  return rows.map((r) => r.id);
}

/** A run workers started, with its walk (or export) job. */
export interface WorkerRun {
  id: string;
  job: string | null;
}

/**
 * Which `running` runs nobody will finish, by who started them (the one difference between the
 * commands that look for them):
 * - `syncs`: the runs of `tesync sync` and `demo`. Their process holds the locks of their sources
 *   until it records them (source-lock.ts), so a run whose every source's lock the caller holds
 *   (`heldSources`) has lost its process, on whatever machine it was started; and a run started
 *   on this machine by a process that no longer exists (killed, crashed) is lost whatever locks
 *   the caller holds.
 * - `workers`: the runs of the workers of one queue prefix and backend, whose work the queues no
 *   longer hold: `lost` judges each from the queues; without it, every one is (their queues were
 *   removed: `tesync reset`).
 */
export type AbandonPolicy =
  | { of: 'syncs'; heldSources?: readonly string[] }
  | { of: 'workers'; prefix: string; backend: string; lost?: (run: WorkerRun) => Promise<boolean> };

export const LOST_RUN_ERROR = 'abandoned: no job of it is left in the queues (removed by tesync reset, or Redis restarted empty)';
const FREE_LOCK_ERROR = 'abandoned: its process ended before the run finished (the lock of its sources was free)';
/** The triggers of runs walked under the source locks: `tesync sync` and `tesync demo`. */
const LOCKED_TRIGGERS = ['cli', 'demo'];

/**
 * Closes the runs the policy finds abandoned: `failed` now, or `interrupted` at its signal's
 * time when one was recorded (abandonRuns). Returns the ids of those it closed.
 */
export async function closeAbandoned(db: Db, policy: AbandonPolicy): Promise<string[]> {
  if (policy.of === 'workers') {
    const closed: string[] = [];
    for (const run of await withReconnect(() => runningRunsOfWorkers(db, policy.prefix, policy.backend))) {
      if (policy.lost && !(await policy.lost(run))) continue;
      if (await abandonRun(db, run.id, LOST_RUN_ERROR)) closed.push(run.id);
    }
    return closed;
  }
  const held = policy.heldSources ?? [];
  const freed = held.length === 0 ? [] : await abandonRuns(db, ofSourcesHeld(held), FREE_LOCK_ERROR);
  return [...freed, ...(await closeRunsOfEndedProcesses(db))];
}

/** The `tesync sync` and `demo` runs whose every source is among `held`. */
function ofSourcesHeld(held: readonly string[]): SQL {
  const sources = sql`array[${sql.join(held.map((s) => sql`${s}`), sql`, `)}]::text[]`;
  return and(inArray(runs.trigger, LOCKED_TRIGGERS), sql`cardinality(${runs.sources}) > 0`, sql`${runs.sources} <@ ${sources}`)!;
}

/** The runs still `running` that workers of this prefix and backend started (runs recorded before the backend was: Redis's). */
function runningRunsOfWorkers(db: Db, prefix: string, backend: string): Promise<WorkerRun[]> {
  return db
    .select({ id: runs.id, job: sql<string | null>`${runs.options}->>'job'` })
    .from(runs)
    .where(and(eq(runs.status, 'running'), sql`${runs.options}->>'queuePrefix' = ${prefix}`, sql`coalesce(${runs.options}->>'queueBackend', 'redis') = ${backend}`));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, it is just not ours.
    return (err as { code?: string }).code === 'EPERM';
  }
}

/** The runs still `running` that were started on this machine by a process that no longer exists. */
async function closeRunsOfEndedProcesses(db: Db): Promise<string[]> {
  const { host } = runOwner();
  const open = await withReconnect(() =>
    db
      .select({ id: runs.id, options: runs.options })
      .from(runs)
      .where(and(eq(runs.status, 'running'), sql`${runs.options}->'owner'->>'host' = ${host}`)),
  );
  const closed: string[] = [];
  for (const r of open) {
    const pid = Number((r.options as { owner?: { pid?: unknown } }).owner?.pid);
    if (!Number.isInteger(pid) || alive(pid)) continue;
    if (await abandonRun(db, r.id, `abandoned: process ${pid} on ${host} ended before the run finished`)) closed.push(r.id);
  }
  return closed;
}

/**
 * Closes runs nobody will finish, unless they were recorded meanwhile: `failed` with why, now;
 * or, when their interrupt was recorded, `interrupted` at the signal's time. The ids closed.
 */
function abandonRuns(db: Db, where: SQL, error: string): Promise<string[]> {
  return closeRuns(db, and(eq(runs.status, 'running'), where)!, { abandoned: error });
}

/** abandonRuns for one run: true when it was still running. */
async function abandonRun(db: Db, id: string, error: string): Promise<boolean> {
  return (await abandonRuns(db, eq(runs.id, id), error)).length > 0;
}
