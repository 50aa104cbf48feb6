// Lists served in pages (`SimPaging` in types.ts). A paged route answers one page of its list:
// `meta.count` counts the page, `meta.total` (unless turned off) the whole list, and the page
// names the next one in the configured form. The pages are addressed by `?page=N` (1-based) in
// the link and page-number forms, by an opaque `?cursor=` in the cursor forms and by an opaque
// `?pageToken=` in 'pageToken'; other query parameters are kept in every next link. Faults for
// readers to refuse: a `meta.total` larger than the list, a last page that names an earlier
// page again (a loop), and the forms that say more pages exist but name no way to ask them
// ('pagesNoLink', 'moreNoLink'), or say it in words tesync does not follow ('signs', each of
// `PAGING_SIGNS`); a list that never ends ('endless'). And a list that changes between its
// pages (`drift`): on the first reads of a list, the pages after the first come from the list
// without its first item (`PageDrift` counts the reads).
import type { DataRouteKind } from './forms.ts';
import type { PageForm, PagingSign, SimPaging } from './types.ts';

/** The forms that name the next page by a link or a cursor (`test/engine/fetch/pages.test.ts` syncs through each). */
export const PAGE_FORMS: readonly PageForm[] = ['metaNext', 'linksNext', 'linkHeader', 'cursor', 'topNext', 'topCursor'];
/**
 * Other paging vocabularies (`test/engine/paging-vocabularies.test.ts` syncs through each): page
 * numbers, Laravel's, a page token, a `pagination` object; and two that name no way to the
 * pages they say exist.
 */
export const VOCABULARY_FORMS: readonly PageForm[] = ['pageNumbers', 'laravel', 'pageToken', 'pagination', 'pagesNoLink', 'moreNoLink'];
/** Lists not whole in words tesync does not follow ('signs'), and one that never ends ('endless'). */
export const OTHER_PAGE_FORMS: readonly PageForm[] = ['signs', 'endless'];
/** Every form the simulator serves. */
export const ALL_PAGE_FORMS: readonly PageForm[] = [...PAGE_FORMS, ...VOCABULARY_FORMS, ...OTHER_PAGE_FORMS];

/** What one sign adds to a page of the 'signs' form: top-level fields, `meta` fields, headers. */
export interface SignPart {
  top?: Record<string, unknown>;
  meta?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** What a page of the 'signs' form knows of its list: its length, the page size, the number of pages, its own URL. */
interface SignList {
  length: number;
  size: number;
  pages: number;
  url: string;
}

/**
 * Signs that more items exist, in words tesync does not follow, each with a twin in the other
 * place (a body field and an `X-` header): GraphQL's `pageInfo`, GitLab's `X-Total` /
 * `X-Total-Pages` / `X-Next-Page`, the widely used `X-Total-Count`, Atlassian's `isLastPage`,
 * S3's `truncated`, Azure's `continuationToken`, an offset, a remaining count, Laravel's
 * `last_page_url`; in camelCase, snake_case, kebab-case, PascalCase and capitals.
 */
export const PAGING_SIGNS: Readonly<Record<PagingSign, (l: SignList) => SignPart>> = {
  pageInfo: () => ({ top: { pageInfo: { hasNextPage: true, endCursor: 'c2' } } }),
  isLastPage: () => ({ top: { isLastPage: false } }),
  truncated: () => ({ top: { truncated: true } }),
  continuationToken: () => ({ top: { continuationToken: 'c2' } }),
  nextOffset: (l) => ({ top: { next_offset: l.size } }),
  remaining: (l) => ({ top: { remaining: l.length - l.size } }),
  lastPageUrl: (l) => ({ top: { current_page: 1, last_page_url: `${l.url}?page=${l.pages}` } }),
  metaHasMore: () => ({ meta: { HasMore: true } }),
  bodyTotal: (l) => ({ top: { TOTAL: l.length } }),
  bodyTotalPages: (l) => ({ meta: { Total_Pages: l.pages } }),
  bodyNextPage: () => ({ top: { 'next-page': 2 } }),
  bodyTotalCount: (l) => ({ meta: { 'total-count': l.length } }),
  xHasNextPage: () => ({ headers: { 'X-Has-Next-Page': 'true' } }),
  xIsLastPage: () => ({ headers: { 'X-Is-Last-Page': 'false' } }),
  xTruncated: () => ({ headers: { 'X-Truncated': 'true' } }),
  xContinuationToken: () => ({ headers: { 'X-Continuation-Token': 'c2' } }),
  xNextOffset: (l) => ({ headers: { 'X-Next-Offset': String(l.size) } }),
  xRemaining: (l) => ({ headers: { 'X-Remaining': String(l.length - l.size) } }),
  xLastPageUrl: (l) => ({ headers: { 'X-Current-Page': '1', 'X-Last-Page-Url': `${l.url}?page=${l.pages}` } }),
  xHasMore: () => ({ headers: { 'X-HAS-MORE': 'true' } }),
  xTotal: (l) => ({ headers: { 'X-Total': String(l.length) } }),
  xTotalPages: (l) => ({ headers: { 'X-Total-Pages': String(l.pages) } }),
  xNextPage: () => ({ headers: { 'X-Next-Page': '2' } }),
  xTotalCount: (l) => ({ headers: { 'X-Total-Count': String(l.length) } }),
};
export const ALL_PAGING_SIGNS = Object.keys(PAGING_SIGNS) as PagingSign[];
export const PAGE_TOTALS: readonly SimPaging['total'][] = ['none', 'exact', 'larger'];

/** The forms that name the next page by a cursor asked back as `?cursor=`, or a token as `?pageToken=` (the others by `?page=N`). */
const CURSOR_FORMS: readonly PageForm[] = ['cursor', 'topCursor'];
/** The forms that serve page 1 only: they say more pages exist but name no way to ask them. */
const FIRST_PAGE_ONLY: readonly PageForm[] = ['pagesNoLink', 'moreNoLink', 'signs'];
/** The query parameter that addresses a page in `form`. */
export const pageParam = (form: PageForm): 'cursor' | 'pageToken' | 'page' => (CURSOR_FORMS.includes(form) ? 'cursor' : form === 'pageToken' ? 'pageToken' : 'page');
const opaque = (form: PageForm) => pageParam(form) !== 'page';

/** The lists served in pages unless `routes` says otherwise. */
export const PAGED_ROUTES: readonly DataRouteKind[] = ['app.tokens', 'gateway.tokens', 'app.screener', 'gateway.screener', 'app.charts', 'gateway.charts'];

export const NO_PAGING: SimPaging = { pageSize: 0, form: 'metaNext', routes: [...PAGED_ROUTES], total: 'exact', loop: false, drift: 0 };

export function mergePaging(current: SimPaging, partial: Partial<SimPaging>): SimPaging {
  const defined = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined)) as Partial<SimPaging>;
  const next = { ...current, ...defined, routes: [...(defined.routes ?? current.routes)] };
  if (!Number.isInteger(next.pageSize) || next.pageSize < 0) throw new RangeError(`simulator option paging.pageSize must be an integer >= 0, got ${String(next.pageSize)}`);
  if (!ALL_PAGE_FORMS.includes(next.form)) throw new RangeError(`simulator option paging.form must be one of ${ALL_PAGE_FORMS.join(', ')}`);
  if (!PAGE_TOTALS.includes(next.total)) throw new RangeError(`simulator option paging.total must be one of ${PAGE_TOTALS.join(', ')}`);
  const unknownSign = (next.signs ?? []).find((s) => !Object.hasOwn(PAGING_SIGNS, s));
  if (unknownSign !== undefined) throw new RangeError(`simulator option paging.signs must hold only ${ALL_PAGING_SIGNS.join(', ')}, got ${String(unknownSign)}`);
  const drift = next.drift ?? 0;
  if (!(drift === Infinity || (Number.isInteger(drift) && drift >= 0))) throw new RangeError(`simulator option paging.drift must be an integer >= 0 or Infinity, got ${String(next.drift)}`);
  return next;
}

const encodeCursor = (offset: number, kind = 'offset') => Buffer.from(`${kind}:${offset}`).toString('base64url');
function decodeCursor(cursor: string, kind = 'offset'): number | null {
  const m = new RegExp(`^${kind}:(\\d{1,9})$`).exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : null;
}
/** A page token is a cursor of its own kind: a cursor is no token, and no token a cursor. */
const TOKEN_KIND = 'token';

export interface PageRequest {
  /** the simulator's own URL, for absolute links */
  baseUrl: string;
  /** path without query, as received */
  path: string;
  query: URLSearchParams;
}

export type PagedAnswer =
  | { kind: 'page'; data: unknown[]; meta: Record<string, unknown>; top: Record<string, unknown>; headers: Record<string, string> }
  | { kind: 'bad'; detail: string }
  | null;

/**
 * The reads of each paged list, for `drift`: a request for page 1 starts a read; the pages
 * after it belong to the last read started of the same list (route and query without the page
 * or cursor).
 */
export class PageDrift {
  private readonly reads = new Map<string, number>();

  /** forgets every read (when `drift` is set again) */
  reset(): void {
    this.reads.clear();
  }

  /** whether page `index` (0-based) of the list `key` is served from the changed list */
  drifted(drift: number, key: string, index: number): boolean {
    if (!(drift > 0)) return false;
    const started = this.reads.get(key) ?? 0;
    if (index === 0) {
      this.reads.set(key, started + 1);
      return false;
    }
    return started >= 1 && started <= drift;
  }
}

/** The list a read is counted on: the path and its query without the page or the cursor, sorted. */
function readKey(req: PageRequest): string {
  const q = [...req.query].filter(([k]) => k !== 'page' && k !== 'cursor' && k !== 'pageToken').sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return `${req.path}?${new URLSearchParams(q).toString()}`;
}

/**
 * One page of `list` (null: the route is not paged, and the whole list is served as it is).
 * With `drift` on and `reads` given, a later page of one of the first `drift` reads is served
 * from the list without its first item: its `meta.total` one less, every item one place earlier
 * (a page the read's page 1 named is still served, empty when the shorter list has no such page).
 */
export function pageOf(p: SimPaging, kind: DataRouteKind | null, whole: unknown, meta: Record<string, unknown>, req: PageRequest, reads?: PageDrift): PagedAnswer {
  if (p.pageSize === 0 || kind === null || !p.routes.includes(kind) || !Array.isArray(whole)) return null;
  const size = p.pageSize;
  // the pages that exist, as page 1 of this list says
  const named = Math.max(1, Math.ceil(whole.length / size));
  let index: number;
  const param = pageParam(p.form);
  const cursorKind = param === 'pageToken' ? TOKEN_KIND : 'offset';
  if (opaque(p.form)) {
    const raw = req.query.get(param);
    const offset = raw === null ? 0 : decodeCursor(raw, cursorKind);
    if (offset === null || offset % size !== 0 || offset / size >= named) return { kind: 'bad', detail: `The ${param === 'cursor' ? 'cursor' : 'page token'} is not valid.` };
    index = offset / size;
  } else if (FIRST_PAGE_ONLY.includes(p.form)) {
    if (req.query.has('page')) return { kind: 'bad', detail: 'This list takes no page parameter.' };
    index = 0;
  } else {
    const raw = req.query.get('page');
    if (raw !== null && !/^[1-9]\d{0,8}$/.test(raw)) return { kind: 'bad', detail: 'page must be a whole number from 1.' };
    index = raw === null ? 0 : Number(raw) - 1;
    if (index >= named && p.form !== 'endless') return { kind: 'bad', detail: `page must be at most ${named}.` };
  }
  const drifted = reads !== undefined && reads.drifted(p.drift ?? 0, `${kind} ${readKey(req)}`, index);
  const list = drifted ? whole.slice(1) : whole;
  const pages = Math.max(1, Math.ceil(list.length / size));
  const items = list.slice(index * size, (index + 1) * size);
  const last = index >= pages - 1;
  // A loop: the last page names again the page after the first (or the first, of a one-page list).
  const nextIndex = p.form === 'endless' ? index + 1 : !last ? index + 1 : p.loop ? Math.min(1, pages - 1) : null;
  const out: PagedAnswer = { kind: 'page', data: items, meta: { ...meta, count: items.length }, top: {}, headers: {} };
  const total = p.total === 'none' ? undefined : list.length + (p.total === 'larger' ? 1 : 0);
  if (total !== undefined && p.form !== 'laravel' && p.form !== 'pagination') out.meta.total = total;
  // Stripe's and Slack's pair: `has_more` on every page, false on the last.
  if (p.form === 'topCursor') out.top.has_more = nextIndex !== null;
  const query = new URLSearchParams(req.query);
  if (nextIndex !== null) query.set('page', String(nextIndex + 1));
  const search = `?${query.toString()}`;
  // The vocabularies that say where the page is among the pages.
  if (p.form === 'pageNumbers') Object.assign(out.meta, { page: index + 1, pageSize: size, totalPages: pages });
  else if (p.form === 'pagesNoLink') Object.assign(out.meta, { pageSize: size, totalPages: pages });
  else if (p.form === 'moreNoLink') out.meta.hasMore = nextIndex !== null ? 1 : 0;
  else if (p.form === 'signs' && nextIndex !== null) {
    for (const sign of p.signs ?? ALL_PAGING_SIGNS) {
      const part = PAGING_SIGNS[sign]({ length: list.length, size, pages, url: `${req.baseUrl}${req.path}` });
      Object.assign(out.top, part.top);
      Object.assign(out.meta, part.meta);
      Object.assign(out.headers, part.headers);
    }
  }
  else if (p.form === 'laravel') {
    Object.assign(out.top, { current_page: index + 1, last_page: pages, per_page: size, next_page_url: nextIndex === null ? null : `${req.baseUrl}${req.path}${search}` });
    if (total !== undefined) out.top.total = total;
  } else if (p.form === 'pagination') {
    out.top.pagination = { current_page: index + 1, total_pages: pages, per_page: size, has_more: String(nextIndex !== null), ...(total !== undefined ? { total } : {}) };
  }
  if (nextIndex === null) return out;
  if (p.form === 'cursor') out.meta.nextCursor = encodeCursor(nextIndex * size);
  else if (p.form === 'topCursor') out.top.next_cursor = encodeCursor(nextIndex * size);
  else if (p.form === 'pageToken') out.top.nextPageToken = encodeCursor(nextIndex * size, TOKEN_KIND);
  else if (p.form === 'metaNext') out.meta.next = `${req.path}${search}`;
  else if (p.form === 'linksNext' || p.form === 'endless') out.top.links = { next: `${req.baseUrl}${req.path}${search}` };
  // Django REST framework's form: a top-level absolute `next` beside the data.
  else if (p.form === 'topNext') out.top.next = `${req.baseUrl}${req.path}${search}`;
  // Relative to the request: a reader must resolve it against the page (RFC 8288).
  else if (p.form === 'linkHeader') out.headers.Link = `<${search}>; rel="next"`;
  return out;
}
