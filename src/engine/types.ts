// A job is one resource of one source. Its definition is a catalog entry: name, payload
// schema, and a handler that fetches, validates and normalizes, and returns what it found as
// data (an Outcome). One lifecycle (lifecycle.ts) writes it, for either runner.
import type { PgTable } from 'drizzle-orm/pg-core';
import type { z } from 'zod';
import type { CellTally } from './cell-tally.ts';
import type { ResourceStateRow } from '../store/books/resource-state.ts';
import type { Logger } from '../lib/logger.ts';
import type { Upstream, UpstreamRequest, UpstreamResponse } from '../upstream/index.ts';
import type { EnvelopeMeta } from '../schema/upstream/envelope.ts';
import type { RouteName } from '../upstream/routes.ts';
import type { ArchivedBody, RequestRecorder } from '../ports/recorder.ts';
import type { Warehouse } from '../store/connection.ts';
import type { Known } from '../store/read/known.ts';
import type { JobLedger } from './ledger.ts';

export type Source = 'app' | 'gateway';

/** Settings a handler may read; built once by the composition root. */
export interface SyncSettings {
  /** Ignore change markers and fetch everything. */
  full: boolean;
  /** App key configured: bundles are fetched (else recorded `skipped`). */
  appBundles: boolean;
  historyOverlapDays: number;
  /** How often a token's app history is fetched whole (revisions older than the overlap). */
  historyFullRefetchMs: number;
  historyFromParam: string;
  gatewayHistoryPeriods: readonly string[];
  gatewayChartTimeframes: readonly string[];
  /** How long an unchanged marker is trusted before the resource is fetched anyway. */
  markerMaxAgeMs: number;
  /** Write batch size for large row sets. */
  batchSize: number;
}

/** What a runner hands the lifecycle for each job. */
export interface RunContext {
  warehouse: Warehouse;
  upstream: Upstream;
  /** The raw archive the upstream client records to: the ids of the bodies rows link to. */
  archive: Pick<RequestRecorder, 'archivedIds'>;
  logger: Logger;
  now: () => Date;
  runId: string;
  settings: SyncSettings;
}

/**
 * What a job's handler and the lifecycle's steps see: the runner's context, this try's ledger,
 * and what the warehouse knows, asked through `known` (a resource never queries the warehouse).
 */
export interface JobContext extends RunContext {
  ledger: JobLedger;
  known: Known;
}

/** Work a handler asks for next; the runner dedupes by resource. */
export interface JobRequest {
  name: string;
  payload: unknown;
}

/**
 * Rows for one table. The table's declaration gives the key they are written by and the
 * columns a later write keeps (src/schema/warehouse/table-rules.ts); a handler never names them.
 */
export interface TableWrite<T extends PgTable = PgTable> {
  table: T;
  rows: T['$inferInsert'][];
  /**
   * The rows are the whole set of this scope (column values; `{}`: the whole table): a stored
   * row of the scope that is not among them leaves (deleted, or delisted where the table
   * declares it). Set it only when the response stated the set: `wholeSet` (src/engine/sets.ts)
   * says when. The lifecycle asks again before it removes more than a fifth of a set.
   */
  replace?: Partial<T['$inferInsert']>;
  /** Columns this write leaves as they are on conflict (a refusal keeps the last good body). */
  keep?: (keyof T['$inferInsert'] & string)[];
  /**
   * The archived body the rows were read from, when the job read several (default: its last);
   * a refusal's body for rows it refused; null for rows no response carried (a bundle skipped
   * without a key).
   */
  from?: ArchivedBody | null;
  /**
   * Per row, the body it was read from, where the rows come from several (the pages of one
   * list); a row without one links to `from`'s. What the write removes is closed by `from`'s.
   */
  fromEach?: readonly (ArchivedBody | undefined)[];
}

/** Typed constructor of a TableWrite (the rows are checked against the table). */
export function into<T extends PgTable>(table: T, rows: T['$inferInsert'][], options: Omit<TableWrite<T>, 'table' | 'rows'> = {}): TableWrite<T> {
  return { table, rows, ...options };
}

/**
 * What a list read whole says of the resources it plans: every resource of these kinds under
 * this prefix that exists now is among `planned`; the 404s of the others are forgotten
 * (the one 404 rule: not-found.ts).
 */
export interface WholeList {
  /** A resource prefix (`token/`, `token/<slug>/chart/`). */
  under: string;
  /** The resource kinds (job groups) the list plans. */
  kinds: readonly string[];
  planned: readonly string[];
}

/**
 * The items a job listed, which the jobs it plans fan out over (`JobDefinition.each`): a token
 * list's tokens, a chart catalog's charts.
 */
export interface Listed {
  items: readonly unknown[];
  /**
   * Set when the list was read whole: the resource prefix its children live under
   * (`token/`, `token/<slug>/chart/`). Every child that exists is then among those planned,
   * and the 404s of the others are forgotten (the one 404 rule: not-found.ts).
   */
  wholeUnder?: string;
}

/** What a job skipped as unchanged still does (`JobDefinition.unchanged`). */
export interface Unchanged {
  /** The items its children fan out over, as last stored (never a whole list). */
  items?: readonly unknown[];
  writes?: TableWrite<any>[];
}

/**
 * What a handler found: the rows per table, the resource's state and what it listed. The job
 * lifecycle (lifecycle.ts) writes it, rows and state in one transaction, and plans the jobs
 * that declare this one their parent.
 */
export interface Outcome {
  /** The resource's status: ok | partial | not_materialized | unauthorized | no_credits | missing_scope ... */
  status: string;
  /** What the run counts instead, when it differs (`unchanged`: fetched, same as before). */
  reported?: string;
  writes?: TableWrite<any>[];
  /** The upstream marker the state keeps; default: the payload's (`JobDefinition.marker`). */
  freshness?: string | null;
  asOf?: Date | null;
  hash?: string | null;
  /** Default: the rows written. */
  rowCount?: number | null;
  details?: unknown;
  /** How the response's cells were read: judged before anything is written (understood.ts). */
  cells?: CellTally;
  /** What the job listed, for the jobs that fan out over it. */
  listed?: Listed;
  /** Other resources of the source whose state this outcome sets (a keyless sync skips bundles). */
  otherStates?: { resources: string[]; status: string };
}

/** A response fetched and validated (engine/fetch.ts). */
export interface Fetched<T> {
  response: UpstreamResponse;
  data: T;
  meta: EnvelopeMeta;
  /** The whole body, for payload columns that want more than `data`. */
  body: Record<string, unknown>;
}

/** A read that did not understand its response: nothing of it is written, its body kept `invalid`. */
export interface Refusal {
  refused: string;
}

/** Constructs a Refusal (`JobDefinition.read`). */
export const refused = (reason: string): Refusal => ({ refused: reason });

/** What a job asks of its route beyond the route itself (`JobDefinition.request`). */
export type RouteRequest = Pick<UpstreamRequest, 'params' | 'query' | 'link'>;

/** What a job settled as, under either runner. */
export interface JobResult {
  /** ok | unchanged | skipped | not_materialized | unauthorized | no_credits | missing_scope | partial | not_found ... */
  status: string;
  rows: number;
  followUps?: JobRequest[];
}

export interface JobDefinition<P = unknown, S extends z.ZodType = z.ZodType> {
  name: string;
  source: Source;
  /** Resource group: for status reports, schedules and `--only`; the resource state's kind. */
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
   * one a 404 came under, neither (the one 404 rule: not-found.ts).
   */
  marker?(payload: P): string | null | undefined;
  /**
   * Its rows come from its body alone (no stored state, no setting shapes them): a body as last
   * written is not read into rows again (change.ts).
   */
  rowsFromBodyAlone?: boolean;
  /**
   * Beyond an equal marker, what else must be as before to skip the fetch; and for an ETag of
   * the last success to be sent (a 304 then stands for the rows that success wrote).
   */
  sameAsBefore?(state: ResourceStateRow, payload: P, settings: SyncSettings): boolean;
  /**
   * What a job skipped as unchanged still does, from what it stored: the jobs it plans, and
   * writes (written with its unchanged state, in one transaction). A list's `items` are also
   * what its children are planned from when the list itself fails or is refused (only the
   * items then: nothing is written).
   */
  unchanged?(ctx: JobContext, payload: P, state?: ResourceStateRow): Promise<Unchanged>;
  /**
   * Another way to the same rows (the app's history stream by stream), tried once when what
   * `handle` read is refused as not understood, whether on reading or when its rows are
   * prepared for writing; `refusal` says why.
   */
  alternative?(ctx: JobContext, payload: P, state: ResourceStateRow | undefined, refusal: string): Promise<Outcome | Refusal>;
  /**
   * A job read from one response of its route declares what it asks (`request`, default: the
   * route alone), the `schema` of the response's `data`, and `read`: pure, the response to rows,
   * or a Refusal. The engine fetches (engine/declared.ts); the outcome's `asOf` and `hash`
   * default to the response's.
   */
  request?(payload: P): RouteRequest;
  schema?: S;
  read?(ctx: JobContext, payload: P, fetched: Fetched<z.output<S>>): Outcome | Refusal;
  /**
   * Otherwise: fetch, read and normalize (several requests, pages, a refusal that is an
   * answer); `state` is the resource's state before this run.
   */
  handle?(ctx: JobContext, payload: P, state: ResourceStateRow | undefined): Promise<Outcome | Refusal>;
}

export function defineJob<P, S extends z.ZodType = z.ZodType>(definition: JobDefinition<P, S>): JobDefinition<P, S> {
  return definition;
}

export function request<P>(job: JobDefinition<P>, payload: P): JobRequest {
  return { name: job.name, payload };
}
