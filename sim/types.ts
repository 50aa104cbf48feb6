// The simulator's public interface. The CLI, the demo and every integration test code
// against exactly these names: change them only together with their users.
import type { SimDataset } from './dataset-types.ts';
import type { DataRouteKind } from './route-kinds.ts';

export interface KeyGrant {
  /** e.g. 'tokens:read' (every token) or 'tokens:read:<slug>' (one token) */
  scopes: string[];
  /** slugs the key has credits for, or 'all' */
  credits: 'all' | string[];
}

export interface BucketLimit {
  limit: number;
  windowMs: number;
}

export type RateLimitFields = 'x-ratelimit' | 'ietf' | 'ietf-legacy';

export interface RateLimitOptions {
  appPublic?: BucketLimit | null;
  appKey?: BucketLimit | null;
  gateway?: BucketLimit | null;
}

/**
 * What each app history stream states of itself (its `interval` and its `columns[]` units and
 * kinds; `generate-app.ts`' streamMeta):
 * - 'alike' (default): every stream of every token '1d', with the same columns[]
 * - 'distinct': the first token as 'alike'; every third token from the second (index 1, 4,
 *   7, ...) '1w' with holderFcf a `gauge`, for all its streams; on the remaining tokens (index
 *   2, 3, 5, 6, ...), the streams at odd positions (the second, the fourth, ...) '1w' with
 *   holderFcf a `gauge` and the erm columns stating no unit, the others as 'alike'. A reader that puts one stream's
 *   (or token's) interval, unit or kind on another's rows stores something the dataset does
 *   not say. One MetricHistory cannot hold streams that differ: the column forms of
 *   `stream=all` serve such a token's streams as 'list' (render.ts).
 */
export type HistoryStreams = 'alike' | 'distinct';

export interface SimOptions {
  host?: string;
  port?: number;
  seed?: number;
  tokens?: number;
  historyDays?: number;
  chartsPerToken?: number;
  epoch?: number;
  /**
   * the last history day at epoch 0, 'YYYY-MM-DD' (default ANCHOR_DATE, '2026-06-30'); every
   * date and `asOf` follows it. Data dates never read the wall clock: a test that wants data
   * of today (or of months ago) passes the date.
   */
  lastDate?: string;
  /** every token's freshness verdict (app `freshness`, gateway `dataFreshness`); absent: as seeded, 'ferrous' and every 19th generated token 'stale' */
  freshness?: 'fresh' | 'stale';
  /**
   * the app history streams' metadata (`HistoryStreams`): 'alike' (default), every stream '1d'
   * with the same columns[]; 'distinct', streams and tokens whose interval, units and kinds differ
   */
  historyStreams?: HistoryStreams;
  /**
   * upstream recomputing the same data: recomputation N serves every `asOf` and `generatedAt`
   * (meta, rows, MetricValues, freshness objects, sections, insights) N minutes later, a
   * date-only one as that day's timestamp; 'eachResponse' moves them on every response (by its
   * sequence number). Values and data dates stay as they are. Default 0: none.
   */
  recomputation?: number | 'eachResponse';
  appKeys?: Record<string, KeyGrant>;
  gatewayKeys?: string[];
  /** null/absent = unlimited (headers still sent, with a large budget) */
  rateLimits?: RateLimitOptions;
  retryAfterForm?: 'seconds' | 'http-date';
  /** gateway X-RateLimit-Reset (and RateLimit-Reset): seconds until reset, or the reset instant in epoch seconds */
  resetForm?: 'delta' | 'epoch';
  /**
   * The fields the budget is announced in (rate-limit.ts, `budgetHeaders`): 'x-ratelimit'
   * (default, the seeds' X-RateLimit-*), 'ietf' (RateLimit-Policy / RateLimit of
   * draft-ietf-httpapi-ratelimit-headers 08+) or 'ietf-legacy' (RateLimit-Limit /
   * -Remaining / -Reset of the earlier drafts). Same buckets, same 429s.
   */
  rateLimitFields?: RateLimitFields;
  latencyMs?: number | [number, number];
  /**
   * The simulator's clock (default `Date.now`): its rate windows, outages, `Date` headers and
   * request times. A test that waits on rate windows runs it fast, with the client's.
   */
  now?: () => number;
  forms?: Partial<SimForms>;
  faults?: Partial<SimFaults>;
  losses?: Partial<SimLosses>;
  /** routes answered with a redirect (`detours.ts`); more with `redirect()` */
  redirects?: SimRedirect[];
  /** an announced outage of one bucket (`detours.ts`); later with `setOutage()` */
  outage?: SimOutage;
  /** lists served in pages (`paging.ts`); absent: every list whole in one answer */
  paging?: Partial<SimPaging>;
  /** strings Postgres cannot hold, served in answers only (`hostile.ts`); later with `setHostile()` */
  hostile?: SimHostile[];
  /**
   * every 200 JSON answer carries `ETag: "<sha256 hex>"` of its body without `meta.servedAt`;
   * a request whose `If-None-Match` names it gets 304 with no body (`etag.ts`); later with
   * `setEtags()`. Default false.
   */
  etags?: boolean;
  /** answers that repeat the Bearer key they were sent (`echoes.ts`); later with `setEchoes()` */
  echoes?: SimEcho[];
}

/**
 * Where an echoed key goes: 'title' or 'detail' of a problem document, 'header' (the answer's
 * `WWW-Authenticate` error_description and `X-Request-Id`), 'html' (a text/html error page).
 */
export type EchoPlace = 'title' | 'detail' | 'header' | 'html';
/** How the key is written: see `echoForm` in echoes.ts (`prefix`, `suffix`: 12 characters of it). */
export type EchoForm = 'raw' | 'percent' | 'percentLower' | 'formEncoded' | 'jsonUnicode' | 'htmlNamed' | 'htmlDecimal' | 'htmlHexPadded' | 'prefix' | 'suffix';

/** Requests with a Bearer key whose path and query start with `path` get `status` (401 default) repeating the key in every one of `forms` (default all). */
export interface SimEcho {
  path: string;
  place: EchoPlace;
  status?: number;
  forms?: EchoForm[];
}

/**
 * Where a hostile string goes (answers only: `sim.data` keeps the clean value):
 * - 'tokenName': the token list item of `slug`: its `displayName` in `/api/v1/tokens`, or with
 *   source 'gateway' its `name` in `/v1/tokens`: `O'Reilly "Quote" <char>NUL 🚀 Token`
 * - 'snapshotField': the app snapshot (`/api/v1/tokens/{slug}`): the first stream's `label`
 *   becomes `Fees <char> stream` (a snapshot without streams: `token.displayName`)
 * - 'bundleString': the research bundle (`/api/v1/tokens/{slug}/full`): the first value
 *   driver's `description` becomes `Driver <char> note` (a bundle without drivers: `summary`)
 * - 'objectKey': the app snapshot gets an extra top-level member of `data`,
 *   `labels: { "note<char>": "x" }`: an object key holding the char
 * - 'screenerName': the screener row of `slug`: its `token.displayName` in `/api/v1/screener`
 *   (a row naming its token by a string gets `displayName` beside it), or with source
 *   'gateway' its `name` in `/v1/screener`: `Screener <char> name`
 * - 'chartPoint': the second row (the first of a one-row chart) of every chart of `slug`: in
 *   `/api/v1/tokens/{slug}/charts/{key}` its x cell becomes `Point <char> key` (a key column),
 *   or with source 'gateway', in `/v1/tokens/{slug}/charts/{key}` (every timeframe), it gets a
 *   member keyed `Point <char> key` (a series key) valued "1"
 */
export type HostilePlace = 'tokenName' | 'snapshotField' | 'bundleString' | 'objectKey' | 'screenerName' | 'chartPoint';
/** 'nul': U+0000, on the wire `\u0000`; 'surrogate': a lone high surrogate U+D83D, on the wire `\ud83d` */
export type HostileChar = 'nul' | 'surrogate';

export interface SimHostile {
  place: HostilePlace;
  char: HostileChar;
  /** the token whose answer carries it; default the first token of the source's token list */
  slug?: string;
  /** 'app' (default); 'gateway' only with place 'tokenName', 'screenerName' or 'chartPoint' */
  source?: 'app' | 'gateway';
}

/**
 * A route answered with a redirect instead of its data (after the rate limit counted it).
 * The target of 'alias' is the same route with `moved=1` added to its query (a route of the
 * seeds, exactly: tesync follows no other), a relative Location on the same host, which
 * serves exactly what the route itself serves and is never redirected again.
 */
export interface SimRedirect {
  /** the requests it answers: path and query (as received) starting with this */
  from: string;
  /** 301, 302, 303, 307 (default) or 308 */
  status?: number;
  /** 'alias' (default: the same route with `moved=1` added to its query), or a base URL (another host, e.g. http://127.0.0.1:9) the Location puts the same path and query on */
  to?: string;
  /** answered this many times, then the route serves again; default: every time */
  times?: number;
}

/**
 * An outage announced by `Retry-After`: from its first answer, every request of the bucket
 * gets 503 (the API's own code) with `Retry-After` counting down to the end, in
 * `retryAfterForm`, for `seconds`; then the bucket serves again. Requests answered by the
 * outage do not count on the rate limit. One outage at a time; it happens once.
 */
export interface SimOutage {
  bucket: 'app-public' | 'app-key' | 'gateway';
  seconds: number;
  /** requests of the bucket served normally before the outage starts (default 0) */
  after?: number;
}

/** An outage that happened: its bucket and when it ran (on the simulator's clock). */
export interface OutageWindow {
  bucket: SimOutage['bucket'];
  seconds: number;
  startedAt: number;
  endsAt: number;
}

/**
 * How a paged list names its next page:
 * - 'metaNext': `meta.next`, a path with query (`/api/v1/tokens?page=2`)
 * - 'linksNext': top-level `links.next`, an absolute URL on the simulator's own host
 * - 'linkHeader': an RFC 8288 header `Link: <?page=2>; rel="next"`, relative to the request
 * - 'cursor': `meta.nextCursor`, an opaque cursor asked back as `?cursor=`
 * - 'topNext': a top-level `next`, an absolute URL on the simulator's own host (Django REST
 *   framework's form)
 * - 'topCursor': a top-level `next_cursor` asked back as `?cursor=`, beside a top-level
 *   `has_more` on every page (true but on the last)
 *
 * Other vocabularies (`VOCABULARY_FORMS` in paging.ts):
 * - 'pageNumbers': `meta.page`, `meta.pageSize`, `meta.totalPages`, no next link; pages asked
 *   as `?page=N`
 * - 'laravel': top-level `current_page`, `last_page`, `per_page`, `next_page_url` (absolute,
 *   null on the last page) and `total` (in place of `meta.total`)
 * - 'pageToken': a top-level `nextPageToken` (Google's), asked back as `?pageToken=`
 * - 'pagination': a top-level `pagination` object: `current_page`, `total_pages`, `per_page`,
 *   `has_more` as the string "true" or "false", and `total` (in place of `meta.total`); pages
 *   asked as `?page=N`
 * - 'pagesNoLink': `meta.totalPages` and `meta.pageSize` only: no page number, no next page;
 *   `?page=` is a 400 (only page 1 is served), a list tesync must refuse
 * - 'moreNoLink': `meta.hasMore` as the number 1 (0 on the last page), no next page; `?page=`
 *   is a 400, a list tesync must take as incomplete
 *
 * Lists that are not whole in words tesync does not follow, and one that never ends:
 * - 'signs': page 1 only (`?page=` is a 400), saying more exists by the `signs` of SimPaging
 *   (`PAGING_SIGNS` in paging.ts: `pageInfo.hasNextPage`, `X-Total-Count`, ... in body and
 *   header twins), a list tesync must take as incomplete
 * - 'endless': every page N names `links.next` page N+1, for ever; the pages past the list's
 *   end are empty
 */
export type PageForm =
  | 'metaNext'
  | 'linksNext'
  | 'linkHeader'
  | 'cursor'
  | 'topNext'
  | 'topCursor'
  | 'pageNumbers'
  | 'laravel'
  | 'pageToken'
  | 'pagination'
  | 'pagesNoLink'
  | 'moreNoLink'
  | 'signs'
  | 'endless';

/**
 * A sign of more in words tesync does not follow (`PAGING_SIGNS` in paging.ts): body forms
 * (top level, `meta`, any letter case) and their header twins (`X-...`).
 */
export type PagingSign =
  | 'pageInfo'
  | 'isLastPage'
  | 'truncated'
  | 'continuationToken'
  | 'nextOffset'
  | 'remaining'
  | 'lastPageUrl'
  | 'metaHasMore'
  | 'bodyTotal'
  | 'bodyTotalPages'
  | 'bodyNextPage'
  | 'bodyTotalCount'
  | 'xHasNextPage'
  | 'xIsLastPage'
  | 'xTruncated'
  | 'xContinuationToken'
  | 'xNextOffset'
  | 'xRemaining'
  | 'xLastPageUrl'
  | 'xHasMore'
  | 'xTotal'
  | 'xTotalPages'
  | 'xNextPage'
  | 'xTotalCount';

/** Lists served in pages (`paging.ts`). */
export interface SimPaging {
  /** items per page; 0 (the default) serves every list whole */
  pageSize: number;
  /** default 'metaNext' */
  form: PageForm;
  /** the routes served in pages; default the token lists, the screeners and the chart catalogs of both APIs */
  routes: DataRouteKind[];
  /**
   * `meta.total` on every page: 'exact' (default) the list's length, 'none' left out,
   * 'larger' the length plus one (a list that says it holds more than it serves)
   */
  total: 'none' | 'exact' | 'larger';
  /** the last page names an earlier page again as its next (page 2, or page 1 of a one-page list) */
  loop: boolean;
  /** what a page of the 'signs' form says of more (`PAGING_SIGNS` in paging.ts); default every one */
  signs?: PagingSign[];
  /**
   * a list that changes between its pages: on the first `drift` reads of a paged list (a read:
   * its page 1 and the pages after it, counted per route and query without the page or
   * cursor), the pages after the first are served from the list without its first item, so
   * page 1 says `meta.total` N and the later pages N-1, and the item first on page 2 falls into
   * page 1's range, served on no page of that read. Then the list is served consistently.
   * 0 (default): never; `Infinity`: every read. Setting it starts the count again.
   */
  drift?: number;
}

/**
 * What an answer leaves out (served only while set; `losses.ts`):
 * - 'sections': the gateway token page without `sections`
 * - 'bundleArrays': the research bundle without `valueDrivers`, `valueDriverEdges` and `tokenFunctions`
 * - 'tokenListCut': the app and gateway token lists cut to their first 2 items, without
 *   `meta.count`; each list once after it is set (a list cut on the way), then whole again
 */
export type SimOmission = 'sections' | 'bundleArrays' | 'tokenListCut';

/** Sets that lose members, and answers that leave parts out (`losses.ts`). */
export interface SimLosses {
  /**
   * every set loses one member, in the data itself (`data` shows it): the second day of every
   * app history (every stream and metric), the second row of every app chart and of every
   * gateway chart timeframe, the second time of every gateway trend, the page section
   * 'charts', and the last row of each screener (app and gateway; the token stays listed)
   */
  removed: boolean;
  omitted: SimOmission[];
}

export type AppNumberForm = 'metricValue' | 'number' | 'string';
export type HistoryRowForm = 'arrays' | 'objects';
export type HistoryTimeForm = 'date' | 'timestamp' | 'epochSeconds' | 'epochMillis';
export type ChartKeyField = 'key' | 'chartKey' | 'id';
export type ChartLinkField = 'href' | 'dataEndpoint' | 'endpoint' | 'links.data';
export type GatewayRowToken = 'slug' | 'token.slug' | 'symbol';
/**
 * The shape of app history with `stream=all` (the seed leaves it open):
 * - 'list': an array of MetricHistory, one per stream, each with its `stream` key
 * - 'column': one MetricHistory (`stream: 'all'`) whose second column is
 *   `{ key: 'stream', type: 'dimension', label: 'Stream' }`; each row carries its stream key
 *   as a cell (arrays `[time, 'fees', ...]`, objects `{ date, stream, ... }`), rows ordered by
 *   date, then by the token's stream order
 * - 'columnUntyped': as 'column', but the dimension column is a bare `{ key: 'component' }`
 *   and row objects name the cell `component`
 * - 'nested': `{ token, interval, stream: 'all', streams: MetricHistory[] }`, the inner ones
 *   without the `interval` the head states for all
 * - 'keyed': `{ [streamKey]: MetricHistory }`, each inner one without its `stream` member
 * - 'ambiguous': one MetricHistory (`stream: 'all'`) holding every stream's rows one stream
 *   after another, with nothing telling them apart: a reader must refuse it
 */
export type HistoryAllForm = 'list' | 'column' | 'columnUntyped' | 'nested' | 'keyed' | 'ambiguous';

export interface SimForms {
  /** numeric fields of app screener rows and snapshots; 'mixed' = chosen per cell */
  appNumber: AppNumberForm | 'mixed';
  /** 'mixed' = chosen per MetricHistory document (token + stream) */
  historyRows: HistoryRowForm | 'mixed';
  /** 'mixed' = chosen per MetricHistory document (token + stream) */
  historyTime: HistoryTimeForm | 'mixed';
  /** app and gateway chart catalog items; 'mixed' = chosen per item */
  chartKeyField: ChartKeyField | 'mixed';
  /**
   * unset = 'dataEndpoint' on the app host, 'href' on the gateway; 'mixed' = per item;
   * setForms({ chartLinkField: undefined }) goes back to those defaults
   */
  chartLinkField: ChartLinkField | 'mixed';
  /** the first catalog item links to http://evil.invalid/..., the second to /v1/internal/... */
  hostileLinks: boolean;
  /** how gateway screener rows name their token; 'mixed' = chosen per row */
  gatewayRowToken: GatewayRowToken | 'mixed';
  /**
   * app history with `stream=all` (see HistoryAllForm; 'list' is the default); 'mixed' = chosen
   * per token. Requests for one stream, or without `stream`, always get one MetricHistory.
   */
  historyAll: HistoryAllForm | 'mixed';
  /**
   * app chart data gets a last column `{ key: 'note', type: 'label', label: 'Note' }` with a
   * text cell ('estimated' or 'reported') on every row; the dataset's chart data is unchanged
   */
  chartLabels: boolean;
  /**
   * route name (tesync's, e.g. 'app.tokens', 'gateway.chart') -> a field added with the value
   * 'added' to every top-level object of that route's `data` (each item of an array); a
   * member of that name already there is left alone. setForms replaces the whole map.
   */
  addedFields: Record<string, string>;
  /**
   * route name -> a key named twice: the first object of that route's body that has the key
   * gets it once more, before it, with the value "0" (RFC 8259 leaves such a body's meaning
   * open). setForms replaces the whole map.
   */
  duplicatedKeys: Record<string, string>;
  rateLimitResetForm?: never;
}

export interface SimFaults {
  errorRate: number;
  unavailableRate: number;
  truncateRate: number;
  invalidJsonRate: number;
  schemaViolationRate: number;
  resetRate: number;
  stallMs: number;
  dateSkewMs: number;
  hugeBodyBytes: number;
  endlessBody: boolean;
  /** when set, every fault but dateSkewMs applies only to paths (with query) containing this */
  pathFilter?: string;
}

/**
 * A forced answer. `status: 0` destroys the socket without a response. A 2xx without `body`
 * gets the normal response (plus `headers`). Otherwise a problem document in the style of the
 * path's API is sent (code defaults from the status), unless `body` is given verbatim.
 */
export interface ScriptedResponse {
  status: number;
  /**
   * Holds this one request this many milliseconds of real time (after `latencyMs`) before it
   * is answered as above; the requests after it are not held. The request is recorded on
   * arrival with status 0 until the answer goes out; close() ends the hold unanswered.
   */
  delayMs?: number;
  code?: string;
  retryAfter?: string;
  headers?: Record<string, string>;
  body?: string;
  extensions?: Record<string, unknown>;
}

export type BucketName = 'app-public' | 'app-key' | 'gateway' | 'none';

export interface RecordedRequest {
  seq: number;
  /** On arrival, on the simulator's clock (`SimulatorOptions.now`) */
  at: number;
  method: string;
  /** path and query exactly as received */
  path: string;
  /** lower-cased names; repeated headers joined with ', ' */
  headers: Record<string, string>;
  remoteAddress: string;
  bucket: BucketName;
  /** what was sent; 0 while pending or when the socket was reset */
  status: number;
  /** the `If-None-Match` header as received (absent when it was not sent) */
  ifNoneMatch?: string;
  /**
   * sha256 hex of the exact bytes written as the response body, after every body fault (a
   * 304 or an empty body: the sha256 of nothing; a body cut short: of what was written).
   * Set as the body is written; absent while pending or when the socket was reset.
   */
  bodySha256?: string;
  /**
   * When its bucket's budget counted it, on the simulator's clock: after the simulated latency,
   * so requests are counted in this order, not in the order of `at` (absent when no budget
   * counted it: a bucket without one, an outage's 503, a scripted answer).
   */
  countedAt?: number;
  /**
   * Counted in a rate window after the request that brought its remaining budget to 0 (whose
   * answer announced it): sent into a window announced exhausted.
   */
  intoExhausted?: true;
}

export interface Simulator {
  /** http://127.0.0.1:<port>: the app base URL (/api/v1/...) and the gateway base URL (/v1/...) */
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  resetRequests(): void;
  setEpoch(epoch: number): void;
  /** serves recomputation N (or a new one per response) of the current epoch: see SimOptions.recomputation */
  setRecomputation(r: number | 'eachResponse'): void;
  /** merges into the current faults */
  setFaults(faults: Partial<SimFaults>): void;
  clearFaults(): void;
  /** merges into the current forms */
  setForms(forms: Partial<SimForms>): void;
  /** merges into the current losses; setting `omitted` again cuts each token list once more */
  setLosses(losses: Partial<SimLosses>): void;
  /** merges into the current paging (`SimPaging`); giving `drift` starts its count of reads again */
  setPaging(paging: Partial<SimPaging>): void;
  /** replaces the hostile strings served (`SimHostile`); `[]` serves none */
  setHostile(list: SimHostile[]): void;
  /** turns ETags and 304 answers on or off (see SimOptions.etags) */
  setEtags(on: boolean): void;
  /** replaces the key echoes (`SimEcho`); `[]` serves none */
  setEchoes(list: SimEcho[]): void;
  /** replaces every bucket's limit and starts fresh windows */
  setRateLimits(r: SimOptions['rateLimits']): void;
  script(pathPrefix: string, responses: ScriptedResponse[]): void;
  /** adds a redirect (see SimRedirect); `clearRedirects()` removes every one */
  redirect(r: SimRedirect): void;
  clearRedirects(): void;
  /** arms an outage (replacing one armed or running); null ends it */
  setOutage(o: SimOutage | null): void;
  /** the outages that started, in order */
  readonly outages: readonly OutageWindow[];
  /** the truth for the current epoch */
  readonly data: SimDataset;
  close(): Promise<void>;
}
