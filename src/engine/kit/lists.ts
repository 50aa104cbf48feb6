// Pure readers of the lists both sources serve: token lists and chart catalogs. Items are
// read one by one, so one unreadable item never hides the others (it is refused alone, and
// named: item-refusals.ts).
import { chartCatalogItem, tokenItem, type ChartCatalogItem, type TokenItem } from '../../schema/upstream/app.ts';
import { readInt, stableMarker, versionMarker } from '../../schema/upstream/values.ts';
import { withoutVolatile } from '../../schema/warehouse/columns.ts';
import { isSafePathParam } from '../../upstream/safe-url.ts';
import { splitItems, type ItemRefusal } from './item-refusals.ts';

export interface TokenListRead {
  /** The items understood: written, and planned from. */
  items: { item: TokenItem; raw: unknown }[];
  /**
   * Items refused alone (item-refusals.ts) whose key is clean: nothing of them is written, but
   * the jobs they plan are planned (each judged on its own body).
   */
  plannedOnly: TokenItem[];
  /** Every item not written, with why. */
  refused: ItemRefusal[];
  invalidItems: number;
  /** Whole: every item understood and as many as meta.count says. */
  complete: boolean;
}

/** Pure: a raw token list item's slug as sent (undefined: it has none), to find one on two pages. */
export function slugOf(raw: unknown): string | undefined {
  return raw !== null && typeof raw === 'object' && typeof (raw as { slug?: unknown }).slug === 'string' ? (raw as { slug: string }).slug : undefined;
}

/**
 * Pure: a token list's items, read one by one; `refused`: the items refused alone for a string
 * Postgres cannot hold (FetchedList `refused`), which plan their jobs when their slug is usable.
 */
export function readTokenList(data: unknown[], count: number | undefined, refused?: ReadonlyMap<unknown, string>): TokenListRead {
  const items: TokenListRead['items'] = [];
  const plannedOnly: TokenItem[] = [];
  const split = splitItems({ items: data, refused });
  const notWritten = [...split.refused];
  const slugs = new Set<string>();
  const usable = (raw: unknown): TokenItem | string => {
    const p = tokenItem.safeParse(raw);
    if (!p.success) return `not a token item (${p.error.issues[0]?.path.join('.') || 'the item'}: ${p.error.issues[0]?.message ?? 'unreadable'})`;
    // A slug that cannot go into a URL is unusable: never requested.
    if (!isSafePathParam(p.data.slug)) return 'its slug cannot go into a URL';
    if (slugs.has(p.data.slug)) return 'its slug is listed twice';
    slugs.add(p.data.slug);
    return p.data;
  };
  const refusedAt = new Set(split.refused.map((r) => r.index));
  data.forEach((raw, index) => {
    const item = usable(raw);
    if (refusedAt.has(index)) {
      if (typeof item !== 'string') plannedOnly.push(item);
    } else if (typeof item === 'string') notWritten.push({ index, item: raw, reason: `item ${index} of the list: ${item}` });
    else items.push({ item, raw });
  });
  const complete = notWritten.length === 0 && items.length > 0 && (count === undefined || count === data.length);
  return { items, plannedOnly, refused: notWritten.sort((x, y) => x.index - y.index), invalidItems: notWritten.length, complete };
}

export interface CatalogEntry {
  key: string;
  link: string | null;
  title: string | null;
  section: string | null;
  freshness: string | null;
  rowCount: number | null;
  /** What says the chart changed: freshness and row count together. */
  marker: string | null;
  raw: ChartCatalogItem;
}

/** Pure: a catalog item in any accepted form (key as key/chartKey/id, link as href/dataEndpoint/endpoint/links.data). */
export function readCatalogItem(raw: unknown): CatalogEntry | null {
  const p = chartCatalogItem.safeParse(raw);
  if (!p.success) return null;
  const i = p.data;
  const key = i.key ?? i.chartKey ?? i.id;
  if (!isSafePathParam(key)) return null;
  const rowCount = readInt(i.rowCount ?? i.row_count) ?? null;
  // Stored in a compared column: without the volatile fields (the marker follows what is stored).
  const freshness = stableMarker(withoutVolatile(i.freshness));
  return {
    key,
    link: i.href ?? i.dataEndpoint ?? i.endpoint ?? i.links?.data ?? null,
    title: i.title ?? null,
    section: i.section ?? null,
    freshness,
    rowCount,
    marker: versionMarker({ freshness, rowCount }),
    raw: i,
  };
}
