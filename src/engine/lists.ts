// Pure readers of the lists both sources serve: token lists and chart catalogs. Items are
// read one by one, so one unreadable item never hides the others (it is counted instead).
import { chartCatalogItem, tokenItem, type ChartCatalogItem, type TokenItem } from '../schema/upstream/app.ts';
import { readInt, stableMarker, versionMarker } from '../schema/upstream/values.ts';
import { withoutVolatile } from '../schema/warehouse/columns.ts';
import { isSafePathParam } from '../upstream/safe-url.ts';

export interface TokenListRead {
  items: { item: TokenItem; raw: unknown }[];
  invalidItems: number;
  /** Whole: every item readable and as many as meta.count says. */
  complete: boolean;
}

/** Pure: a raw token list item's slug as sent (undefined: it has none), to find one on two pages. */
export function slugOf(raw: unknown): string | undefined {
  return raw !== null && typeof raw === 'object' && typeof (raw as { slug?: unknown }).slug === 'string' ? (raw as { slug: string }).slug : undefined;
}

export function readTokenList(data: unknown[], count: number | undefined): TokenListRead {
  const items: TokenListRead['items'] = [];
  let invalidItems = 0;
  const slugs = new Set<string>();
  for (const raw of data) {
    const p = tokenItem.safeParse(raw);
    // A slug that cannot go into a URL is unusable: count it, never request it.
    if (!p.success || !isSafePathParam(p.data.slug) || slugs.has(p.data.slug)) {
      invalidItems++;
      continue;
    }
    slugs.add(p.data.slug);
    items.push({ item: p.data, raw });
  }
  const complete = invalidItems === 0 && items.length > 0 && (count === undefined || count === data.length);
  return { items, invalidItems, complete };
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
