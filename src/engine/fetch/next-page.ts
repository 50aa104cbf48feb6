// Pure: what a page of a list says about the pages after it (contract: "Lists may come in
// pages"). Upstreams name paging in many vocabularies; each is read here, in `meta`, at the top
// level, or inside a `pagination` / `paging` object (`meta.pagination`, `meta.paging` too):
//
// - a next page's URL: `next`, `links.next`, `_links.next.href`, `next_page_url`, `nextLink`
//   and their kin, or an RFC 8288 `Link` header with rel="next";
// - a cursor (`nextCursor`, `next_cursor`, `meta.cursor`, ...), asked back as `?cursor=`;
// - a page token (`nextPageToken`, `next_page_token`), asked back as `?pageToken=` (Google's
//   AIP-158 name, for either spelling). A page that also gives a next link names the parameter
//   itself: the link is followed, and the token must be in its query;
// - a page number: the page's own (`page`, `current_page`, `currentPage`, `pageNumber`,
//   `meta.page.number`) with the number of pages (`totalPages`, `total_pages`, `last_page`,
//   `pageCount`, `page_count`, `pages`, `num_pages`): when they say a next page exists, it is
//   asked as `?page=N+1` on the page's own path, every other query parameter kept. Page numbers
//   count from 1, or from 0 when the first page says it is page 0. A next page number given
//   outright (`next_page: 2`) is asked the same way. Without the page's own number nothing is
//   asked: a page count alone is a sign of more that cannot be followed;
// - what the page says of the whole list: a total of items (`total`, `totalCount`,
//   `total_count`, `totalItems`, ...), and "more exists" (`hasMore`, `has_more`, `more`,
//   `hasNext`, `hasNextPage`, ...) in any JSON truthy form: true, a number other than 0, or one
//   of the strings "true", "t", "yes", "y", "on", "1" (trimmed, any case); false, null, 0 and
//   "false", "f", "no", "n", "off", "0", "" say no more. Any other value cannot be read, and is
//   taken as a sign of more.
//
// A paging field whose value cannot be read (a total that is not a count, a next page that is
// neither a URL nor a number, two different totals on one page) is listed in `unreadable`:
// the reader refuses the list. Beside these vocabularies, every field and header whose name
// speaks of paging in any words is kept as said (`said`, the rule in paging-signs.ts): what
// tesync cannot follow of it makes the list incomplete, never whole. Nothing here decides
// whether a link may be followed: that is resolveLink's (safe-url.ts).
import { isRecord, readDecimal, readInt } from '../../schema/upstream/values.ts';
import { writtenAsUri } from '../../upstream/safe-url.ts';
import { pagingFields, shown, truthy, type PagingField } from './paging-signs.ts';

/** The query parameter a cursor goes back in (dlt's and Airbyte's cursor paginators' default). */
export const CURSOR_PARAM = 'cursor';
/** The query parameter a page token goes back in (Google's AIP-158 `pageToken`). */
export const TOKEN_PARAM = 'pageToken';
/** The query parameter a page number is asked in. */
export const PAGE_PARAM = 'page';

export type NextPage =
  | { kind: 'link'; link: string; where: string }
  | { kind: 'cursor'; cursor: string; param: string; where: string }
  | { kind: 'page'; page: number; where: string };

export interface PageSignals {
  /** Every place the page names a next page (a page may name it in several). */
  nexts: NextPage[];
  /** How many items the whole list holds, where the page says (`meta.total` and its kin). */
  total: number | undefined;
  /** The page says more items exist (`hasMore` and its kin, or a value that cannot be read). */
  more: boolean;
  /** Where and how the page says more items exist (`meta.hasMore is "true"`). */
  moreSaid?: string | undefined;
  /** The page's own number, as it states it. */
  page?: { number: number; where: string } | undefined;
  /** How many pages the list has, as the page states it (`totalPages` and its kin; `last_page` counted from 1). */
  pages?: { count: number; where: string } | undefined;
  /** Paging fields whose value cannot be read: each makes the list not understood. */
  unreadable?: string[] | undefined;
  /**
   * Every field and header whose name speaks of paging, followed or not (paging-signs.ts):
   * what the list says of more, judged once it is read (a list is whole only when it proves it).
   */
  said?: PagingField[] | undefined;
}

export interface PageContext {
  /** The number the list's first page gave itself (0 or 1): what later pages count from. */
  firstPage?: number | undefined;
}

type Path = readonly string[];

/** The objects paging fields are found in. */
const CONTAINERS: readonly Path[] = [[], ['meta'], ['pagination'], ['meta', 'pagination'], ['paging'], ['meta', 'paging']];
/** A `page` object (`meta.page: { number, totalPages }`). */
const PAGE_OBJECTS: readonly Path[] = [['page'], ['meta', 'page']];
const inEach = (containers: readonly Path[], keys: readonly (string | Path)[]): Path[] =>
  containers.flatMap((c) => keys.map((k) => [...c, ...(typeof k === 'string' ? [k] : k)]));

// Where common APIs put the next page's URL (JSON:API `links.next`, HAL `_links.next.href`,
// Facebook's `paging.next`, Laravel's `next_page_url`, Azure's `nextLink`, a bare `next`) ...
const LINK_PLACES: readonly Path[] = [
  ...inEach(CONTAINERS, ['next', ['links', 'next'], 'next_page_url', 'nextPageUrl', 'next_url', 'nextUrl', 'nextLink', 'next_link']),
  ['_links', 'next'],
  ['@odata.nextLink'],
];
// ... its number (`next_page: 2`; a URL given there is a link) ...
const NEXT_NUMBER_PLACES: readonly Path[] = inEach(CONTAINERS, ['next_page', 'nextPage', 'next_page_number', 'nextPageNumber']);
// ... its cursor (Stripe-like `next_cursor`, `meta.cursor`, dlt's `cursors.next`, Slack's `response_metadata.next_cursor`) ...
const CURSOR_PLACES: readonly Path[] = [
  ...inEach(CONTAINERS, ['nextCursor', 'next_cursor']),
  ['meta', 'cursor'],
  ['meta', 'cursors', 'next'],
  ['meta', 'cursor', 'next'],
  ['response_metadata', 'next_cursor'],
];
// ... and its token (Google's `nextPageToken`).
const TOKEN_PLACES: readonly Path[] = inEach(CONTAINERS, ['nextPageToken', 'next_page_token']);
const TOTAL_PLACES: readonly Path[] = [
  ...inEach(CONTAINERS, ['total', 'totalCount', 'total_count', 'totalItems', 'total_items', 'totalResults', 'total_results']),
  ['meta', 'page', 'total'],
];
const MORE_PLACES: readonly Path[] = inEach(CONTAINERS, ['hasMore', 'has_more', 'more', 'hasNext', 'has_next', 'hasNextPage', 'has_next_page', 'hasMorePages', 'has_more_pages']);
const PAGE_PLACES: readonly Path[] = [...inEach(CONTAINERS, ['page', 'current_page', 'currentPage', 'pageNumber', 'page_number']), ...inEach(PAGE_OBJECTS, ['number', 'current'])];
/** The number of pages; `last_page` is the last page's number, so a count only counted from 1. */
const PAGES_PLACES: readonly Path[] = [
  ...inEach(CONTAINERS, ['totalPages', 'total_pages', 'pageCount', 'page_count', 'num_pages', 'last_page', 'lastPage']),
  ...inEach(CONTAINERS.slice(1), ['pages']),
  ...inEach(PAGE_OBJECTS, ['totalPages', 'total_pages']),
];

function at(body: unknown, path: Path): unknown {
  let v = body;
  for (const k of path) {
    if (!isRecord(v) || !Object.hasOwn(v, k)) return undefined;
    v = v[k];
  }
  return v;
}

/** Nothing said: absent, null, false or empty. */
const silent = (v: unknown) => v === undefined || v === null || v === false || v === '';

/** A link value: a string, or a HAL/JSON:API link object `{ href }`. */
function linkText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (isRecord(v) && typeof v.href === 'string') return v.href;
  return undefined;
}

/** A cursor value: a string or a whole number (a LosslessNumber keeps its digits). */
function cursorText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (isRecord(v) || v === null || typeof v === 'boolean') return undefined;
  const d = readDecimal(v);
  return d.ok && d.value !== null && /^\d+$/.test(d.value) ? d.value : undefined;
}

/** A count or a page number: a whole number from 0 (a string of digits too). */
function wholeNumber(v: unknown): number | undefined {
  const n = readInt(v);
  return n !== undefined && n >= 0 ? n : undefined;
}

/**
 * RFC 8288 `Link` header: the targets whose `rel` names `next` (rel is a space-separated,
 * case-insensitive list). Commas inside `<...>` or quoted strings do not split links.
 */
export function nextFromLinkHeader(value: string | undefined): string[] {
  if (!value) return [];
  const out: string[] = [];
  const re = /<([^>]*)>((?:\s*;\s*[^;,=\s]+\s*(?:=\s*(?:"(?:[^"\\]|\\.)*"|[^;,\s]*))?)*)/g;
  for (const m of value.matchAll(re)) {
    const params = m[2] ?? '';
    for (const p of params.matchAll(/;\s*([^;,=\s]+)\s*(?:=\s*(?:"((?:[^"\\]|\\.)*)"|([^;,\s]*)))?/g)) {
      if ((p[1] ?? '').toLowerCase() !== 'rel') continue;
      const rels = (p[2] ?? p[3] ?? '').toLowerCase().split(/\s+/);
      if (rels.includes('next')) out.push(m[1] ?? '');
      break;
    }
  }
  return out;
}

/**
 * The one number the places give (a page number, a page count, a total), or why not: two
 * places that give different numbers, or a value that is not a whole number. A record is a
 * container (`meta.page: { number }`), not a value.
 */
function oneNumber(body: unknown, places: readonly Path[], what: { one: string; many: string }, unreadable: string[]): { n: number; where: string } | undefined {
  const found: { n: number; where: string }[] = [];
  for (const path of places) {
    const v = at(body, path);
    if (v === undefined || v === null || isRecord(v)) continue;
    const n = wholeNumber(v);
    if (n === undefined) unreadable.push(`${path.join('.')} is ${shown(v)}, not ${what.one}`);
    else found.push({ n, where: path.join('.') });
  }
  if (new Set(found.map((f) => f.n)).size > 1) {
    unreadable.push(`the page gives different ${what.many} (${found.map((f) => `${f.where} ${f.n}`).join(', ')})`);
    return undefined;
  }
  return found[0];
}

/**
 * Pure: the next page a response names, and what it says of the whole list. `context` says
 * what the list's first page said of its own number (what page numbers count from).
 */
export function readPageSignals(body: unknown, headers: Readonly<Record<string, string>>, context: PageContext = {}): PageSignals {
  const found: NextPage[] = [];
  const unreadable: string[] = [];
  const link = (v: unknown, where: string) => {
    const text = linkText(v);
    if (text !== undefined) found.push({ kind: 'link', link: text, where });
    else unreadable.push(`${where} is ${shown(v)}, not a next page tesync can read`);
  };
  for (const l of nextFromLinkHeader(headers.link)) found.push({ kind: 'link', link: l, where: 'Link header' });
  for (const path of LINK_PLACES) {
    const v = at(body, path);
    if (!silent(v)) link(v, path.join('.'));
  }
  for (const path of NEXT_NUMBER_PLACES) {
    const v = at(body, path);
    if (silent(v)) continue;
    const where = path.join('.');
    const n = typeof v === 'string' && !/^\s*\d+\s*$/.test(v) ? undefined : wholeNumber(v);
    if (n !== undefined) found.push({ kind: 'page', page: n, where });
    else link(v, where);
  }
  for (const [places, param] of [
    [CURSOR_PLACES, CURSOR_PARAM],
    [TOKEN_PLACES, TOKEN_PARAM],
  ] as const) {
    for (const path of places) {
      const v = at(body, path);
      if (silent(v) || isRecord(v)) continue;
      const cursor = cursorText(v);
      if (cursor !== undefined) found.push({ kind: 'cursor', cursor, param, where: path.join('.') });
      else unreadable.push(`${path.join('.')} is ${shown(v)}, not a next page tesync can read`);
    }
  }

  const total = oneNumber(body, TOTAL_PLACES, { one: 'a count of items', many: 'counts of items' }, unreadable);
  const page = oneNumber(body, PAGE_PLACES, { one: 'a page number', many: 'page numbers' }, unreadable);
  const pages = oneNumber(body, PAGES_PLACES, { one: 'a count of pages', many: 'counts of pages' }, unreadable);
  if (page && pages) {
    // The last page's number, counting from the first page's (or from this page's, when it is page 0).
    const first = context.firstPage ?? (page.n === 0 ? 0 : 1);
    if (page.n < first + pages.n - 1) found.push({ kind: 'page', page: page.n + 1, where: `${page.where} of ${pages.where}` });
  }

  let moreSaid: string | undefined;
  for (const path of MORE_PLACES) {
    const v = at(body, path);
    if (v === undefined) continue;
    const yes = truthy(v);
    if (yes === false) continue;
    moreSaid ??= `${path.join('.')} is ${shown(v)}${yes === undefined ? ', not a yes or no' : ''}`;
  }
  return {
    nexts: found,
    total: total?.n,
    more: moreSaid !== undefined,
    moreSaid,
    page: page && { number: page.n, where: page.where },
    pages: pages && { count: pages.n, where: pages.where },
    unreadable,
    said: pagingFields(body, headers),
  };
}

export type ChosenNext = { link: string } | { cursor: string; param: string } | { conflict: string } | null;

/**
 * Pure: the one next page the places agree on. Links are compared once resolved against the
 * page; a cursor or token given beside a link must be in the link's query (the usual pair),
 * and a next page number must be the link's `page` when the link has one, else the page says
 * two things and is not understood. Without a link, a cursor or token is asked back in its
 * parameter; without either, a next page number is asked as `?page=N` on the page's own path
 * and query.
 */
export function chooseNext(nexts: readonly NextPage[], pagePath: string): ChosenNext {
  if (nexts.length === 0) return null;
  const links = new Set<string>();
  const cursors = new Map<string, { cursor: string; param: string }>();
  const numbers = new Set<number>();
  for (const n of nexts) {
    if (n.kind === 'cursor') cursors.set(`${n.param}=${n.cursor}`, { cursor: n.cursor, param: n.param });
    else if (n.kind === 'page') numbers.add(n.page);
    else {
      const ref = againstPage(n.link, pagePath);
      if (ref === null) return { conflict: `a next link in ${n.where} cannot be read` };
      links.add(ref);
    }
  }
  const where = nexts.map((n) => n.where).join(', ');
  // The same path and query given absolute in one place and relative in another is one page:
  // the absolute form is kept, so the safe-link check sees its origin.
  const absolute = [...links].filter((l) => URL.canParse(l));
  const targets = new Set([...links].map((l) => pathAndQuery(l)));
  if (targets.size > 1 || new Set(absolute).size > 1 || cursors.size > 1 || numbers.size > 1) return { conflict: `the page names different next pages (${where})` };
  const link = absolute[0] ?? [...links][0];
  const [cursor] = cursors.values();
  const [number] = numbers;
  if (link === undefined) {
    if (cursor) return cursor;
    return { link: withPage(pagePath, number!) };
  }
  const query = new URL(link, 'http://page.invalid').searchParams;
  if (cursor !== undefined && ![...query.values()].includes(cursor.cursor)) {
    return { conflict: `the next cursor is not in the next link (${where})` };
  }
  if (number !== undefined && query.has(PAGE_PARAM) && query.get(PAGE_PARAM) !== String(number)) {
    return { conflict: `the next page number is not the next link's page (${where})` };
  }
  return { link };
}

/** The page's own path and query, asking page `n` (`?page=n`), every other parameter kept. */
function withPage(pagePath: string, n: number): string {
  const u = new URL(pagePath, 'http://page.invalid');
  u.searchParams.set(PAGE_PARAM, String(n));
  return `${u.pathname}${u.search}`;
}

function pathAndQuery(ref: string): string {
  const u = new URL(ref, 'http://page.invalid');
  return `${u.pathname}${u.search}`;
}

/**
 * Pure: a link as a reference tesync may hand to resolveLink: an absolute URL as given, a
 * relative one resolved against the page that gave it (RFC 3986, as RFC 8288 says for
 * `Link`), as a path and query on the same origin. Null when it cannot be read.
 */
export function againstPage(link: string, pagePath: string): string | null {
  // A link not written in URI characters is handed on as given, for the check to refuse:
  // resolving it here would rewrite it first (WHATWG drops tabs, reads `\` as `/`).
  if (URL.canParse(link) || !writtenAsUri(link)) return link;
  try {
    const page = new URL(pagePath, 'http://page.invalid');
    const u = new URL(link, page);
    // A network-path reference (`//host/...`) names another host: kept absolute, for the check to refuse.
    return u.origin === page.origin ? `${u.pathname}${u.search}` : u.href;
  } catch {
    return null;
  }
}
