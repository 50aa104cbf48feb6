// `tesync replay`: a warehouse written again from its archive alone. The bodies, the runs and the
// binding are copied over as they are (copy.ts); then every recorded try, in the order the
// warehouse knew it (timeline.ts), runs through the one job lifecycle, its readers and its one
// write path, with an upstream that answers from the archive (archive-upstream.ts), each write
// at the known time its record kept, and a try that refused its bodies at the instant they were
// received, so that a reader that understands them now writes their rows then. At each run's
// end the daily archives are filled through it, as the run did. No request is sent.
import type { Logger } from '../lib/logger.ts';
import { bodyKey, type RawBody } from '../ports/recorder.ts';
import { resolveJob, runJob } from '../engine/job/lifecycle.ts';
import type { JobDefinition, RunContext, SyncSettings } from '../engine/kit/types.ts';
import type { Warehouse } from '../store/connection.ts';
import { fillDailyArchives } from '../store/write/daily-archive.ts';
import { ArchiveUpstream } from './archive-upstream.ts';
import { copyArchive, holdsData } from './copy.ts';
import { countUnreplayable, forEachEvent, loadBodies, type Unreplayable, type WriteEvent } from './timeline.ts';

export interface ReplayOptions {
  source: Warehouse;
  /** A migrated warehouse holding nothing yet. */
  target: Warehouse;
  /** The jobs, with today's readers: what a replay reads the bodies with. */
  catalog: ReadonlyMap<string, JobDefinition<any>>;
  /**
   * A run's settings from this configuration, given whether the run was `--full`: for a run
   * that recorded none (before runs did); one that did is read with its own.
   */
  settings: (full: boolean) => SyncSettings;
  logger: Logger;
  /** Called every so many events and at the end, with the events done. */
  onProgress?: (events: number) => void;
  /**
   * Tries repeated at once (default 4), as a sync runs its jobs side by side: only consecutive
   * tries of one job, each of a resource of its own (one token's history, one chart), which
   * write their own keys and read only what their own resource and the lists before them hold.
   */
  concurrency?: number;
}

/** A try that did not come out as its record says, for a person to look at. */
export interface Mismatch {
  record: number;
  resource: string;
  how: WriteEvent['how'];
  status: string;
  why: string;
}

export interface ReplayReport {
  /** Bodies and runs taken over. */
  bodies: number;
  /** Writes repeated: read from bodies, and written from what was stored (a marker's skip, a 304). */
  writes: { read: number; unchanged: number; confirmed: number };
  /** Tries that refused their bodies, read again: refused again, or written now by today's reader. */
  refused: { again: number; nowWritten: number };
  runEnds: number;
  /** Writes of runs that recorded no settings: read with this configuration's. */
  settingsAssumed: number;
  /** What could not be repeated, with its count. */
  unreplayable: Unreplayable & {
    /** Records whose job no catalog entry has any more. */
    unknownJobs: number;
    /** Requests of a repeated try that no archived body answered, and the first few. */
    gaps: number;
    firstGaps: string[];
    /** Writes that did not write again (failed, refused now, superseded), the first few named. */
    notWritten: number;
    firstNotWritten: Mismatch[];
  };
  durationMs: number;
}

/** The target already holds a warehouse: a replay writes into an empty one only. */
export class ReplayTargetNotEmpty extends Error {
  override readonly name = 'ReplayTargetNotEmpty';
  constructor(readonly table: string) {
    super(`the database to replay into holds ${table} already: replay into an empty (or freshly migrated) database`);
  }
}

const NAMED = 5;
const PROGRESS_EVERY = 100;
const NO_RUN = '00000000-0000-0000-0000-000000000000';

/** Replays `source`'s archive into `target`. Throws ReplayTargetNotEmpty before writing anything into one that is not empty. */
export async function replayArchive(o: ReplayOptions): Promise<ReplayReport> {
  const started = Date.now();
  const held = await holdsData(o.target);
  if (held) throw new ReplayTargetNotEmpty(held);
  const counted = await countUnreplayable(o.source);
  const report: ReplayReport = {
    bodies: await copyArchive(o.source, o.target),
    writes: { read: 0, unchanged: 0, confirmed: 0 },
    refused: { again: 0, nowWritten: 0 },
    runEnds: 0,
    settingsAssumed: 0,
    unreplayable: { ...counted, unknownJobs: 0, gaps: 0, firstGaps: [], notWritten: 0, firstNotWritten: [] },
    durationMs: 0,
  };
  const u = report.unreplayable;
  // The jobs say again what they said when they ran (a contract changed, a timeframe mirrored):
  // only their errors, unless a person asked for their debugging lines.
  const jobLogger = ['debug', 'trace'].includes(o.logger.level) ? o.logger : o.logger.child({}, { level: 'error' });
  let events = 0;
  const done = (n: number) => {
    const before = Math.floor(events / PROGRESS_EVERY);
    events += n;
    if (Math.floor(events / PROGRESS_EVERY) > before) o.onProgress?.(events);
  };
  let batch: WriteEvent[] = [];
  const k = Math.max(1, o.concurrency ?? 4);
  const flush = async () => {
    const tries = batch;
    batch = [];
    await inTurns(tries, k, (e) => replayTry({ ...o, jobLogger }, e, report));
    done(tries.length);
  };
  const session = o.source.session({ name: 'tesync replay (records)' });
  try {
    await forEachEvent(session, async (e) => {
      if (e.kind === 'write' && joins(batch, e)) {
        batch.push(e);
        return;
      }
      await flush();
      if (e.kind === 'write') {
        batch.push(e);
        return;
      }
      await fillDailyArchives(o.target.db, e.knownAt);
      report.runEnds++;
      done(1);
    });
    await flush();
  } finally {
    await session.end({ timeout: 5 });
  }
  o.onProgress?.(events);
  u.firstGaps = u.firstGaps.slice(0, NAMED);
  report.durationMs = Date.now() - started;
  return report;
}

/** The most tries a batch holds: its events only wait their turn. */
const BATCH = 64;

/** Pure: whether `e` may run beside `batch`: the same job, a resource none of them writes. */
function joins(batch: readonly WriteEvent[], e: WriteEvent): boolean {
  return batch.length > 0 && batch.length < BATCH && batch[0]!.job === e.job && batch.every((b) => b.resource !== e.resource || b.source !== e.source);
}

/** `fn` over `items`, `k` at a time, each started in order. */
async function inTurns<T>(items: readonly T[], k: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(k, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

/** One recorded try, run again through the lifecycle at its known time. */
async function replayTry(o: ReplayOptions & { jobLogger: Logger }, e: WriteEvent, report: ReplayReport): Promise<void> {
  const u = report.unreplayable;
  const resolved = resolveJob(o.catalog, { name: e.job, payload: e.payload });
  if ('error' in resolved) {
    u.unknownJobs++;
    return;
  }
  if (e.settings === null) report.settingsAssumed++;
  const bodies = await loadBodies(o.source, e.bodies);
  const upstream = new ArchiveUpstream(bodies);
  // The bodies keep their ids in the target (copy.ts): a row links to the one its original did.
  const ids = new Map(bodies.map((b) => [bodyKey(b), b.id]));
  const rawResponseIds = async (_source: string, asked: readonly RawBody[]) => new Map(asked.flatMap((b) => (ids.has(bodyKey(b)) ? [[bodyKey(b), ids.get(bodyKey(b))!] as const] : [])));
  const at = new Date(e.knownAt);
  const run: RunContext = {
    warehouse: o.target,
    upstream,
    recorder: { rawResponseIds },
    logger: o.jobLogger.child({ replayed: e.id, resource: e.resource }),
    now: () => at,
    runId: e.runId ?? NO_RUN,
    // The run's own, over this configuration's: a setting added since it ran has today's value.
    settings: { ...o.settings(e.full), ...(e.settings ?? {}) } as SyncSettings,
    replaying: { knownAt: e.knownAt, at, how: e.how },
  };
  // Its one try, the last: a failure is recorded, never thrown for another.
  const settled = await runJob(resolved, run, { last: true });
  if (upstream.gaps.length > 0) {
    u.gaps += upstream.gaps.length;
    if (u.firstGaps.length < NAMED) u.firstGaps.push(...upstream.gaps.map((g) => `${e.source} ${g}`));
  }
  const wrote = settled.failure === undefined && settled.status !== 'invalid' && settled.status !== 'superseded' && settled.status !== 'not_found';
  if (e.how === 'refused') {
    if (wrote) report.refused.nowWritten++;
    else report.refused.again++;
    return;
  }
  if (wrote) {
    report.writes[e.how]++;
    return;
  }
  u.notWritten++;
  if (u.firstNotWritten.length < NAMED) u.firstNotWritten.push({ record: e.id, resource: `${e.source} ${e.resource}`, how: e.how, status: settled.status, why: settled.failure?.message ?? settled.status });
}
