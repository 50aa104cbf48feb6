// A list that may come in pages (contract: "Lists may come in pages"). Every next page a
// response names is fetched, each page a request on the rate budget like any other, until a
// page names none. A list is whole only when it proves it: nothing in any page says more
// pages or items exist (paging-signs.ts: any field or header that speaks of paging, in any
// words), and every count or total agrees with what was read. Otherwise it is returned
// `incomplete`, naming why: its items may be stored, but it delists, closes and removes
// nothing. So is a list stopped by its byte budget (TE_MAX_LIST_BYTES, every page of every
// read of it in one run) or by the bound on pages. What is not understood refuses it whole
// (every page's body kept `invalid`, nothing of it written): a paging value that cannot be
// read, a `meta.count` the pages do not match, more items than the list says it holds, pages
// that name different next pages, a next link or a body that comes round again (a loop).
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { EnvelopeMeta } from '../../schema/upstream/envelope.ts';
import { InvalidResponseError, ResponseTooLargeError, UnsafeRequestError } from '../../lib/errors.ts';
import { isRecord } from '../../schema/upstream/values.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../upstream/index.ts';
import type { FetchedList, FetchListOptions, JobContext } from '../kit/types.ts';

import { invalid, validate } from './fetch.ts';
import { chooseNext, readPageSignals, type PageSignals } from './next-page.ts';
import { pagingFieldsOf, signsOfMore, type ListPlace } from './paging-signs.ts';

/** Pages read of one list at most: past them the list stops, incomplete (what was read is stored, nothing removed). */
export const MAX_PAGES = 1000;

/** A resource's list bodies in one run, in bytes, at most, unless configured (TE_MAX_LIST_BYTES). */
export const DEFAULT_MAX_LIST_BYTES = 64 * 1024 * 1024;

/** How many signs of more an incomplete list's reason names. */
const NAMED_SIGNS = 3;

/** What is left of a list's byte budget, over every read of it. */
interface ByteBudget {
  of: number;
  left: number;
}

/** Reads of one list from its first page at most, when its pages disagree: then it is refused. */
export const MAX_READS = 3;



interface Page {
  response: UpstreamResponse;
  items: unknown[];
  meta: EnvelopeMeta;
  body: Record<string, unknown>;
  signals: PageSignals;
}

/**
 * Fetches a list and every page after it. `schema` validates each page's `data`; `listOf`
 * finds the items in it (an array, or an object holding one). A list whose pages disagree
 * (totals that differ, a key on two pages: it changed while it was read) is read again from
 * its first page, up to `maxReads` reads in all. Throws InvalidResponseError after keeping
 * every page's body when the list is not complete or not understood.
 */
export async function fetchList<S extends z.ZodType>(
  ctx: JobContext,
  req: Omit<UpstreamRequest, 'runId' | 'link' | 'linkOnly'>,
  schema: S,
  listOf: (data: z.output<S>) => unknown[] | undefined = (d) => (Array.isArray(d) ? d : undefined),
  options: FetchListOptions = {},
): Promise<FetchedList> {
  const maxReads = options.maxReads ?? MAX_READS;
  const of = options.maxBytes ?? ctx.settings.maxListBytes ?? DEFAULT_MAX_LIST_BYTES;
  const budget: ByteBudget = { of, left: of };
  const refuse = (received: readonly UpstreamResponse[], reason: string): InvalidResponseError => {
    for (const r of received.slice(0, -1)) invalid(ctx, req.route, r, reason, { quiet: true });
    const last = received.at(-1);
    return last ? invalid(ctx, req.route, last, reason) : new InvalidResponseError(reason, '');
  };
  const drifted: UpstreamResponse[] = [];
  for (let read = 1; ; read++) {
    const r = await readPages(ctx, req, schema, listOf, options, budget, (received, reason) => refuse([...drifted, ...received], reason));
    if ('single' in r) return r.single;
    const drift = disagreement(r.pages, options.keyOf);
    if (drift === null) {
      const list = wholeList(r.pages, r.stopped, (reason) => refuse([...drifted, ...r.pages.map((p) => p.response)], reason));
      if (list.incomplete !== undefined) ctx.logger.warn({ route: req.route, reason: list.incomplete }, 'a list not proven whole: its items are read, nothing is delisted or removed by it');
      return list;
    }
    if (budget.left <= 0) throw refuse([...drifted, ...r.pages.map((p) => p.response)], `${drift}, and its byte budget of ${budget.of} bytes (TE_MAX_LIST_BYTES) is spent: not read again`);
    if (read >= maxReads) throw refuse([...drifted, ...r.pages.map((p) => p.response)], `${drift}, on each of ${read} reads from its first page: the list kept changing while it was read`);
    for (const p of r.pages) invalid(ctx, req.route, p.response, `${drift}: the list changed while it was read; read again from its first page`, { quiet: true });
    drifted.push(...r.pages.map((p) => p.response));
    ctx.logger.info({ route: req.route, read, reason: drift }, 'a list changed while it was read; reading it again from its first page');
  }
}

/** One read of a list from its first page to the page that names no next one. */
async function readPages<S extends z.ZodType>(
  ctx: JobContext,
  req: Omit<UpstreamRequest, 'runId' | 'link' | 'linkOnly'>,
  schema: S,
  listOf: (data: z.output<S>) => unknown[] | undefined,
  options: FetchListOptions,
  budget: ByteBudget,
  refuse: (received: readonly UpstreamResponse[], reason: string) => InvalidResponseError,
): Promise<{ pages: Page[]; stopped?: string } | { single: FetchedList }> {
  const maxPages = options.maxPages ?? MAX_PAGES;
  const received: UpstreamResponse[] = [];
  const pages: Page[] = [];
  const fetchedPaths = new Set<string>();
  const named = new Set<string>();
  // The bodies of this read's pages, by hash: one served again is a loop, and is not archived twice.
  const bodies = new Map<string, number>();
  const spent = (n: number) => `the list's bodies reached its byte budget of ${budget.of} bytes (TE_MAX_LIST_BYTES) after page ${n}: read no further`;

  let request: Omit<UpstreamRequest, 'runId'> = req;
  for (;;) {
    if (pages.length >= maxPages) return { pages, stopped: `page ${maxPages} names a next page: the list has more than ${maxPages} pages (the bound on pages), read no further` };
    if (pages.length > 0 && budget.left <= 0) return { pages, stopped: spent(pages.length) };
    let response: UpstreamResponse;
    try {
      // Every page as the first was asked: items refusable one by one (kit/item-refusals.ts) on each.
      response = await ctx.upstream.get({ ...request, refusableItems: req.refusableItems, maxBytes: budget.left, archivedBodies: new Set(bodies.keys()), runId: ctx.runId });
    } catch (err) {
      // A page past what is left of the byte budget is not read (nor archived): the list stops there.
      if (err instanceof ResponseTooLargeError && err.limitBytes === budget.left) {
        if (pages.length > 0) return { pages, stopped: spent(pages.length) };
        throw new ResponseTooLargeError(err.path, err.limitBytes, 'TE_MAX_LIST_BYTES');
      }
      // A next link off the base URL or the route is never requested: the list cannot be completed.
      if (pages.length > 0 && err instanceof UnsafeRequestError) throw refuse(received, `page ${pages.length + 1}: ${err.message}`);
      throw err;
    }
    budget.left -= response.raw?.byteLength ?? Buffer.byteLength(response.text);
    const again = bodies.get(response.sha256);
    // Kept once, as the page it repeats: neither archived again (the client skipped it) nor kept `invalid` again.
    if (again !== undefined) throw refuse(received, `page ${pages.length + 1} (${response.path}) is page ${again}'s body again: the pages loop`);
    if (response.sha256 !== '') bodies.set(response.sha256, pages.length + 1);
    received.push(response);
    if (fetchedPaths.has(response.path)) throw refuse(received, `page ${pages.length + 1} is ${response.path} again: the next links loop`);
    fetchedPaths.add(response.path);
    // Later pages count their numbers from the first page's (0 or 1).
    const signals = readPageSignals(response.body, response.headers, { firstPage: pages.length > 0 ? firstPageOf(pages) : undefined });
    const next = chooseNext(signals.nexts, response.path);
    const paged = pages.length > 0 || next !== null;
    let f: Awaited<ReturnType<typeof validate<S>>>;
    try {
      f = await validate(ctx, req.route, response, schema, { pageOfList: paged });
    } catch (err) {
      // The page is kept `invalid` by validate; the pages before it belong to the same refused list.
      if (err instanceof InvalidResponseError) for (const r of received.slice(0, -1)) invalid(ctx, req.route, r, `page ${pages.length + 1} of the list: ${err.message}`, { quiet: true });
      throw err;
    }
    const items = listOf(f.data);
    if (items === undefined) {
      if (paged) throw refuse(received, `page ${pages.length + 1} holds no list`);
      return { single: { items: undefined, meta: f.meta, body: f.body, pages: [response], sha256: response.sha256, count: f.meta.count, pageOf: () => response } };
    }
    // What the object holding the items says beside them (`data: { items, nextCursor }`) counts too.
    if (isRecord(f.data) && f.data !== items) signals.said = [...(signals.said ?? []), ...pagingFieldsOf(f.data, 'data.')];
    pages.push({ response, items, meta: f.meta, body: f.body, signals });
    if (next === null) return { pages };
    if ('conflict' in next) throw refuse(received, next.conflict);
    const key = 'link' in next ? `link:${next.link}` : `${next.param}:${next.cursor}`;
    if (named.has(key)) throw refuse(received, `page ${pages.length} names a next page named before: the next links loop`);
    named.add(key);
    request = 'link' in next ? { route: req.route, params: req.params, link: next.link, linkOnly: true } : { ...req, query: { ...req.query, [next.param]: next.cursor } };
  }
}

/** The number a list's first page gave itself: 0 when it said 0, else pages count from 1. */
function firstPageOf(pages: readonly Pick<Page, 'signals'>[]): number {
  return pages[0]?.signals.page?.number === 0 ? 0 : 1;
}

/** A list read to its last page (or `stopped`): whole, or incomplete and why; refused when not understood. */
function wholeList(pages: Page[], stopped: string | undefined, refuse: (reason: string) => InvalidResponseError): FetchedList {
  const items = pages.flatMap((p) => p.items);
  const judged = judgeList(
    pages.map((p) => ({ ...p, path: p.response.path })),
    items.length,
  );
  if (judged !== null && 'refused' in judged) throw refuse(judged.refused);
  const incomplete = stopped ?? judged?.incomplete;
  const first = pages[0]!;
  const single = pages.length === 1;
  const pageByItem = new Map<unknown, UpstreamResponse>();
  for (const p of pages) for (const item of p.items) if (!pageByItem.has(item)) pageByItem.set(item, p.response);
  return {
    items,
    meta: first.meta,
    body: first.body,
    pages: pages.map((p) => p.response),
    sha256: single ? first.response.sha256 : createHash('sha256').update(pages.map((p) => p.response.sha256).join('\n')).digest('hex'),
    count: single ? first.meta.count : items.length,
    pageOf: (item) => pageByItem.get(item),
    ...(incomplete !== undefined ? { incomplete } : {}),
  };
}

/**
 * Pure: how the pages of one read disagree with each other, so that the list changed while it
 * was read (null: they agree): totals that differ, or one key on two pages.
 */
export function disagreement(pages: readonly Pick<Page, 'items' | 'signals'>[], keyOf?: (item: unknown) => string | undefined): string | null {
  if (pages.length < 2) return null;
  const totals = [...new Set(pages.map((p) => p.signals.total).filter((t) => t !== undefined))];
  if (totals.length > 1) return `its pages disagree on the list's total (${totals.join(' vs ')})`;
  const counts = [...new Set(pages.map((p) => p.signals.pages?.count).filter((t) => t !== undefined))];
  if (counts.length > 1) return `its pages disagree on the list's number of pages (${counts.join(' vs ')})`;
  if (!keyOf) return null;
  const pageOfKey = new Map<string, number>();
  for (const [i, p] of pages.entries()) {
    for (const item of p.items) {
      const key = keyOf(item);
      if (key === undefined) continue;
      const seen = pageOfKey.get(key);
      if (seen !== undefined && seen !== i) return `item ${JSON.stringify(key.slice(0, 60))} is on page ${seen + 1} and on page ${i + 1}`;
      pageOfKey.set(key, i);
    }
  }
  return null;
}

/** A list judged once read: refused (not understood), incomplete (not proven whole), or whole (null). */
export type ListJudgement = { refused: string } | { incomplete: string } | null;

/**
 * Pure: a list read to its last page (or stopped), judged. Refused when what it says cannot be
 * understood: a paging field that cannot be read, a page that is not the page its place in the
 * read says, fewer pages than were read, a count that counts neither its page nor the list, a
 * total below what was read. Incomplete when anything in it says more exists that tesync did
 * not follow (paging-signs.ts: a total or page count above what was read, a "more" flag, a
 * cursor, a next page in words tesync does not follow), naming the first signs.
 */
export function judgeList(pages: readonly (Pick<Page, 'items' | 'meta' | 'signals'> & { path?: string })[], read: number): ListJudgement {
  const first = firstPageOf(pages);
  const at = (n: number) => (pages.length === 1 ? '' : `page ${n}: `);
  for (const [i, p] of pages.entries()) {
    // A paging field that cannot be read: what it says of the list cannot be checked.
    const [unreadable] = p.signals.unreadable ?? [];
    if (unreadable !== undefined) return { refused: `${at(i + 1)}${unreadable}: the list's paging is not understood` };
    // A page that is not the one its place in the read says: the pages asked are not the pages served.
    const { page } = p.signals;
    if (page !== undefined && page.number !== first + i) return { refused: `page ${i + 1} says it is page ${page.number} (${page.where})` };
  }
  // The pages of one read agree on their number (else they disagree: read again), so the last one that says it speaks for all.
  const said = pages.findLast((p) => p.signals.pages !== undefined)?.signals.pages;
  if (said !== undefined && Math.max(said.count, 1) < pages.length) return { refused: `the list says it has ${said.count} pages (${said.where}), ${pages.length} were read` };
  for (const [i, p] of pages.entries()) {
    const n = i + 1;
    // A page's count may count the page or the whole list; anything else lost or added items.
    const { count } = p.meta;
    if (count !== undefined && count !== p.items.length && (pages.length === 1 || count !== read)) {
      return { refused: pages.length === 1 ? `meta.count says ${count} items, the list has ${p.items.length}` : `page ${n}: meta.count says ${count}, the page has ${p.items.length} and the list ${read}` };
    }
    if (p.signals.total !== undefined && p.signals.total < read) return { refused: `page ${n} says the list holds ${p.signals.total} items, ${read} were read` };
  }
  // Deny by default: whatever speaks of more, in any words, and was not followed.
  let before = 0;
  const lastPage = pages.at(-1)?.signals.page?.number ?? first + pages.length - 1;
  const placed = pages.map((p, i) => {
    const place: ListPlace = { read, pages: pages.length, page: p.signals.page?.number ?? first + i, lastPage, before, path: p.path ?? '', last: i === pages.length - 1 };
    before += p.items.length;
    return { said: p.signals.said ?? [], place };
  });
  const signs = [...new Set(signsOfMore(placed))];
  if (signs.length === 0) return null;
  const rest = signs.length - NAMED_SIGNS;
  return { incomplete: `${signs.slice(0, NAMED_SIGNS).join('; ')}${rest > 0 ? `; and ${rest} more` : ''}` };
}
