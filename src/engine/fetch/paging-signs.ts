// Pure: a list is whole only when it proves it (contract: "Lists may come in pages"). Whatever
// a response says of paging in words tesync does not follow still counts: deny by default.
//
// The rule is over the words of a name, not a list of spellings. A name is split into words
// (camelCase, `_`, `-`, `.`, any letter case: `pageInfo`, `X-Total-Count`, `HAS_MORE`), and it
// speaks of paging when one of its words begins with a paging stem: `pag` (page, pages,
// paging, pagination), `cursor`, `next`, `more`, `offset`, `total`, `remain`, `continu`,
// `truncat`, `link`, `scroll`. Two kinds of names never do, whatever else they hold: those
// that speak of the request budget (a word `ratelimit`, `rate`, `limit`, `quota`, `credit`,
// `retry`, `budget`: `X-RateLimit-Remaining` tells how many requests are left, not items),
// and times (the last word `at`, `time`, `date`, `timestamp`, `ts`: `nextUpdateAt` says when,
// not what).
//
// `Content-Range` (`items 0-1/4`) is read as the total of items it states.
//
// Where: every response header; the body's top level, `meta`, and the object that holds the
// items beside their siblings (`data.nextCursor` when `data` is `{ items, nextCursor }`). Under
// a paging name, an object is looked into (`pageInfo.hasNextPage`), its members judged by their
// own names the same way; the items' own fields and the other envelope fields the seeds
// document (`meta.count`, `meta.asOf`, `meta.servedAt`, `meta.source`, `insights`) are no
// paging names and are never read here.
//
// A paging field says nothing more when its value says so: absent, null, false, an empty
// string or array; a count or total equal to what was read; a number of pages not above the
// pages read; a last page's number or link that is this page's; a remaining count of 0; an
// offset that is this page's own. Names of this page's own place or of others behind it say
// nothing of more: `prev`, `first`, `start`, `self`, `current`, `before`, `begin`, `end`,
// `size`, `per` (`startCursor`, `endCursor`, `per_page`, `X-Prev-Page`), and a page's own
// number (`page`, `X-Page`). `last`, `done`, `complete`, `final` turn a yes/no around
// (`isLastPage: false` says more). Every other value is a sign of more.
import { isRecord, readDecimal, readInt } from '../../schema/upstream/values.ts';
import { jsonText } from '../../lib/json.ts';

const TRUE_WORDS = new Set(['true', 't', 'yes', 'y', 'on', '1']);
const FALSE_WORDS = new Set(['false', 'f', 'no', 'n', 'off', '0', '']);

const PAGING_STEMS = ['pag', 'cursor', 'next', 'more', 'offset', 'total', 'remain', 'continu', 'truncat', 'link', 'scroll'];
const BUDGET_WORDS = new Set(['ratelimit', 'rate', 'limit', 'quota', 'credit', 'credits', 'retry', 'budget']);
const TIME_WORDS = new Set(['at', 'time', 'date', 'timestamp', 'ts']);
/** This page's own place, or pages behind it: nothing of the pages after it. */
const PLACE_WORDS = new Set(['prev', 'previous', 'first', 'start', 'self', 'current', 'before', 'begin', 'end', 'size', 'per']);
/** Words that turn a yes/no around: `isLastPage: true` says nothing more. */
const LAST_WORDS = new Set(['last', 'done', 'complete', 'completed', 'final', 'finished', 'eof']);
/** Words that only carry a name (`X-Total`, `is_truncated`). */
const FILLER = new Set(['x', 'is', 'has', 'the']);
/** A page's own number: `page`, `page_number`, `X-Page`. */
const OWN_NUMBER = new Set(['number', 'num', 'no', 'index', 'idx']);
/** How deep a paging object is looked into. */
const MAX_DEPTH = 4;

/** Pure: the words of a field or header name, lower-cased (`hasNextPage` → has, next, page). */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase());
}

/** Pure: whether a name's words speak of paging (and not of the request budget, nor of a time). */
export function speaksOfPaging(words: readonly string[]): boolean {
  if (words.some((w) => BUDGET_WORDS.has(w))) return false;
  if (TIME_WORDS.has(words.at(-1) ?? '')) return false;
  return words.some((w) => PAGING_STEMS.some((s) => w.startsWith(s)));
}

/** Pure: a "more exists" value read as yes or no; undefined when it cannot be read. */
export function truthy(v: unknown): boolean | undefined {
  if (v === null || v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const w = v.trim().toLowerCase();
    return TRUE_WORDS.has(w) ? true : FALSE_WORDS.has(w) ? false : undefined;
  }
  if (isRecord(v) || Array.isArray(v)) return undefined;
  const d = readDecimal(v);
  return d.ok && d.value !== null ? Number(d.value) !== 0 : undefined;
}

/** A value as a message shows it (a LosslessNumber as its digits), cut to 60 characters. */
export function shown(v: unknown): string {
  const d = readDecimal(v);
  if (d.ok && d.value !== null && typeof v !== 'string') return d.value;
  const s = jsonText(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** A field or header that speaks of paging, as said: judged once the list is read (signOfMore). */
export interface PagingField {
  /** Where: `pageInfo.hasNextPage`, `header X-Total-Count`. */
  where: string;
  words: readonly string[];
  value: unknown;
  /** Said in a header (its value a string, shown as sent). */
  header?: boolean;
}

/** Pure: the paging fields of one object of the body (`prefix`: where it is, `meta.`), looked into under paging names. */
export function pagingFieldsOf(container: unknown, prefix = '', out: PagingField[] = [], depth = 0): PagingField[] {
  if (!isRecord(container)) return out;
  for (const [name, value] of Object.entries(container)) {
    const words = nameWords(name);
    if (speaksOfPaging(words)) collect(`${prefix}${name}`, words, value, out, depth);
  }
  return out;
}

function collect(where: string, words: readonly string[], value: unknown, out: PagingField[], depth: number): void {
  if (isRecord(value)) {
    // An object under a paging name: its members speak for it (`pageInfo.hasNextPage`); too deep, it is a sign unread.
    if (depth >= MAX_DEPTH) out.push({ where, words, value });
    else pagingFieldsOf(value, `${where}.`, out, depth + 1);
    return;
  }
  if (Array.isArray(value)) {
    // Objects in it are looked into (Laravel's `links: [{ url, label }]`); anything else is said as it is.
    if (value.every(isRecord)) value.forEach((v, i) => pagingFieldsOf(v, `${where}[${i}].`, out, depth + 1));
    else out.push({ where, words, value });
    return;
  }
  out.push({ where, words, value });
}

/** Pure: the paging fields of a response: its headers (the `Link` header by its rels), its top level and its `meta`. */
export function pagingFields(body: unknown, headers: Readonly<Record<string, string>>): PagingField[] {
  const out: PagingField[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const shownName = name.split('-').map((p) => (p === '' ? p : p[0]!.toUpperCase() + p.slice(1))).join('-');
    if (name.toLowerCase() === 'link') {
      for (const l of linkRels(value)) {
        for (const rel of l.rels) {
          const words = nameWords(rel);
          // A rel of paging (`next`), or the list's `last` page; `prev`, `first`, `alternate` say nothing of more.
          const paging = words.includes('last') ? ['last', 'page', 'link'] : speaksOfPaging(words) ? [...words, 'link'] : null;
          if (paging) out.push({ where: `header Link rel="${rel}"`, words: paging, value: l.target, header: true });
        }
      }
      continue;
    }
    if (name.toLowerCase() === 'content-range') {
      // `items 0-1/4` (RFC 9110's range units, as list APIs use them): a total of items, judged
      // as one; any other form cannot say the list is whole, so it says more.
      const total = /^\s*[A-Za-z][A-Za-z0-9_-]*\s+\d+-\d+\/(\d+)\s*$/.exec(value)?.[1];
      out.push(total !== undefined ? { where: `header ${shownName}`, words: ['total'], value: total, header: true } : { where: `header ${shownName}`, words: ['continuation'], value, header: true });
      continue;
    }
    const words = nameWords(name);
    if (speaksOfPaging(words)) out.push({ where: `header ${shownName}`, words, value, header: true });
  }
  if (isRecord(body)) {
    pagingFieldsOf(body, '', out);
    pagingFieldsOf(body.meta, 'meta.', out);
  }
  return out;
}

/** RFC 8288 `Link` header: each target with its rels (lower-cased); commas inside `<...>` or quotes do not split. */
export function linkRels(value: string | undefined): { target: string; rels: string[] }[] {
  if (!value) return [];
  const out: { target: string; rels: string[] }[] = [];
  const re = /<([^>]*)>((?:\s*;\s*[^;,=\s]+\s*(?:=\s*(?:"(?:[^"\\]|\\.)*"|[^;,\s]*))?)*)/g;
  for (const m of value.matchAll(re)) {
    for (const p of (m[2] ?? '').matchAll(/;\s*([^;,=\s]+)\s*(?:=\s*(?:"((?:[^"\\]|\\.)*)"|([^;,\s]*)))?/g)) {
      if ((p[1] ?? '').toLowerCase() !== 'rel') continue;
      out.push({ target: m[1] ?? '', rels: (p[2] ?? p[3] ?? '').toLowerCase().split(/\s+/).filter((r) => r !== '') });
      break;
    }
  }
  return out;
}

/** Where a page stands in the list read, for judging what it says. */
export interface ListPlace {
  /** Items read in the whole list. */
  read: number;
  /** Pages read. */
  pages: number;
  /** This page's own number (as it says it, else by its place). */
  page: number;
  /** The number of the last page read. */
  lastPage: number;
  /** Items on the pages before this one: this page's own offset. */
  before: number;
  /** This page's path and query. */
  path: string;
  /** The last page read: only there does a sign of the pages after it count (the others were followed). */
  last: boolean;
}

const is = (words: readonly string[], w: string) => words.includes(w);
const stem = (words: readonly string[], s: string) => words.some((w) => w.startsWith(s));

/**
 * Pure: what a paging field says of more, as the state names it (`pageInfo.hasNextPage =
 * true`), or null when its value says nothing more. A total or a number of pages speaks of the
 * whole list and is judged on every page; any other sign only on the last page read.
 */
export function signOfMore(f: PagingField, at: ListPlace): string | null {
  const v = f.value;
  const w = f.words.filter((x) => !FILLER.has(x));
  const lastWord = w.some((x) => LAST_WORDS.has(x));
  // Nothing said (`isLastPage: false` says more: a `last` name's false is not silence).
  if (v === undefined || v === null || v === '' || (v === false && !lastWord) || (Array.isArray(v) && v.length === 0)) return null;
  if (w.some((x) => PLACE_WORDS.has(x))) return null;
  const said = `${f.where} = ${f.header ? (String(v).length > 60 ? `${String(v).slice(0, 57)}...` : String(v)) : shown(v)}`;
  const n = wholeNumber(v);
  // The last page's number or link: this page's, or more pages exist.
  if (lastWord && stem(w, 'pag')) {
    if (n !== undefined) return n <= at.lastPage ? null : `${said}, the last page read is ${at.lastPage}`;
    if (typeof v === 'string' && truthy(v) === undefined) return !at.last || namesThisPage(v, at) ? null : `${said}, this is ${at.path}`;
  }
  // A number of pages (`totalPages`, `pageCount`, `X-Total-Pages`): not above the pages read.
  if (is(w, 'pages') || (stem(w, 'pag') && (is(w, 'count') || is(w, 'total') || is(w, 'num')))) {
    return n !== undefined && n <= at.pages ? null : `${said}, ${at.pages} ${at.pages === 1 ? 'page' : 'pages'} read`;
  }
  // A total of items (`X-Total-Count`, `totalElements`): what was read.
  if (stem(w, 'total')) return n === at.read ? null : `${said}, ${at.read} ${at.read === 1 ? 'item' : 'items'} read`;
  if (!at.last) return null;
  if (stem(w, 'remain')) return n === 0 ? null : said;
  if (stem(w, 'offset') && !stem(w, 'next')) return n === at.before ? null : `${said}, this page starts at ${at.before}`;
  // The page's own number (`page`, `X-Page`): its place, checked by the page numbers' own rule.
  if (n !== undefined && w.length >= 1 && w[0]!.startsWith('pag') && w.slice(1).every((x) => OWN_NUMBER.has(x)) && w.length <= 2) return null;
  // A yes or no (`hasMore`, `truncated`, `isLastPage`); anything else (a cursor, a link, a token, a next page) says more.
  const yes = truthy(v);
  if (yes === undefined) return said;
  return (lastWord ? !yes : yes) ? said : null;
}

/** A count or a page number: a whole number from 0 (a string of digits too). */
function wholeNumber(v: unknown): number | undefined {
  if (typeof v === 'string' && !/^\s*\d+\s*$/.test(v)) return undefined;
  if (typeof v === 'boolean' || isRecord(v) || Array.isArray(v)) return undefined;
  const n = readInt(v);
  return n !== undefined && n >= 0 ? n : undefined;
}

/** A last page's link that is this page: the same path and query, or this page's number as its `page`. */
function namesThisPage(link: string, at: ListPlace): boolean {
  try {
    const own = new URL(at.path, 'http://page.invalid');
    const u = new URL(link, own);
    if (u.pathname === own.pathname && u.search === own.search) return true;
    return u.pathname === own.pathname && u.searchParams.get('page') === String(at.page);
  } catch {
    return false;
  }
}

/** Pure: the signs of more the pages of one read carry, in order (none: nothing says more). */
export function signsOfMore(pages: readonly { said: readonly PagingField[]; place: ListPlace }[]): string[] {
  return pages.flatMap((p) => p.said.map((f) => signOfMore(f, p.place)).filter((s): s is string => s !== null));
}
