// What a resource's read returns: the rows per table, the resource's state and what it listed
// (an Outcome), or a refusal; and the response it was read from. Data only: the job lifecycle
// (job/lifecycle.ts) writes it.
import type { PgTable } from 'drizzle-orm/pg-core';
import type { CellTally } from './cell-tally.ts';
import type { UpstreamResponse } from '../../upstream/index.ts';
import type { EnvelopeMeta } from '../../schema/upstream/envelope.ts';
import type { RawBody } from '../../ports/recorder.ts';

/**
 * Rows for one table. The table's declaration gives the key they are written by and the
 * columns a later write keeps (src/schema/warehouse/table-rules.ts); a read never names them.
 */
export interface TableWrite<T extends PgTable = PgTable> {
  table: T;
  rows: T['$inferInsert'][];
  /**
   * The rows are the whole set of this scope (column values; `{}`: the whole table): a stored
   * row of the scope that is not among them leaves (deleted, or delisted where the table
   * declares it). Set it only when the response stated the set: `wholeSet` (src/engine/kit/stated-set.ts)
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
  from?: RawBody | null;
  /**
   * Per row, the body it was read from, where the rows come from several (the pages of one
   * list); a row without one links to `from`'s. What the write removes is closed by `from`'s.
   */
  fromEach?: readonly (RawBody | undefined)[];
}

/** Typed constructor of a TableWrite (the rows are checked against the table). */
export function into<T extends PgTable>(table: T, rows: T['$inferInsert'][], options: Omit<TableWrite<T>, 'table' | 'rows'> = {}): TableWrite<T> {
  return { table, rows, ...options };
}

/**
 * What a list read whole says of the resources it plans: every resource of these groups under
 * this prefix that exists now is among `planned`; the 404s of the others are forgotten
 * (the one 404 rule: job/not-found.ts).
 */
export interface WholeList {
  /** A resource prefix (`token/`, `token/<slug>/chart/`). */
  under: string;
  /** The groups of the resources the list plans. */
  groups: readonly string[];
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
   * and the 404s of the others are forgotten (the one 404 rule: job/not-found.ts).
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
 * What a read found: the rows per table, the resource's state and what it listed. The job
 * lifecycle (job/lifecycle.ts) writes it, rows and state in one transaction, and plans the jobs
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
  /** How the response's cells were read: judged before anything is written (fetch/understood.ts). */
  cells?: CellTally;
  /** What the job listed, for the jobs that fan out over it. */
  listed?: Listed;
  /** Other resources of the source whose state this outcome sets (a keyless sync skips bundles). */
  otherStates?: { resources: string[]; status: string };
  /** Lines for the job's log, written by the engine (a read is pure and logs nothing itself). */
  notes?: { level: 'info' | 'warn'; msg: string; fields: Record<string, unknown> }[];
}

/** A response fetched and validated (engine/fetch/fetch.ts). */
export interface Fetched<T> {
  response: UpstreamResponse;
  data: T;
  meta: EnvelopeMeta;
  /** The whole body, for payload columns that want more than `data`. */
  body: Record<string, unknown>;
  /**
   * Items of `data` (as the schema read them, located by `Ask.items`) refused alone, each with
   * why: nothing of them is written (src/engine/kit/item-refusals.ts `splitItems`).
   */
  refused?: ReadonlyMap<unknown, string>;
}

/** A read that did not understand its response: nothing of it is written, its body kept `invalid`. */
export interface Refusal {
  refused: string;
}

/** Constructs a Refusal (`Reader.read`). */
export const refused = (reason: string): Refusal => ({ refused: reason });

