// The one lifecycle of a job, under either runner (src/runners/in-process.ts, the BullMQ
// worker): name the resource, skip it while its marker says nothing changed, run its reader,
// write what it found (rows and resource state in one transaction), and record a failure as
// data. The runners only decide when a job runs and how often it may be tried.
//
// A try is read, then commit: it visits the store once before its fetch (the resource's state
// and what it knows: job-input.ts `outset`) and once after it (one transaction: commit.ts), and
// calls the resource for its declaration (`JobDefinition.declared`) and its pure read. What
// costs more, and why, is docs/adding-a-resource.md's "How one response travels".
import { judgeFailure, type Failure } from '../../lib/failure.ts';
import { ROUTES, type Bucket } from '../../upstream/routes.ts';
import { recordFieldDrift } from '../../store/books/field-drift.ts';
import { keepInvalidBody } from '../../store/books/request-log.ts';
import { readState, unchangedStatus, writeFailure, type ResourceStateRow } from '../../store/books/resource-state.ts';
import { withReconnect } from '../../lib/reconnect.ts';
import { vouched } from './change.ts';
import { invalid } from '../fetch/fetch.ts';
import { declarationInput, outset, storedPlan, type Outset } from './job-input.ts';
import { prepare, Reading, type Read, type Refused } from './reading.ts';
import { childrenOf, fanOut } from './fan-out.ts';
import { plannedFromStored, walksOnBelow } from './stored-list.ts';
import { ConditionalUpstream, NotModified } from './conditional.ts';
import { TryFindings } from '../fetch/findings.ts';
import { notFoundDetails } from './not-found.ts';
import { recordUnwritten } from './write-record.ts';
import { commitRead, commitUnchanged, committedStatus, type SinceLast } from './commit.ts';
import { describeRemovals, massRemovals, removalVerdict, type PendingRemoval } from './removals.ts';
import { keepRefused, refuse } from '../fetch/understood.ts';
import type { ReadResponse } from '../fetch/findings.ts';
import type { JobContext, JobDefinition, JobRequest, JobResult, Outcome, RunContext } from '../kit/types.ts';

export { committedStatus } from './commit.ts';

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
 * What the try read and its commit did not keep, kept whatever became of it: the fields of
 * each response understood (the drift record) and every body refused, as `invalid`. Neither
 * may fail the job.
 */
async function keepFindings(ctx: JobContext): Promise<void> {
  for (const s of ctx.findings.sightings) await recordFieldDrift(ctx.warehouse, ctx.logger, s);
  for (const b of ctx.findings.refused) await keepInvalidBody(ctx.warehouse, b).catch((err: unknown) => ctx.logger.error({ err }, 'could not keep the invalid body'));
}

async function settleJob(resolved: ResolvedJob, ctx: JobContext, jobTry: JobTry): Promise<Settled> {
  const { job, payload, resource } = resolved;
  let before: Outset<unknown> | undefined;
  try {
    before = await outset(ctx, job, payload, resource);
    const { state, declared, way, input } = before;
    // A replayed 304 was received when its record says (commit.ts takes the replayed time).
    if (way === 'unchanged') return await settleUnchanged(ctx, resolved, before, ctx.replaying?.how === 'confirmed' ? () => 0 : null);
    if (way === 'not found') {
      ctx.logger.debug({ marker: declared.marker }, 'upstream said it does not exist at this marker; not asked again');
      return { status: 'not_found', rows: 0, followUps: [] };
    }
    // The tag of the one response last written, sent as If-None-Match while the rows are as
    // that response left them (conditional.ts).
    const etag = !ctx.replaying && !ctx.settings.full && vouched(state) && declared.sameAsBefore ? (state?.etag ?? undefined) : undefined;
    const upstream = new ConditionalUpstream(ctx.upstream, job.route, etag);
    const jobCtx: JobContext = { ...ctx, upstream };
    const reading = new Reading(jobCtx, job, input, declared);
    let first: Read | Refused;
    try {
      first = await reading.next();
    } catch (err) {
      if (!(err instanceof NotModified)) throw err;
      return await settleUnchanged(ctx, resolved, before, () => upstream.sinceLastMs());
    }
    if ('error' in first) return await settleFailure(ctx, resolved, before, jobTry, first.error);
    const committed = await commitConfirmed(jobCtx, resolved, declared.marker, first, reading, upstream);
    if ('error' in committed) return await settleFailure(ctx, resolved, before, jobTry, committed.error);
    if ('newer' in committed) return await settleSuperseded(ctx, resolved, before, committed.newer);
    const { rows, written, followUps } = committed;
    return { status: written.reported ?? committedStatus(written), rows, followUps };
  } catch (err) {
    return await settleFailure(ctx, resolved, before, jobTry, err);
  }
}

/**
 * A job that failed: recorded in its state, as data. Thrown only what the runner must handle:
 * a failure worth another try while tries are left, and what `passThrough` claims. A list that
 * failed so may still plan its children from the list the warehouse holds (stored-list.ts).
 * `before`: what the try knew before its fetch (undefined: it failed to learn it).
 */
async function settleFailure(ctx: JobContext, resolved: ResolvedJob, before: Outset<unknown> | undefined, jobTry: JobTry, err: unknown): Promise<Settled> {
  const { job, resource } = resolved;
  if (jobTry.passThrough?.(err)) throw err;
  const judged = judgeFailure(err);
  if (judged.retryable && !jobTry.last) throw err;
  const failure: Failure = { ...judged, bucket: judged.bucket ?? resolved.bucket };
  const details = failure.answered ? notFoundDetails(before?.declared.marker ?? null) : undefined;
  const fallback = walksOnBelow(failure) ? await plannedFromStored(ctx, resolved, before?.state, before?.declared.unchangedKnows) : { followUps: [], from: null };
  if (fallback.from) failure.message = `${failure.message}; what it plans was planned from the list of ${fallback.from}`;
  await withReconnect(() => writeFailure(ctx.warehouse.db, { source: job.source, resource, kind: job.group, runId: ctx.runId, at: ctx.now(), failure, ...(details ? { details } : {}) })).catch(
    (e: unknown) => ctx.logger.error({ err: e }, 'could not record the failure'),
  );
  return { status: failure.status, rows: 0, followUps: fallback.followUps, ...(failure.answered ? {} : { failure }) };
}

/**
 * A job whose resource is as last written: its marker unchanged, or upstream's 304 to its
 * conditional request (received `confirmed()` ms ago; a replayed one at its record's time), which
 * counts as a successful fetch (`last_success_at`). No row, version or set is touched but what
 * `unchanged` still writes; a list plans its children from what it stored and closes nothing.
 */
async function settleUnchanged(ctx: JobContext, resolved: ResolvedJob, before: Outset<unknown>, confirmed: SinceLast | null): Promise<Settled> {
  // A skip's outset answered its stored plan's questions; after a 304 they are asked now.
  const unchanged = await storedPlan(ctx, resolved.job, before.input, before.way === 'unchanged' ? undefined : before.declared.unchangedKnows);
  const prepared = prepare([], ctx.settings, { status: 'unchanged', writes: unchanged.writes ?? [] });
  if ('refused' in prepared) throw refuse(ctx, prepared.refused);
  const rows = await commitUnchanged(ctx, resolved, prepared, confirmed);
  if (typeof rows !== 'number') return settleSuperseded(ctx, resolved, before, rows.newer);
  const { followUps } = fanOut(resolved.children, unchanged.items ? { items: unchanged.items } : undefined, ctx.settings);
  // Counted as recorded (a `not_materialized` still stands): the run says what status says.
  return { status: unchangedStatus(before.state?.status), rows, followUps };
}

/**
 * A response older than the one its resource's rows already hold (received earlier, its write
 * later): nothing of it is written, and the job is counted `superseded`. A list plans its
 * children from the newer list the warehouse holds (two more visits: its state, its list).
 */
async function settleSuperseded(ctx: JobContext, resolved: ResolvedJob, before: Outset<unknown>, newer: Date): Promise<Settled> {
  ctx.logger.info({ resource: resolved.resource, newer: newer.toISOString() }, 'a newer response of this resource is written: this one is superseded, nothing of it written');
  const state = await readState(ctx.warehouse.db, { source: resolved.job.source, resource: resolved.resource });
  const unchanged = await storedPlan(ctx, resolved.job, declarationInput(ctx, resolved.payload, state), before.declared.unchangedKnows);
  const { followUps } = fanOut(resolved.children, unchanged.items ? { items: unchanged.items } : undefined, ctx.settings);
  return { status: 'superseded', rows: 0, followUps };
}

/**
 * The outcome's rows and the resource's state, in one transaction (commit.ts). A tally that
 * shows the response was not understood, or rows that contradict each other, were refused
 * before this (reading.ts). The mass-removal check (removals.ts) reads what the write would
 * remove inside that transaction: when it removes more than a fifth of a set (three or more),
 * the transaction is rolled back, the reader run again at once, and its answer committed the
 * same way: written when it removes exactly the same members; when it disagrees, a third
 * read decides: the answer two of the three agree on is written (the third's rows), the
 * outvoted one's bodies kept `invalid`. When all three disagree, every body is kept `invalid`
 * and nothing is written.
 */
async function commitConfirmed(
  ctx: JobContext,
  resolved: ResolvedJob,
  marker: string | null,
  first: Read,
  reading: Reading,
  upstream: ConditionalUpstream,
): Promise<{ rows: number; written: Outcome; followUps: JobRequest[] } | { newer: Date } | Refused> {
  const earlier: PendingRemoval[][] = [];
  const bodies: ReadResponse[][] = [];
  let outvoted: number | undefined;
  for (let read = first; ; ) {
    const committed = await commitRead(ctx, resolved, marker, read, upstream.keptTag(), () => upstream.sinceLastMs(), (pending) => {
      const verdict = removalVerdict(earlier, pending);
      if (verdict.write) outvoted = verdict.outvoted;
      return verdict.write;
    });
    if (!('rolledBack' in committed)) {
      if (outvoted !== undefined) {
        for (const { route, response } of bodies[outvoted]!) invalid(ctx, route, response, 'outvoted: two other answers fetched at once agree on what the set holds', { quiet: true });
      }
      return committed;
    }
    const mass = massRemovals(earlier[0] ?? committed.rolledBack);
    earlier.push(committed.rolledBack);
    bodies.push(ctx.findings.takeReceived());
    if (earlier.length === 3) {
      const reason = `${describeRemovals(mass)}, and two more responses fetched at once disagree with it and with each other: nothing removed`;
      return { refused: reason, error: keepRefused(ctx, bodies.flat(), reason) };
    }
    const words = earlier.length === 1 ? 'would remove more than a fifth of a set; fetching again to confirm' : 'the second answer disagrees with the first; a third decides';
    ctx.logger.info({ removals: describeRemovals(mass) }, words);
    const next = await reading.next();
    if ('error' in next) return next;
    read = next;
  }
}
