// One `tesync sync` per source at a time, on every machine that writes one warehouse: the
// warehouse holds the lock. A Postgres advisory lock per source, taken at session level on a
// connection of the sync's own (Warehouse.session, outside the pool), held for the whole run.
//
// - A process that dies (SIGKILL, OOM, a crash) loses its connection, and Postgres releases the
//   lock with the session: only its run is left `running`, for the next sync that holds its
//   sources to close (closeAbandoned, runs.ts). A machine that vanishes is noticed by
//   the server's TCP keepalives, set short on this session (about a minute instead of hours).
// - A lock is lost when its connection drops (a Postgres restart, a network cut, an
//   administrator's pg_terminate_backend): postgres.js would reconnect as a new session that
//   holds nothing. The holder notices (the connection's close, and a check every few seconds
//   of its backend pid and of pg_locks), takes the lock again when it is still free and goes
//   on; when another sync took it meanwhile, `lost` aborts and the caller stops.
// - The session's application_name carries the run id, so whoever finds a source busy can say
//   which run holds it (pg_locks → pg_stat_activity → sync.runs).
import { sql } from 'drizzle-orm';
import { setTimeout as sleep } from 'node:timers/promises';
import type postgres from 'postgres';
import type { Logger } from '../../lib/logger.ts';
import type { Warehouse } from '../connection.ts';

/** pg_advisory_lock(int4, int4): this namespace, then the source's number. */
export const SYNC_LOCK_NAMESPACE = 0x7e5c_5101;
export const SOURCE_LOCK_IDS: Readonly<Record<string, number>> = { app: 1, gateway: 2 };

const APPLICATION_PREFIX = 'tesync sync ';
const HEARTBEAT_MS = 5000;
const POLL_MS = 1000;

/** Who holds a source's lock, as far as the warehouse tells. */
export interface LockHolder {
  source: string;
  runId?: string;
  startedAt?: Date;
  host?: string;
  pid?: number;
}

export interface SourceLocks {
  /** The sources whose locks this process holds, in the order asked. */
  readonly held: readonly string[];
  /** The sources another sync holds (never waited for: `wait` was false). */
  readonly busy: readonly LockHolder[];
  /** Aborts (reason: LockLostError) when a held lock was lost and another sync has it now. */
  readonly lost: AbortSignal;
  /** Releases every lock and closes the session; safe to call more than once. */
  release(): Promise<void>;
}

export class LockLostError extends Error {
  override readonly name = 'LockLostError';
  constructor(readonly holders: LockHolder[]) {
    super(`lost the warehouse lock of ${holders.map((h) => h.source).join(', ')} to another tesync sync${holders[0]?.runId ? ` (run ${holders[0].runId})` : ''}`);
  }
}

export interface LockOptions {
  /** The run the locks are for: in the session's application_name. */
  runId: string;
  logger: Logger;
  /** Wait until every source is free instead of leaving the busy ones. */
  wait?: boolean;
  /** Called once, when `wait` is set and some source is busy. */
  onWait?: (holders: LockHolder[]) => void;
  /** Stops a wait (an interrupt): the locks taken so far are released and the reason thrown. */
  signal?: AbortSignal;
  /** Tests: shorter checks. */
  heartbeatMs?: number;
  pollMs?: number;
}

/** Pure: the run id in a lock session's application_name. */
export function runIdOfSession(applicationName: string | null | undefined): string | undefined {
  if (!applicationName?.startsWith(APPLICATION_PREFIX)) return undefined;
  const id = applicationName.slice(APPLICATION_PREFIX.length).trim();
  return id || undefined;
}

/**
 * Takes the locks of `sources` that are free (with `wait`: all of them, waiting as long as it
 * takes). Sources without a lock id (none today) are held trivially.
 */
export async function lockSources(warehouse: Warehouse, sources: readonly string[], options: LockOptions): Promise<SourceLocks> {
  const lostController = new AbortController();
  let closed = false;
  let checking: Promise<void> | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  const session = warehouse.session({
    name: `${APPLICATION_PREFIX}${options.runId}`,
    onClose: () => {
      if (closed) return;
      // Look at once: the next statement opens a new session, without our locks.
      setImmediate(() => void check());
    },
  });
  const ids = sources.map((s) => ({ source: s, id: SOURCE_LOCK_IDS[s] })).filter((x): x is { source: string; id: number } => x.id !== undefined);
  let basePid: number | undefined;
  let held = new Set<number>();

  const release = async () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    await checking?.catch(() => {});
    await session`select pg_advisory_unlock_all()`.catch(() => {});
    await session.end({ timeout: 2 }).catch(() => {});
  };

  const verify = async (): Promise<void> => {
    if (closed || lostController.signal.aborted || basePid === undefined) return;
    try {
      const state = await sessionState(session);
      const missing = ids.filter((x) => held.has(x.id) && !(state.pid === basePid && state.held.has(x.id)));
      if (missing.length === 0) return;
      // A new session: take the locks again, unless another sync got there first.
      await keepAlive(session);
      const taken = await tryLocks(session, missing.map((x) => x.id));
      const after = await sessionState(session);
      const gone = missing.filter((x) => !taken.has(x.id) || !after.held.has(x.id));
      if (gone.length === 0) {
        basePid = after.pid;
        options.logger.warn({ sources: missing.map((x) => x.source) }, 'the warehouse connection holding the sync lock dropped; the lock was still free and is held again');
        return;
      }
      const holders = await lockHolders(warehouse, session, gone);
      clearInterval(heartbeat);
      lostController.abort(new LockLostError(holders));
    } catch (err) {
      // The warehouse is away (restarting): the walk's own writes wait for it too. Look again.
      options.logger.warn({ err }, 'could not check the sync lock; trying again');
    }
  };
  const check = (): Promise<void> => (checking ??= verify().finally(() => (checking = undefined)));

  try {
    await keepAlive(session);
    let waited = false;
    for (;;) {
      const state = await sessionState(session);
      held = state.held;
      const want = ids.filter((x) => !held.has(x.id)).map((x) => x.id);
      for (const id of await tryLocks(session, want)) held.add(id);
      const confirmed = await sessionState(session);
      held = new Set([...held].filter((id) => confirmed.held.has(id)));
      const busyIds = ids.filter((x) => !held.has(x.id));
      if (busyIds.length === 0 || !options.wait) {
        const busy = busyIds.length > 0 ? await lockHolders(warehouse, session, busyIds) : [];
        const heldSources = sources.filter((s) => SOURCE_LOCK_IDS[s] === undefined || held.has(SOURCE_LOCK_IDS[s]!));
        if (heldSources.length === 0) {
          await release();
        } else {
          // From here on a dropped connection is a lost lock (verify); before, the loop looks.
          basePid = confirmed.pid;
          heartbeat = setInterval(() => void check(), options.heartbeatMs ?? HEARTBEAT_MS).unref();
        }
        return { held: heldSources, busy, lost: lostController.signal, release };
      }
      if (!waited) {
        waited = true;
        options.onWait?.(await lockHolders(warehouse, session, busyIds));
      }
      options.signal?.throwIfAborted();
      await sleep(options.pollMs ?? POLL_MS, undefined, options.signal ? { signal: options.signal } : {}).catch(() => options.signal?.throwIfAborted());
    }
  } catch (err) {
    await release();
    throw err;
  }
}

async function sessionState(session: postgres.Sql): Promise<{ pid: number; held: Set<number> }> {
  const [row] = await session<{ pid: number; held: number[] }[]>`
    select pg_backend_pid() as pid,
           array(select objid::bigint::int from pg_locks
                  where locktype = 'advisory' and pid = pg_backend_pid() and granted
                    and classid::bigint = ${SYNC_LOCK_NAMESPACE} and objsubid = 2) as held`;
  return { pid: row!.pid, held: new Set((row!.held ?? []).map(Number)) };
}

async function tryLocks(session: postgres.Sql, ids: number[]): Promise<Set<number>> {
  const got = new Set<number>();
  for (const id of ids) {
    const [row] = await session<{ ok: boolean }[]>`select pg_try_advisory_lock(${SYNC_LOCK_NAMESPACE}::int, ${id}::int) as ok`;
    if (row?.ok) got.add(id);
  }
  return got;
}

/** Server-side keepalives: a holder whose machine vanished frees its lock in about a minute. */
async function keepAlive(session: postgres.Sql): Promise<void> {
  try {
    await session`select set_config('tcp_keepalives_idle', '30', false), set_config('tcp_keepalives_interval', '10', false), set_config('tcp_keepalives_count', '3', false)`;
  } catch {
    // Not every server lets a session change them (poolers); the lock works without.
  }
}

// A holder takes its locks, then records its run: a moment (longer on a busy machine) in
// which the lock names a run not yet written.
const RUN_ROW_TRIES = 15;
const RUN_ROW_WAIT_MS = 200;

/** The rows of these runs, waiting a little for those their holders are about to record. */
async function runRows(warehouse: Warehouse, runIds: readonly string[]) {
  type RunRow = { id: string; started_at: string | Date; owner: { host?: unknown; pid?: unknown } | null };
  const byRun = new Map<string, RunRow>();
  for (let attempt = 1; runIds.length > 0; attempt++) {
    const rows = await warehouse.query<RunRow>(sql`select id::text, started_at, options->'owner' as owner from sync.runs where id::text in (${sql.join(runIds.map((r) => sql`${r}`), sql`, `)})`);
    for (const r of rows) byRun.set(r.id, r);
    if (byRun.size === runIds.length || attempt >= RUN_ROW_TRIES) break;
    await new Promise((resolve) => setTimeout(resolve, RUN_ROW_WAIT_MS));
  }
  return byRun;
}

/** Who holds the locks of these sources: the session's run id, then that run's row. */
async function lockHolders(warehouse: Warehouse, session: postgres.Sql, ids: { source: string; id: number }[]): Promise<LockHolder[]> {
  const rows = await session<{ id: number; name: string | null }[]>`
    select l.objid::bigint::int as id, a.application_name as name
      from pg_locks l left join pg_stat_activity a on a.pid = l.pid
     where l.locktype = 'advisory' and l.granted and l.classid::bigint = ${SYNC_LOCK_NAMESPACE} and l.objsubid = 2
       and l.pid <> pg_backend_pid()
       -- advisory locks are per database: a sync of another warehouse on this server holds nothing here
       and l.database = (select oid from pg_database where datname = current_database())`;
  const runOf = new Map(rows.map((r) => [Number(r.id), runIdOfSession(r.name)]));
  const runIds = [...new Set([...runOf.values()].filter((r): r is string => r !== undefined))];
  const byRun = await runRows(warehouse, runIds);
  return ids.map(({ source, id }) => {
    const runId = runOf.get(id);
    const run = runId ? byRun.get(runId) : undefined;
    const holder: LockHolder = { source };
    if (runId) holder.runId = runId;
    if (run) {
      holder.startedAt = new Date(run.started_at);
      if (typeof run.owner?.host === 'string') holder.host = run.owner.host;
      if (Number.isInteger(run.owner?.pid)) holder.pid = Number(run.owner!.pid);
    }
    return holder;
  });
}

/** Pure: who walks the busy sources, one phrase per run: `another tesync sync is walking app (run …, started …, pid … on …)`. */
export function describeHolders(holders: readonly LockHolder[]): string {
  const byRun = new Map<string, LockHolder[]>();
  for (const h of holders) {
    const key = h.runId ?? '';
    byRun.set(key, [...(byRun.get(key) ?? []), h]);
  }
  return [...byRun.values()]
    .map((hs) => {
      const h = hs[0]!;
      const what = andList(hs.map((x) => x.source));
      const details = [
        h.startedAt ? `started ${h.startedAt.toISOString().slice(0, 19).replace('T', ' ')} UTC` : undefined,
        h.pid !== undefined ? `pid ${h.pid}${h.host ? ` on ${h.host}` : ''}` : undefined,
      ].filter(Boolean);
      const run = h.runId ? `run ${h.runId}${details.length ? `, ${details.join(', ')}` : ''}` : 'just starting';
      return `another tesync sync is walking ${what} (${run})`;
    })
    .join('; ');
}

function andList(xs: string[]): string {
  return xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`;
}
