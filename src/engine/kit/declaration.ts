// What a resource declares of how it is read (dlt's `rest_api` resources): the requests it asks
// as data (`Ask`), what it needs to know of the warehouse (`KnownAsk`, knows.ts), and its
// `Reader`, whose read is pure: what it is handed (`ReadInput`) and what came back (`Got`) to an Outcome or a
// refusal. The engine sends, validates and asks the warehouse (fetch/reader.ts, job/knowledge.ts).
import type { z } from 'zod';
import type { ResourceStateRow } from '../../store/books/resource-state.ts';
import type { ProblemError } from '../../lib/errors.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../upstream/index.ts';
import type { EnvelopeMeta } from '../../schema/upstream/envelope.ts';
import type { RouteName } from '../../upstream/routes.ts';
import type { Source } from '../../ports/sources.ts';
import type { Knowledge, KnownAsk } from './knows.ts';
import type { Fetched, Outcome, Refusal } from './outcome.ts';

export type { Source };

/**
 * The run's settings, handed to every job and its reads; built once by the composition root
 * from the configuration (cli/sync-session.ts `settingsFrom`). These are the engine's own. A
 * setting only some resources read (the app history's overlap, the gateway's chart timeframes)
 * is declared in the file that reads it, which adds it here (`declare module`), so that the
 * engine names no resource's setting.
 */
export interface SyncSettings {
  /** Ignore change markers and fetch everything. */
  full: boolean;
  /** How long an unchanged marker is trusted before the resource is fetched anyway. */
  markerMaxAgeMs: number;
  /** Write batch size for large row sets. */
  batchSize: number;
  /** Byte budget of one resource's list bodies in one run (default DEFAULT_MAX_LIST_BYTES, fetch/fetch-list.ts). */
  maxListBytes?: number;
}

/** What a job asks of its route beyond the route itself (`JobDefinition.request`). */
export type RouteRequest = Pick<UpstreamRequest, 'params' | 'query' | 'link'>;

/** What a resource's pure parts are handed: data only, no way to the upstream or the warehouse. */
export interface ReadInput<P = unknown> {
  payload: P;
  /** The resource's state before this try (undefined: never synced). */
  state: ResourceStateRow | undefined;
  known: Knowledge;
  settings: SyncSettings;
  runId: string;
  /** The warehouse's clock (`RunContext.now`), for cursors and records that say when (known time is the write's own). */
  now(): Date;
  /** Set on the alternative reader: why the first was refused (absent when it was taken at once). */
  refusal?: string;
}

/**
 * What a job's declaration read is handed (`JobDefinition.declared`): what a read is, but the
 * warehouse's answers, which come after it (the declaration names the questions).
 */
export type DeclarationInput<P = unknown> = Omit<ReadInput<P>, 'known' | 'refusal'>;

/**
 * What a resource declares of one try, read in one call before the fetch (its declaration read,
 * `JobDefinition.declared`): data only, so that the engine goes back into the resource only
 * for its pure read. `defineJob` builds it from the declaration's members.
 */
export interface Declared {
  /** The upstream marker that planned the job (`JobDefinition.marker`; null: none). */
  marker: string | null;
  /** Beyond an equal marker, whether the rest is as before (`JobDefinition.sameAsBefore`; true without a state). */
  sameAsBefore: boolean;
  /** The questions the read asks (`JobDefinition.knows`). */
  knows: KnownAsk;
  /** The questions a skip's stored plan asks (`JobDefinition.unchanged.knows`). */
  unchangedKnows: KnownAsk;
  /** The try starts with the alternative reader (`JobDefinition.startsWithAlternative`). */
  alternativeFirst: boolean;
  /** What the reader taken first asks first (its `asks`): asked before anything is known. */
  asks: Ask[];
}

/**
 * One request a reader asks the engine to send, as data. The engine sends it on the job's rate
 * budget, validates the response's `data` with `schema` (an envelope unless `document`), reads
 * every page of a `list`, asks from `since` (a filter upstream refuses is asked again whole),
 * and hands the read what came back (`Got`).
 */
export interface Ask {
  route: RouteName;
  params?: UpstreamRequest['params'];
  query?: UpstreamRequest['query'];
  link?: UpstreamRequest['link'];
  /** The response's `data` (default: anything). */
  schema?: z.ZodType;
  /** A list, maybe in pages (fetch/fetch-list.ts): `listOf` finds the items in `data`. */
  list?: FetchListOptions & { listOf?: (data: unknown) => unknown[] | undefined };
  /**
   * Where the items of a response that is not a list lie in its `data` (a chart's rows, its
   * points): each may then be refused alone (src/engine/kit/item-refusals.ts), named in
   * `Fetched.refused`; a string Postgres cannot hold anywhere else refuses the response whole.
   * Applied to `data` as served and as the schema read it: it must return the array itself.
   */
  items?: ItemsLocator;
  /** Asked from this day on (null: whole), by the declared incremental rules (incremental.ts). */
  since?: { incremental: Incremental; from: string | null };
  /** The body is the document itself, no `{ data, meta }` envelope (the OpenAPI contract). */
  document?: boolean;
  /**
   * Upstream problems that are answers, handed to the read (`Got.problem`) instead of failing
   * the job: by HTTP status (a bundle's 401/402/403), by problem code (a stream that has no
   * history), or any problem at all.
   */
  answers?: { statuses?: readonly number[]; codes?: readonly string[]; any?: boolean };
}

/** What one Ask brought back: its validated response (or list), or the problem that answered it. */
export interface Got<D = any> {
  ask: Ask;
  fetched?: Fetched<D>;
  list?: FetchedList;
  /** A `document`'s response, as served. */
  response?: UpstreamResponse;
  problem?: ProblemError;
  /** It was asked from a day (`since`), and upstream took the filter. */
  incremental: boolean;
}

/**
 * How a resource is read, as data and pure functions (dlt's `rest_api` resource): the requests
 * it asks (`asks`), more asked from what came back (`more`: the engine reads pages itself), and
 * `read`, the responses to rows or a refusal, a value, all the way to commit.
 */
export interface Reader<P = unknown> {
  /** The first requests: asked before the warehouse answers (the declaration read asks them). */
  asks(input: DeclarationInput<P>): Ask[];
  more?(input: ReadInput<P>, got: readonly Got[]): Ask[];
  read(input: ReadInput<P>, got: readonly Got[]): Outcome | Refusal;
}

export interface Incremental {
  /** The query parameter the start day goes in. */
  param(settings: SyncSettings): string;
  /** How far before the newest day seen a request starts again. */
  lagMs(settings: SyncSettings): number;
  /** How often the resource is fetched whole all the same. */
  wholeEveryMs(settings: SyncSettings): number;
  /** Problem codes with which upstream refuses the filter: the request is asked again without it. */
  refusedCodes: readonly string[];
}

/** Pure: the array of items in a response's `data` (the same array, not a copy), or undefined when it holds none. */
export type ItemsLocator = (data: unknown) => unknown[] | undefined;

export interface FetchListOptions {
  /** The bound on pages (default MAX_PAGES); tests lower it. Past it the list stops, incomplete. */
  maxPages?: number;
  /** The list's byte budget (default the settings' `maxListBytes`); tests lower it. */
  maxBytes?: number;
  /** The bound on reads of a list whose pages disagree (default MAX_READS). */
  maxReads?: number;
  /** An item's key, to find one key on two pages of a read (a list that shifted while it was read). */
  keyOf?: (item: unknown) => string | undefined;
}

export interface FetchedList {
  /** The items of every page, in order; undefined when the (single) response holds no list. */
  items: unknown[] | undefined;
  /** The first page's meta and whole body (asOf, siblings such as the screener's insights). */
  meta: EnvelopeMeta;
  body: Record<string, unknown>;
  /** Every page's response, in order. */
  pages: UpstreamResponse[];
  /** One hash of the whole list: the single page's own, or a hash of every page's. */
  sha256: string;
  /**
   * How many items the list holds: a single page's `meta.count` (undefined: it does not say);
   * for several pages, the number read, every page's count having been checked against it.
   */
  count: number | undefined;
  /** The page an item (as found in `items`) was read from: its rows' provenance (`fromEach`). */
  pageOf(item: unknown): UpstreamResponse | undefined;
  /**
   * Items refused alone, each with why (it holds a string Postgres cannot store exactly, and
   * names it): nothing of them is written (src/engine/kit/item-refusals.ts `splitItems`).
   */
  refused?: ReadonlyMap<unknown, string>;
  /**
   * Set when the list is not proven whole: why, naming the sign (`pageInfo.hasNextPage = true`,
   * `header X-Total-Count = 4, 2 items read`, the byte budget or the bound on pages reached).
   * Its items may be stored, but nothing is delisted, closed or removed by it, and no child
   * is taken for gone (no `wholeUnder`).
   */
  incomplete?: string;
}

/**
 * A job read from one response of its route, declared by what it asks (`request`, default: the
 * route alone), the `schema` of the response's `data`, and `read`: pure, the response to rows,
 * or a Refusal. The outcome's `asOf` and `hash` default to the response's.
 */
export interface OneResponse<P, S extends z.ZodType> {
  request?(payload: P): RouteRequest;
  schema: S;
  /** Where its items lie in `data`, each refusable alone (`Ask.items`); absent: refused whole. */
  items?: ItemsLocator;
  read(input: ReadInput<P>, fetched: Fetched<z.output<S>>): Outcome | Refusal;
}

/** The Reader of a job read from one response of `route`. */
export function oneResponse<P, S extends z.ZodType>(route: RouteName, one: OneResponse<P, S>): Reader<P> {
  return {
    asks: (input) => [{ route, ...one.request?.(input.payload), schema: one.schema, ...(one.items ? { items: one.items } : {}) }],
    read(input, got) {
      const fetched = got[0]!.fetched as Fetched<z.output<S>>;
      const read = one.read(input, fetched);
      return 'refused' in read ? read : { asOf: fetched.meta.asOf, hash: fetched.response.sha256, ...read };
    },
  };
}

