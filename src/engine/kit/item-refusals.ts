// A refusal is as small as the thing refused. An item of a list (a token, a screener row, a
// catalog entry, a chart's row of points: any response whose reader says where its items lie,
// `Ask.items`) that cannot be stored exactly is refused alone: one holding a string Postgres
// cannot hold (U+0000, an unpaired surrogate: the client locates them, src/upstream/body.ts),
// or shaped unlike its siblings (not an object where they are objects). Its bytes stay in the
// archived body, the reason names the item and the field, and the rest of the list is read:
// the list is then not whole, so it removes nothing (each reader says so). A string outside
// every item (in the envelope, in `meta`, beside the items) leaves nothing to tell apart: the
// response is refused whole, as a response that is not a list is (the client refuses those).
import type { UnholdableAt } from '../../lib/pg-text.ts';
import { isRecord } from '../../schema/upstream/values.ts';
import type { FetchedList } from './types.ts';

/** An item refused alone: its place in the list (from 0, over every page) and why. */
export interface ItemRefusal {
  index: number;
  item: unknown;
  reason: string;
}

/** How many refused items a resource's details name (the rest are counted). */
export const NAMED_REFUSALS = 20;

/** Whether two arrays hold the same values in the same places (the list a schema copied). */
function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/**
 * Pure: in which item of `items` (the list as read from `body`) each located string lies, with
 * why that item is refused (the first string of an item names it); or, when one lies outside
 * every item, why the body is refused whole.
 */
export function locateInItems(body: unknown, unholdable: readonly UnholdableAt[], items: readonly unknown[]): { whole: string } | { refused: Map<number, string> } {
  const refused = new Map<number, string>();
  let list: unknown[] | undefined;
  for (const u of unholdable) {
    let node: unknown = body;
    let index: number | undefined;
    for (const step of u.at) {
      if (Array.isArray(node) && (node === list || (list === undefined && sameItems(node, items)))) {
        list = node;
        index = typeof step === 'number' ? step : undefined;
        break;
      }
      node = node !== null && typeof node === 'object' ? (node as Record<string | number, unknown>)[step] : undefined;
    }
    if (index === undefined) return { whole: `${u.path} ${u.what}, outside every item of the list` };
    if (!refused.has(index)) refused.set(index, `${u.path} ${u.what}`);
  }
  return { refused };
}

const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'a number' : `a ${typeof v}`);

/**
 * Pure: the items of `f` split into those to read and those refused alone, in order: refused
 * for a string Postgres cannot hold (`f.refused`), or for a shape its siblings do not have
 * (anything but an object where a sibling is an object; a number parses as an object of its
 * own kind, not a plain one).
 */
export function splitItems(f: Pick<FetchedList, 'items' | 'refused'>, options: { shapes?: boolean } = {}): { understood: unknown[]; refused: ItemRefusal[] } {
  const items = f.items ?? [];
  // A reader that keeps a misshapen item apart itself (the gateway's unmatched screener rows) asks for no shapes.
  const objects = options.shapes !== false && items.some(isRecord);
  const understood: unknown[] = [];
  const refused: ItemRefusal[] = [];
  items.forEach((item, index) => {
    const unheld = f.refused?.get(item);
    if (unheld !== undefined) refused.push({ index, item, reason: unheld });
    else if (objects && !isRecord(item)) refused.push({ index, item, reason: `item ${index} of the list is ${kindOf(item)} where its siblings are objects` });
    else understood.push(item);
  });
  return { understood, refused };
}

/** A catalog's entries as `readEntries` reads them. */
export interface ReadEntries<E> {
  /** The entries understood and read. */
  valid: E[];
  /** The raw items those were read from, in order (their pages: `f.pageOf`). */
  validItems: unknown[];
  /** Items not written: refused alone, or understood but not read. */
  invalidItems: number;
  /** Items refused alone whose entry still reads: their keys still plan follow-ups. */
  refusedRead: E[];
  refused: ItemRefusal[];
}

/** Pure: a list's items split (splitItems) and each read by `read` (null: not read). */
export function readEntries<E>(f: Pick<FetchedList, 'items' | 'refused'>, read: (item: unknown) => E | null): ReadEntries<E> {
  const split = splitItems(f);
  const valid: E[] = [];
  const validItems: unknown[] = [];
  for (const item of split.understood) {
    const e = read(item);
    if (e === null) continue;
    valid.push(e);
    validItems.push(item);
  }
  return {
    valid,
    validItems,
    invalidItems: split.understood.length - valid.length + split.refused.length,
    refusedRead: split.refused.flatMap((r) => read(r.item) ?? []),
    refused: split.refused,
  };
}

/** Pure: what a resource's details say of its refused items (the first NAMED_REFUSALS named); {} when none. */
export function refusalDetails(refused: readonly ItemRefusal[]): { refusedItems?: number; refused?: string[] } {
  if (refused.length === 0) return {};
  return { refusedItems: refused.length, refused: refused.slice(0, NAMED_REFUSALS).map((r) => r.reason) };
}

/** Pure: the log line of a list read with items refused (none: no note). */
export function refusalNotes(refused: readonly ItemRefusal[]): { level: 'warn'; msg: string; fields: Record<string, unknown> }[] {
  if (refused.length === 0) return [];
  return [{ level: 'warn', msg: 'list items refused alone (the rest of the list is read; it removes nothing)', fields: refusalDetails(refused) }];
}

/**
 * Pure: what a chart catalog's read says of itself: partial when an item was invalid or the
 * list is not proven whole (fetch-list.ts); its counts, its refusals and why it is not whole.
 */
export function catalogSummary(f: Pick<FetchedList, 'meta' | 'sha256' | 'incomplete'>, charts: number, invalidItems: number, refused: readonly ItemRefusal[]) {
  return {
    status: invalidItems || f.incomplete !== undefined ? ('partial' as const) : ('ok' as const),
    asOf: f.meta.asOf,
    hash: f.sha256,
    details: { charts, invalidItems, ...refusalDetails(refused), ...(f.incomplete !== undefined ? { incomplete: f.incomplete } : {}) },
    notes: refusalNotes(refused),
  };
}
