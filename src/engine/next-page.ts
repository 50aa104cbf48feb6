// Pure: what a page of a list says about the pages after it (contract: "Lists may come in
// pages"). A next page is named by a link (in the body or an RFC 8288 `Link` header) or by a
// cursor sent back as `?cursor=`. What the page says of the whole list (a total, a "has more"
// flag) is read too, so the reader can tell a complete list from one that stopped early.
// Nothing here decides whether a link may be followed: that is resolveLink's (safe-url.ts).
import { isRecord, readDecimal, readInt } from '../schema/upstream/values.ts';

/** The query parameter a cursor goes back in (dlt's and Airbyte's cursor paginators' default). */
export const CURSOR_PARAM = 'cursor';

export type NextPage = { kind: 'link'; link: string; where: string } | { kind: 'cursor'; cursor: string; where: string };

export interface PageSignals {
  /** Every place the page names a next page (a page may name it in several). */
  nexts: NextPage[];
  /** How many items the whole list holds, where the page says (`meta.total` and its kin). */
  total: number | undefined;
  /** The page says more items exist (`hasMore` and its kin). */
  more: boolean;
}

// Where common APIs put the next page's URL (JSON:API `links.next`, HAL `_links.next.href`,
// Facebook's `paging.next`, `meta.next`, a bare top-level `next`) ...
const LINK_PLACES: readonly (readonly string[])[] = [
  ['links', 'next'],
  ['_links', 'next'],
  ['paging', 'next'],
  ['pagination', 'next'],
  ['next'],
  ['meta', 'next'],
  ['meta', 'links', 'next'],
  ['meta', 'pagination', 'next'],
  ['meta', 'paging', 'next'],
];
// ... and its cursor (Stripe-like `next_cursor`, `meta.cursor`, dlt's `cursors.next`).
const CURSOR_PLACES: readonly (readonly string[])[] = [
  ['nextCursor'],
  ['next_cursor'],
  ['meta', 'nextCursor'],
  ['meta', 'next_cursor'],
  ['meta', 'cursor'],
  ['meta', 'cursors', 'next'],
  ['meta', 'cursor', 'next'],
  ['meta', 'pagination', 'nextCursor'],
  ['meta', 'pagination', 'next_cursor'],
];
const TOTAL_PLACES: readonly (readonly string[])[] = [
  ['meta', 'total'],
  ['meta', 'totalCount'],
  ['meta', 'total_count'],
  ['meta', 'totalItems'],
  ['meta', 'pagination', 'total'],
  ['meta', 'page', 'total'],
];
const MORE_PLACES: readonly (readonly string[])[] = [
  ['has_more'],
  ['hasMore'],
  ['meta', 'hasMore'],
  ['meta', 'has_more'],
  ['meta', 'hasNext'],
  ['meta', 'hasNextPage'],
  ['meta', 'pagination', 'hasMore'],
  ['meta', 'pagination', 'hasNext'],
];

function at(body: unknown, path: readonly string[]): unknown {
  let v = body;
  for (const k of path) {
    if (!isRecord(v) || !Object.hasOwn(v, k)) return undefined;
    v = v[k];
  }
  return v;
}

/** A link value: a string, or a HAL/JSON:API link object `{ href }`. */
function linkText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (isRecord(v) && typeof v.href === 'string') return v.href;
  return undefined;
}

/** A cursor value: a string or a number (a LosslessNumber keeps its digits). */
function cursorText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (isRecord(v) || v === null || typeof v === 'boolean') return undefined;
  const d = readDecimal(v);
  return d.ok && d.value !== null && /^\d+$/.test(d.value) ? d.value : undefined;
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

/** Pure: the next page a response names, and what it says of the whole list. */
export function readPageSignals(body: unknown, headers: Readonly<Record<string, string>>): PageSignals {
  const found: NextPage[] = [];
  for (const link of nextFromLinkHeader(headers.link)) found.push({ kind: 'link', link, where: 'Link header' });
  for (const path of LINK_PLACES) {
    const link = linkText(at(body, path));
    if (link !== undefined && link !== '') found.push({ kind: 'link', link, where: path.join('.') });
  }
  for (const path of CURSOR_PLACES) {
    const cursor = cursorText(at(body, path));
    if (cursor !== undefined && cursor !== '') found.push({ kind: 'cursor', cursor, where: path.join('.') });
  }
  let total: number | undefined;
  for (const path of TOTAL_PLACES) {
    total ??= readInt(at(body, path));
  }
  const more = MORE_PLACES.some((path) => at(body, path) === true);
  return { nexts: found, total, more };
}

export type ChosenNext = { link: string } | { cursor: string } | { conflict: string } | null;

/**
 * Pure: the one next page the places agree on. Links are compared once resolved against the
 * page; a cursor given beside a link must be in the link's query (the usual pair), else the
 * page says two things and is not understood.
 */
export function chooseNext(nexts: readonly NextPage[], pagePath: string): ChosenNext {
  if (nexts.length === 0) return null;
  const links = new Set<string>();
  const cursors = new Set<string>();
  for (const n of nexts) {
    if (n.kind === 'cursor') cursors.add(n.cursor);
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
  if (targets.size > 1 || new Set(absolute).size > 1 || cursors.size > 1) return { conflict: `the page names different next pages (${where})` };
  const link = absolute[0] ?? [...links][0];
  const [cursor] = cursors;
  if (link === undefined) return { cursor: cursor! };
  if (cursor !== undefined && ![...new URL(link, 'http://page.invalid').searchParams.values()].includes(cursor)) {
    return { conflict: `the next cursor is not in the next link (${where})` };
  }
  return { link };
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
  if (URL.canParse(link)) return link;
  try {
    const page = new URL(pagePath, 'http://page.invalid');
    const u = new URL(link, page);
    // A network-path reference (`//host/...`) names another host: kept absolute, for the check to refuse.
    return u.origin === page.origin ? `${u.pathname}${u.search}` : u.href;
  } catch {
    return null;
  }
}
