// /api/v1/tokens/{slug}/charts: the chart catalog, then one data job per chart. A chart
// whose catalog freshness and row count are as at its last fetch is not fetched again. A
// chart that answered 404 `chart_not_found` (or `token_not_found`) is not asked again until
// the catalog says it is back: its freshness or row count changed, or a whole catalog left it
// out and lists it again (the one 404 rule, src/engine/job/not-found.ts).
import { z } from 'zod';
import { readList } from '../../schema/upstream/envelope.ts';
import { versionMarker } from '../../schema/upstream/values.ts';
import { chartPoints, charts } from '../../schema/warehouse/app.ts';
import { rowMeta } from '../../engine/kit/rows.ts';
import { keptMembers, wholeSet } from '../../engine/kit/stated-set.ts';
import { readCatalogItem, type CatalogEntry } from '../../engine/kit/lists.ts';
import { readEntries, catalogSummary } from '../../engine/kit/item-refusals.ts';
import { documentedPath } from '../../engine/kit/paths.ts';
import { defineJob, into } from '../../engine/kit/types.ts';
import { storedAppCharts, type StoredAppChart } from './knows/charts.ts';
import type { chartPayload } from './chart.ts';
import { tokenPayload, tokenRoute } from './snapshot.ts';

/** The stored catalog row's marker, as the catalog entry's (`CatalogEntry.marker`). */
const storedMarker = (r: { freshness: string | null; rowCount: number | null }) => versionMarker({ freshness: r.freshness, rowCount: r.rowCount });

type ChartItem = z.infer<typeof chartPayload>;

/** The charts already in the catalog table, with the markers they were stored with. */
function storedCharts(slug: string, rows: readonly StoredAppChart[]): ChartItem[] {
  return rows.map((r) => ({ slug, chartKey: r.key, link: null, marker: storedMarker(r) }));
}

export const appChartsJob = defineJob({
  name: 'app.charts',
  route: 'app.charts',
  source: 'app',
  group: 'charts',
  plannedBy: 'app.tokens',
  each: tokenRoute('charts'),
  payload: tokenPayload,
  resource: (p) => `token/${p.slug}/charts`,
  token: (p) => p.slug,
  marker: (p) => p.marker,
  // The catalog is as before, but a chart whose last fetch failed must still be healed:
  // plan every known chart again; each skips itself when its own marker matches. The
  // stored rows are not a whole catalog (they keep charts it stopped listing).
  unchanged: {
    knows: (p) => [storedAppCharts.ask(p.slug)],
    plan: (input) => ({ items: storedCharts(input.payload.slug, storedAppCharts.answerIn(input.known) ?? []) }),
  },
  reader: {
    asks: (input) => [{ route: 'app.charts', params: { slug: input.payload.slug }, list: { listOf: (d) => readList(d) } }],
    read(input, [got]) {
      const p = input.payload;
      const f = got!.list!;
      const list = f.items;
      // An entry refused alone (item-refusals.ts) is not written; its clean key still plans its chart.
      const { valid, validItems, invalidItems, refusedRead: plannedOnly, refused } = readEntries<CatalogEntry>(f, readCatalogItem);
      const rows = valid.map((e) => ({
        tokenSlug: p.slug,
        chartKey: e.key,
        title: e.title,
        section: e.section,
        rowCount: e.rowCount,
        dataPath: documentedPath('app.chart', { slug: p.slug, chartKey: e.key }),
        payload: e.raw,
        ...rowMeta(input, { asOf: f.meta.asOf, freshness: e.freshness }),
      }));
      // A refused entry's link is not followed (its chart is asked at the documented path), and its marker not trusted.
      const listed: ChartItem[] = [...valid.map((e) => ({ slug: p.slug, chartKey: e.key, link: e.link, marker: e.marker })), ...plannedOnly.map((e) => ({ slug: p.slug, chartKey: e.key, link: null, marker: null }))];
      // A catalog not proven whole (fetch-list.ts) closes nothing.
      const whole = list !== undefined && invalidItems === 0 && f.incomplete === undefined;
      return {
        ...catalogSummary(f, valid.length, invalidItems, refused),
        // A catalog read whole states the token's charts: one it no longer lists is closed, with its points.
        writes: [
          into(charts, rows, { ...wholeSet(charts, { tokenSlug: p.slug }, whole), fromEach: validItems.map((raw) => f.pageOf(raw)) }),
          into(chartPoints, [], keptMembers(chartPoints, { tokenSlug: p.slug }, whole, valid.map((e) => ({ chartKey: e.key })))),
        ],
        // A catalog read whole plans every chart that exists: one it leaves out is gone.
        listed: { items: listed, ...(whole ? { wholeUnder: `token/${p.slug}/chart/` } : {}) },
      };
    },
  },
});
