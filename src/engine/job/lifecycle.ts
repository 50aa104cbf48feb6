// The one lifecycle of a job, under either runner (src/runners/in-process.ts, the BullMQ
// worker): name the resource, skip it while its marker says nothing changed, run its reader,
// write what it found (rows and resource state in one transaction), and record a failure as
// data. The runners only decide when a job runs and how often it may be tried.
import { and, eq, inArray } from 'drizzle-orm';
import { resourceState } from '../../schema/warehouse/sync.ts';
import { judgeFailure, type Failure } from '../../lib/failure.ts';
import { ROUTES, type Bucket } from '../../upstream/routes.ts';
import { recordFieldDrift } from '../../store/books/field-drift.ts';
import { keepInvalidBody } from '../../store/books/request-log.ts';
import { forgetNotFound, newerReceived, readState, retireUnplanned, unchangedStatus, writeFailure, writeSuccess, writeUnchanged, type ResourceStateRow } from '../../store/books/resource-state.ts';
import { beginWrite, closingBody } from '../../store/write/known-time.ts';
import { WarehouseClock } from '../../store/warehouse-clock.ts';
import { withReconnect } from '../../lib/reconnect.ts';
import { removeAbsent, removeKeys, SET_KEPT_WHILE } from '../../store/write/set-removal.ts';
import type { Executor } from '../../store/write/table-shape.ts';
import { markerUnchanged, vouched } from './change.ts';
import { invalid } from '../fetch/fetch.ts';
import { inputOf, storedPlan } from './job-input.ts';
import { prepare, Reading, type Read, type Refused } from './reading.ts';
import { childrenOf, fanOut } from './fan-out.ts';
import { plannedFromStored, walksOnBelow } from './stored-list.ts';
import { ConditionalUpstream, NotModified } from './conditional.ts';
import { TryFindings } from '../fetch/findings.ts';
import { notFoundDetails, stillNotFound } from './not-found.ts';
import { partialNote } from './partial-note.ts';
import { recordWrite } from '../../store/books/write-record.ts';
import { bodiesUsed, recordUnwritten, writeRecord } from './write-record.ts';
import { describeRemovals, massRemovals, pendingRemovals, sameRemovals, type PendingRemoval } from './removals.ts';
import { keepRefused, refuse } from '../fetch/understood.ts';
import { isRecord } from '../../schema/upstream/values.ts';
import type { JobContext, JobDefinition, JobRequest, JobResult, Outcome, RunContext, TableWrite } from '../kit/types.ts';

/** A job request resolved against the catalog. */
export interface ResolvedJob {
  job: JobDefinition<any>;
  payload: unknown;
  resource: string;
  bucket: Bucket;
  /** The jobs that declare this one their parent (`plannedBy`), to follow it when it settles well. */
  children: JobDefinition<any>[];
  /** Per child's group, the groups of the jobs it plans in turn: retired with it (retireUnplanned). */
  childGroups: Record<string, string[]>;
}

/** Pure: the job a request names, its payload parsed, or why it cannot run. */
export function resolveJob(catalog: ReadonlyMap<string, JobDefinition<any>>, req: JobRequest): ResolvedJob | { error: string } {
  const job = catalog.get(req.name);
  if (!job) return { error: `unknown job ${req.name}` };
  const parsed = job.payload.safeParse(req.payload);
  if (!parsed.success) return { error: `payload invalid: ${parsed.error.issues[0]?.message ?? 'unreadable'}` };
  const children = childrenOf(catalog, job.name);
  const childGroups = Object.fromEntries(children.map((c) => [c.group, childrenOf(catalog, c.name).map((g) => g.group)]));
  return { job, payload: parsed.data, resource: job.resource(parsed.data), bucket: bucketOf(job), children, childGroups };
}

/** The upstream bucket a job's requests go to (its queue, its lane). */
export function bucketOf(job: Pick<JobDefinition<any>, 'route'>): Bucket {
  return ROUTES[job.route].bucket;
}

export interface JobTry {
  /** No try is left after this one: a failure is recorded whatever it is. */
  last: boolean;
  /** Errors the runner handles itself (a closed bucket in the worker, a shutdown). */
  passThrough?: (err: unknown) => boolean;
}

export interface Settled extends JobResult {
  followUps: JobRequest[];
  /** Set when the job failed (recorded in its state); absent for upstream's `not_found` answer. */
  failure?: Failure;
}

/**
 * Runs one job to its end. Throws only what the runner must handle: a failure worth another
 * try while tries are left, and what `passThrough` claims.
 */
export async function runJob(resolved: ResolvedJob, run: RunContext, jobTry: JobTry): Promise<Settled> {
  const ctx: JobContext = { ...run, findings: new TryFindings() };
  try {
    return await settleJob(resolved, ctx, jobTry);
  } finally {
    await keepFindings(ctx);
    await recordUnwritten(ctx, resolved);
  }
}

/**
 * What the try read, kept whatever became of it: the fields of each response understood (the
 * drift record) and every body refused, as `invalid`. Neither may fail the job.
 */
async function keepFindings(ctx: JobContext): Promise<void> {
  for (const s of ctx.findings.sightings) await recordFieldDrift(ctx.warehouse, ctx.logger, s);
  for (const b of ctx.findings.refused) await keepInvalidBody(ctx.warehouse, b).catch((err: unknown) => ctx.logger.error({ err }, 'could not keep the invalid body'));
}

async function settleJob(resolved: ResolvedJob, ctx: JobContext, jobTry: JobTry): Promise<Settled> {
  const { job, payload, resource } = resolved;
  const marker = job.marker?.(payload) ?? null;
  let state: ResourceStateRow | undefined;
  try {
    state = await readState(ctx.warehouse.db, { source: job.source, resource });
    // A replayed try goes the way its record says (types.ts `Replaying`), never by a marker.
    const replayed = ctx.replaying?.how;
    if (replayed === 'unchanged' || replayed === 'confirmed') return await settleUnchanged(ctx, resolved, state, replayed === 'confirmed' ? ctx.replaying!.at : null);
    if (!replayed && !ctx.settings.full && marker) {
      if (markerUnchanged(state, marker, ctx.now(), ctx.settings.markerMaxAgeMs) && (job.sameAsBefore?.(state!, payload, ctx.settings) ?? true)) {
        return await settleUnchanged(ctx, resolved, state, null);
      }
      if (stillNotFound(state, marker)) {
        ctx.logger.debug({ marker }, 'upstream said it does not exist at this marker; not asked again');
        return { status: 'not_found', rows: 0, followUps: [] };
      }
    }
    // The tag of the one response last written, sent as If-None-Match while the rows are as
    // that response left them (conditional.ts).
    const etag = !replayed && !ctx.settings.full && vouched(state) && (job.sameAsBefore?.(state!, payload, ctx.settings) ?? true) ? (state?.etag ?? undefined) : undefined;
    const upstream = new ConditionalUpstream(ctx.upstream, job.route, etag);
    const jobCtx: JobContext = { ...ctx, upstream };
    const reading = new Reading(jobCtx, job, await inputOf(ctx, payload, state, job.knows));
    let first: Read | Refused;
    try {
      first = await reading.next();
    } catch (err) {
      if (!(err instanceof NotModified)) throw err;
      return await settleUnchanged(ctx, resolved, state, await WarehouseClock.read(ctx.warehouse.db));
    }
    if ('error' in first) return await settleFailure(ctx, resolved, state, marker, jobTry, first.error);
    const committed = await commitOutcome(jobCtx, resolved, marker, first, reading, upstream.keptTag());
    if ('error' in committed) return await settleFailure(ctx, resolved, state, marker, jobTry, committed.error);
    if ('newer' in committed) return await settleSuperseded(ctx, resolved, committed.newer);
    const { rows, written, followUps } = committed;
    return { status: written.reported ?? committedStatus(written), rows, followUps };
  } catch (err) {
    return await settleFailure(ctx, resolved, state, marker, jobTry, err);
  }
}

/**
 * A job that failed: recorded in its state, as data. Thrown only what the runner must handle:
 * a failure worth another try while tries are left, and what `passThrough` claims. A list that
 * failed so may still plan its children from the list the warehouse holds (stored-list.ts).
 */
async function settleFailure(ctx: JobContext, resolved: ResolvedJob, state: ResourceStateRow | undefined, marker: string | null, jobTry: JobTry, err: unknown): Promise<Settled> {
  const { job, resource } = resolved;
  if (jobTry.passThrough?.(err)) throw err;
  const judged = judgeFailure(err);
  if (judged.retryable && !jobTry.last) throw err;
  const failure: Failure = { ...judged, bucket: judged.bucket ?? resolved.bucket };
  const details = failure.answered ? notFoundDetails(marker) : undefined;
  const fallback = walksOnBelow(failure) ? await plannedFromStored(ctx, resolved, state) : { followUps: [], from: null };
  if (fallback.from) failure.message = `${failure.message}; what it plans was planned from the list of ${fallback.from}`;
  await withReconnect(() => writeFailure(ctx.warehouse.db, { source: job.source, resource, kind: job.group, runId: ctx.runId, at: ctx.now(), failure, ...(details ? { details } : {}) })).catch(
    (e: unknown) => ctx.logger.error({ err: e }, 'could not record the failure'),
  );
  return { status: failure.status, rows: 0, followUps: fallback.followUps, ...(failure.answered ? {} : { failure }) };
}

/**
 * A job whose resource is as last written: its marker unchanged, or upstream's 304 to its
 * conditional request (received at `confirmedAt`), which counts as a successful fetch
 * (`last_success_at`). No row, version or set is touched but what `unchanged` still writes;
 * a list plans its children from what it stored and closes nothing.
 */
async function settleUnchanged(ctx: JobContext, resolved: ResolvedJob, state: ResourceStateRow | undefined, confirmedAt: Date | null): Promise<Settled> {
  const unchanged = await storedPlan(ctx, resolved.job, resolved.payload, state);
  const rows = await commitUnchanged(ctx, resolved, unchanged.writes ?? [], confirmedAt);
  if (typeof rows !== 'number' && 'error' in rows) throw rows.error;
  if (typeof rows !== 'number') return settleSuperseded(ctx, resolved, rows.newer);
  const { followUps } = fanOut(resolved.children, unchanged.items ? { items: unchanged.items } : undefined, ctx.settings);
  // Counted as recorded (a `not_materialized` still stands): the run says what status says.
  return { status: unchangedStatus(state?.status), rows, followUps };
}

/**
 * A response older than the one its resource's rows already hold (received earlier, its write
 * later): nothing of it is written, and the job is counted `superseded`. A list plans its
 * children from the newer list the warehouse holds.
 */
async function settleSuperseded(ctx: JobContext, resolved: ResolvedJob, newer: Date): Promise<Settled> {
  ctx.logger.info({ resource: resolved.resource, newer: newer.toISOString() }, 'a newer response of this resource is written: this one is superseded, nothing of it written');
  const state = await readState(ctx.warehouse.db, { source: resolved.job.source, resource: resolved.resource });
  const unchanged = await storedPlan(ctx, resolved.job, resolved.payload, state);
  const { followUps } = fanOut(resolved.children, unchanged.items ? { items: unchanged.items } : undefined, ctx.settings);
  return { status: 'superseded', rows: 0, followUps };
}

/**
 * A job found unchanged: its state says so, with what it still writes (no body read), in one
 * transaction. `confirmedAt`: upstream said so (a 304, received then), which counts as a
 * successful fetch; unless a newer response of the resource is written by then.
 */
async function commitUnchanged(ctx: JobContext, resolved: ResolvedJob, writes: TableWrite<any>[], confirmedAt: Date | null): Promise<number | { newer: Date } | Pick<Refused, 'error'>> {
  const { job, resource } = resolved;
  const key = { source: job.source, resource, runId: ctx.runId, at: ctx.now(), confirmed: confirmedAt !== null, receivedAt: confirmedAt };
  // A marker's skip writes no row and confirms no response of its own: one statement.
  if (writes.length === 0 && !confirmedAt) {
    await writeUnchanged(ctx.warehouse.db, key);
    return 0;
  }
  const prepared = await prepare(ctx, job.source, { status: 'unchanged', writes });
  if ('refused' in prepared) return { error: refuse(ctx, prepared.refused) };
  const rows = await ctx.warehouse.db.transaction(async (t) => {
    const tx = t as unknown as Executor;
    // After any write of the resource that took its known time first (begin_write).
    await beginWrite(tx, null, writeLock(job.source, resource), ctx.replaying?.knownAt);
    const newer = confirmedAt && (await newerReceived(tx, key, confirmedAt));
    if (newer) return { newer };
    // A 304 that writes no row leaves nothing for a replay to write again: no record.
    if (prepared.upserts.length > 0) await recordWrite(tx, writeRecord(ctx, resolved, confirmedAt ? 'confirmed' : 'unchanged', []));
    let n = 0;
    for (const p of prepared.upserts) n += await p.run(tx);
    await writeUnchanged(tx, key);
    return n;
  });
  if (typeof rows === 'number') ctx.findings.written = true;
  return rows;
}

/** Pure: the name a resource's writes take their turn by (`sync.begin_write`). */
function writeLock(source: string, resource: string): string {
  return `${source}/${resource}`;
}

/** Pure: the status of a written outcome (`partial` when some cells were unreadable). */
export function committedStatus(o: Pick<Outcome, 'status' | 'cells'>): string {
  return (o.cells?.unreadable ?? 0) > 0 && o.status === 'ok' ? 'partial' : o.status;
}

/**
 * The outcome's rows and the resource's state, in one transaction. A tally that shows the
 * response was not understood, or rows that contradict each other, were refused before this
 * (reading.ts). A write that would remove more than a fifth of a set is confirmed first (the
 * reader run once more, fetching again at once).
 */
async function commitOutcome(
  ctx: JobContext,
  resolved: ResolvedJob,
  marker: string | null,
  first: Read,
  reading: Reading,
  etag: string | null,
): Promise<{ rows: number; written: Outcome; followUps: JobRequest[] } | { newer: Date } | Refused> {
  const { job, resource, children, childGroups } = resolved;
  const confirmed = await confirmRemovals(ctx, first, reading);
  if ('error' in confirmed) return confirmed;
  const { o, prepared, pending } = confirmed;
  const used = await bodiesUsed(ctx, job.source, prepared.bodies);
  // When it was received, on the server's clock: the newest response of a resource wins.
  const receivedAt = first.receivedAt;
  const { followUps, wholeList } = fanOut(children, o.listed, ctx.settings);
  const writes = o.writes ?? [];
  const unreadable = o.cells?.unreadable ?? 0;
  const details = o.cells && unreadable > 0 ? { ...(isRecord(o.details) ? o.details : {}), ...o.cells.summary() } : o.details;
  const rows = await ctx.warehouse.db.transaction(async (t) => {
    const tx = t as unknown as Executor;
    // Known time: the server's clock, one instant for all this transaction writes; after any
    // write of the resource that took its known time first, and only if none wrote a newer response.
    await beginWrite(tx, prepared.bodies[0] ?? null, writeLock(job.source, resource), ctx.replaying?.knownAt);
    const newer = await newerReceived(tx, { source: job.source, resource }, receivedAt);
    if (newer) return { newer };
    await recordWrite(tx, writeRecord(ctx, resolved, 'read', used));
    // Rows written: inserted, changed or removed (a row received the same is left as it is).
    let n = 0;
    // One after another: a new key range's savepoint must hold its own statements only.
    for (let i = 0; i < writes.length; i++) {
      n += await prepared.upserts[i]!.run(tx);
      const w = writes[i]!;
      if (!w.replace) continue;
      // A set kept while something else holds is judged after this transaction's earlier
      // writes; any other removes what the check before it found absent (usually nothing).
      const keptWhile = SET_KEPT_WHILE in w.replace;
      const absent = pending.find((p) => p.write === i)?.absent ?? [];
      if (!keptWhile && absent.length === 0) continue;
      // What leaves is closed by the body that no longer carried it.
      await closingBody(tx, prepared.bodies[i] ?? null);
      n += keptWhile ? await removeAbsent(tx, w.table, w.rows, w.replace, ctx.runId) : await removeKeys(tx, w.table, w.replace, absent, ctx.runId);
    }
    if (wholeList) {
      await forgetNotFound(tx, job.source, wholeList);
      await retireUnplanned(tx, job.source, wholeList, childGroups);
    }
    if (o.otherStates && o.otherStates.resources.length > 0) {
      await tx
        .update(resourceState)
        .set({ status: o.otherStates.status, lastRunId: ctx.runId })
        .where(and(eq(resourceState.source, job.source), inArray(resourceState.resource, o.otherStates.resources)));
    }
    await writeSuccess(tx, {
      source: job.source,
      resource,
      kind: job.group,
      status: committedStatus(o),
      runId: ctx.runId,
      at: ctx.now(),
      freshness: o.freshness !== undefined ? o.freshness : marker,
      asOf: o.asOf ?? null,
      hash: o.hash ?? null,
      etag,
      rowCount: o.rowCount !== undefined ? o.rowCount : prepared.upserts.reduce((sum, p) => sum + p.rows, 0),
      details: details ?? null,
      // Written, but not whole: why, where people look for what went wrong.
      note: partialNote(details),
      receivedAt,
    });
    return n;
  });
  if (typeof rows !== 'number') return rows;
  ctx.findings.written = true;
  return { rows, written: o, followUps };
}

/**
 * The mass-removal check (removals.ts): when the outcome would remove more than a fifth of a
 * set (three or more), the reader is run again at once; when that second answer removes exactly
 * the same members it is written. When it disagrees, a third read decides: the answer two of
 * the three agree on is written (the third's rows), the outvoted one's bodies kept `invalid`.
 * When all three disagree, every body is kept `invalid` and nothing is written.
 */
async function confirmRemovals(ctx: JobContext, first: Read, reading: Reading): Promise<(Read & { pending: PendingRemoval[] }) | Refused> {
  const pending = await pendingRemovals(ctx.warehouse.db, (first.o.writes ?? []) as TableWrite[]);
  const mass = massRemovals(pending);
  if (mass.length === 0) return { ...first, pending };
  const firstBodies = ctx.findings.takeReceived();
  ctx.logger.info({ removals: describeRemovals(mass) }, 'would remove more than a fifth of a set; fetching again to confirm');
  const second = await reading.next();
  if ('error' in second) return second;
  const confirmed = await pendingRemovals(ctx.warehouse.db, (second.o.writes ?? []) as TableWrite[]);
  if (sameRemovals(pending, confirmed)) return { ...second, pending: confirmed };
  const secondBodies = ctx.findings.takeReceived();
  ctx.logger.info({ removals: describeRemovals(mass) }, 'the second answer disagrees with the first; a third decides');
  const third = await reading.next();
  if ('error' in third) return third;
  const decided = await pendingRemovals(ctx.warehouse.db, (third.o.writes ?? []) as TableWrite[]);
  const outvoted = sameRemovals(decided, confirmed) ? firstBodies : sameRemovals(decided, pending) ? secondBodies : null;
  if (outvoted) {
    for (const { route, response } of outvoted) invalid(ctx, route, response, 'outvoted: two other answers fetched at once agree on what the set holds', { quiet: true });
    return { ...third, pending: decided };
  }
  const reason = `${describeRemovals(mass)}, and two more responses fetched at once disagree with it and with each other: nothing removed`;
  return { refused: reason, error: keepRefused(ctx, [...firstBodies, ...secondBodies, ...ctx.findings.takeReceived()], reason) };
}
