// A job is one resource of one source. Its definition is a catalog entry: name, payload
// schema, how it is planned, and how it is read, declared (declaration.ts): what it asks and
// a pure read that returns what it found as data (an Outcome, outcome.ts). One lifecycle
// (job/lifecycle.ts) runs the reader and writes the outcome, for either runner.
import type { z } from 'zod';
import type { ResourceStateRow } from '../../store/books/resource-state.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Upstream } from '../../upstream/index.ts';
import type { RouteName } from '../../upstream/routes.ts';
import type { RequestRecorder } from '../../ports/recorder.ts';
import type { Warehouse } from '../../store/connection.ts';
import type { WarehouseClock } from '../../store/warehouse-clock.ts';
import type { TryFindings } from '../fetch/findings.ts';
import type { KnownAsk } from './knows.ts';
import { oneResponse, type Declared, type DeclarationInput, type OneResponse, type ReadInput, type Source, type SyncSettings, type Reader } from './declaration.ts';
import type { Unchanged } from './outcome.ts';

export type * from './declaration.ts';
export type * from './knows.ts';
export { oneResponse } from './declaration.ts';
export type * from './outcome.ts';
export { into, refused } from './outcome.ts';


/** What a runner hands the lifecycle for each job. */
export interface RunContext {
  warehouse: Warehouse;
  upstream: Upstream;
  /**
   * The recorder the upstream client records to: the bodies a commit takes into its own
   * transaction (`take`; without it, they are only looked up there), and the raw response ids
   * of those a try that wrote nothing read.
   */
  recorder: Pick<RequestRecorder, 'rawResponseIds'> & Partial<Pick<RequestRecorder, 'take'>>;
  logger: Logger;
  /**
   * The warehouse's clock, as this process reads it: the times a job stamps before it writes
   * (a failure, a sighting, a cursor) and a marker's age. Never this process's own date.
   */
  now: WarehouseClock['now'];
  runId: string;
  settings: SyncSettings;
  /** Set by `tesync replay` alone (src/replay/): the try repeats one the write record names. */
  replaying?: Replaying;
}

/**
 * A recorded try, repeated from the archive: every write of it takes the recorded known time,
 * and the way it went decides the lifecycle's (no marker is judged and no ETag sent: the
 * archive answers, never upstream). `how`: the record's (store/books/write-record.ts).
 */
export interface Replaying {
  /** The known time as the server wrote it, to the microsecond (`sync.begin_write`'s `at`). */
  knownAt: string;
  /** The same instant: when the try's responses count as received. */
  at: Date;
  how: 'read' | 'unchanged' | 'confirmed' | 'refused';
}

/**
 * What the lifecycle's steps see: the runner's context and this try's findings; a resource sees
 * neither (it is handed data, `ReadInput`, the answers to its questions among them).
 */
export interface JobContext extends RunContext {
  findings: TryFindings;
}

/** Work a job plans next; the runner dedupes by resource. */
export interface JobRequest {
  name: string;
  payload: unknown;
}

/** What a job settled as, under either runner. */
export interface JobResult {
  /** ok | unchanged | skipped | not_materialized | unauthorized | no_credits | missing_scope | partial | not_found ... */
  status: string;
  rows: number;
  followUps?: JobRequest[];
}

export interface JobDefinition<P = unknown> {
  name: string;
  source: Source;
  /** Resource group: for status reports, schedules and `--only` (column `kind` of sync.resource_state). */
  group: string;
  /**
   * The upstream route the job mirrors (src/upstream/routes.ts): its requests' bucket, and
   * among the jobs one list plans, their order (the API's own).
   */
  route: RouteName;
  payload: z.ZodType<P>;
  /** The resource this payload stands for (resource_state key, job id). */
  resource(payload: P): string;
  /** A walk of the source starts here (its catalog): every other job is planned by another. */
  root?: boolean;
  /**
   * The job that plans this one, by name: each time that job is written or found unchanged,
   * this one follows, once (payload `{}`), or with `each`, once per item its parent listed.
   */
  plannedBy?: string;
  /**
   * The payloads one item of the parent's list plans (none: the item does not have this
   * resource): one job per token, per chart, per configured period.
   */
  each?(item: any, settings: SyncSettings): P[];
  /** Whether the job runs under these settings at all (bundles need an app key); default yes. */
  enabled?(settings: SyncSettings): boolean;
  /** The token the job is about, for `--token` filters. */
  token?(payload: P): string | undefined;
  /**
   * The upstream marker that planned the job: while it is the one of the last success (and
   * not older than TE_MARKER_MAX_AGE_HOURS), the resource is not fetched again; while it is the
   * one a 404 came under, neither (the one 404 rule: job/not-found.ts).
   */
  marker?(payload: P): string | null | undefined;
  /**
   * Its rows come from its body alone (no stored state, no setting shapes them): a body as last
   * written is not read into rows again (job/change.ts).
   */
  rowsFromBodyAlone?: boolean;
  /**
   * Beyond an equal marker, what else must be as before to skip the fetch; and for an ETag of
   * the last success to be sent (a 304 then stands for the rows that success wrote).
   */
  sameAsBefore?(state: ResourceStateRow, payload: P, settings: SyncSettings): boolean;
  /** What the resource's read needs to know of the warehouse (handed in as `ReadInput.known`). */
  knows?(payload: P, state: ResourceStateRow | undefined): KnownAsk;
  /** How it is read. */
  reader: Reader<P>;
  /**
   * Another reader of the same rows (the app's history stream by stream), taken once when what
   * `reader` read is refused as not understood, whether on reading or when its rows are prepared
   * for writing (`ReadInput.refusal` says why); or at once, when `startsWithAlternative` says so.
   */
  alternative?: Reader<P>;
  startsWithAlternative?(input: DeclarationInput<P>): boolean;
  /**
   * What a job skipped as unchanged still does, from what it stored: the jobs it plans, and
   * writes (written with its unchanged state, in one transaction). A list's `items` are also
   * what its children are planned from when the list itself fails or is refused (only the
   * items then: nothing is written). Pure: what it needs of the warehouse it declares (`knows`).
   */
  unchanged?: { knows?(payload: P, state: ResourceStateRow | undefined): KnownAsk; plan(input: ReadInput<P>): Unchanged };
  /**
   * The declaration read: all the lifecycle needs of the resource for one try before its read
   * (marker, `sameAsBefore`, `knows`, the reader to start with and its first `asks`), as data,
   * in one call, once the resource's state is read. `defineJob` builds it from the members
   * above; the lifecycle calls none of them itself (job/job-input.ts `outset`).
   */
  declared(input: DeclarationInput<P>): Declared;
}

/**
 * A job as its file declares it: with its `reader`, or, read from one response of its route, with
 * `one` (the engine's Reader for it is built here: one form reaches the engine).
 */
export type JobDeclaration<P, S extends z.ZodType> = Omit<JobDefinition<P>, 'reader' | 'declared'> & ({ reader: Reader<P>; one?: never } | { one: OneResponse<P, S>; reader?: never });

export function defineJob<P, S extends z.ZodType = z.ZodType>(declaration: JobDeclaration<P, S>): JobDefinition<P> {
  const { one, reader, ...rest } = declaration;
  const job = { ...rest, reader: one ? oneResponse(declaration.route, one) : reader! };
  return { ...job, declared: (input) => declarationRead(job, input) };
}

/** The declaration read of a job, from its members: the engine's one call before the read. */
function declarationRead<P>(job: Omit<JobDefinition<P>, 'declared'>, input: DeclarationInput<P>): Declared {
  const { payload, state, settings } = input;
  const alternativeFirst = job.alternative !== undefined && (job.startsWithAlternative?.(input) ?? false);
  return {
    marker: job.marker?.(payload) ?? null,
    sameAsBefore: state === undefined || (job.sameAsBefore?.(state, payload, settings) ?? true),
    knows: job.knows?.(payload, state) ?? [],
    unchangedKnows: job.unchanged?.knows?.(payload, state) ?? [],
    alternativeFirst,
    asks: (alternativeFirst ? job.alternative! : job.reader).asks(input),
  };
}

export function request<P>(job: JobDefinition<P>, payload: P): JobRequest {
  return { name: job.name, payload };
}
