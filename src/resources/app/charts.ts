// /api/v1/tokens/{slug}/charts: the chart catalog, then one data job per chart. A chart
// whose catalog freshness and row count are as at its last fetch is not fetched again. A
// chart that answered 404 `chart_not_found` (or `token_not_found`) is not planned again until
// the catalog says it is back (not-found.ts: its freshness or row count changed, or a whole
// catalog left it out and lists it again).
import { z } from 'zod';
import { readList } from '../../schema/upstream/envelope.ts';
import { versionMarker } from '../../schema/upstream/values.ts';
import { chartPoints, charts } from '../../schema/warehouse/app.ts';
import { rowMeta } from '../../engine/rows.ts';
import { fetchList } from '../../engine/fetch-list.ts';
import { keptMembers, wholeSet } from '../../engine/sets.ts';
import { readCatalogItem, type CatalogEntry } from '../../engine/lists.ts';
import { documentedPath } from '../../engine/paths.ts';
import { defineJob, into, type JobContext, type JobRequest } from '../../engine/types.ts';
import type { StoredAppChart } from '../../store/known.ts';
import { appChartJob, chartPayload } from './chart.ts';
import { readNotFoundOf, screenNotFound, withoutLeftOut, type PlannedEntry } from './not-found.ts';
import { tokenPayload } from './snapshot.ts';

/** The stored catalog row's marker, as the catalog entry's (`CatalogEntry.marker`). */
const storedMarker = (r: { freshness: string | null; rowCount: number | null }) => versionMarker({ freshness: r.freshness, rowCount: r.rowCount });

type StoredChart = StoredAppChart;

function chartResourceOf(f: JobRequest): string | null {
  const p = chartPayload.safeParse(f.payload);
  return f.name === appChartJob.name && p.success ? appChartJob.resource(p.data) : null;
}

/** The token's charts as stored: before this run's catalog is written, the catalog as the 404s' runs saw it. */
function storedCharts(ctx: JobContext, slug: string): Promise<StoredChart[]> {
  return ctx.known.appCharts(slug);
}

/** Chart-data jobs for the charts already in the catalog table, with the markers they were stored with. */
function storedChartFollowUps(slug: string, rows: readonly StoredChart[]): JobRequest[] {
  return rows.map((r) => ({ name: 'app.chart', payload: { slug, chartKey: r.key, link: null, marker: storedMarker(r) } }));
}

/**
 * The follow-ups without the charts left alone after a 404 (not-found.ts). `whole`: the
 * follow-ups come from a catalog read whole now, so a stored chart they leave out is absent.
 */
async function screenCharts(ctx: JobContext, slug: string, stored: readonly StoredChart[], followUps: JobRequest[], whole: boolean): Promise<JobRequest[]> {
  const resourceOf = (chartKey: string) => appChartJob.resource({ slug, chartKey });
  const planned = followUps.flatMap((f) => {
    const r = chartResourceOf(f);
    const p = chartPayload.safeParse(f.payload);
    return r && p.success ? [{ resource: r, marker: p.data.marker ?? null }] : [];
  });
  const states = await readNotFoundOf(ctx, [...stored.map((r) => resourceOf(r.key)), ...planned.map((p) => p.resource)]);
  if (states.length === 0) return followUps;
  const previous = new Map(stored.map((r) => [resourceOf(r.key), storedMarker(r)]));
  const entries = new Map<string, PlannedEntry>(planned.map((p) => [p.resource, { marker: p.marker, previous: previous.get(p.resource) ?? null }]));
  const leaveOut = await screenNotFound(ctx, states, entries, whole);
  return withoutLeftOut(followUps, leaveOut, chartResourceOf);
}

export const appChartsJob = defineJob({
  name: 'app.charts',
  source: 'app',
  group: 'charts',
  payload: tokenPayload,
  resource: (p) => `token/${p.slug}/charts`,
  token: (p) => p.slug,
  marker: (p) => p.marker,
  async unchangedFollowUps(ctx, p) {
    // The catalog is as before, but a chart whose last fetch failed must still be healed:
    // plan every known chart again; each skips itself when its own marker matches. The
    // stored rows are not a whole catalog (they keep charts it stopped listing).
    const stored = await storedCharts(ctx, p.slug);
    return screenCharts(ctx, p.slug, stored, storedChartFollowUps(p.slug, stored), false);
  },
  async handle(ctx, p) {
    const f = await fetchList(ctx, { route: 'app.charts', params: { slug: p.slug } }, z.unknown(), (d) => readList(d));
    const list = f.items;
    const items = list ?? [];
    const entries = items.map(readCatalogItem);
    const valid = entries.filter((e): e is CatalogEntry => e !== null);
    const invalidItems = entries.length - valid.length;
    const rows = valid.map((e) => ({
      tokenSlug: p.slug,
      chartKey: e.key,
      title: e.title,
      section: e.section,
      rowCount: e.rowCount,
      dataPath: documentedPath('app.chart', { slug: p.slug, chartKey: e.key }),
      payload: e.raw,
      ...rowMeta(ctx, { asOf: f.meta.asOf, freshness: e.freshness }),
    }));
    const followUps: JobRequest[] = valid.map((e) => ({ name: 'app.chart', payload: { slug: p.slug, chartKey: e.key, link: e.link, marker: e.marker } }));
    // Read before this catalog is written: the catalog as the 404s' runs saw it.
    const stored = await storedCharts(ctx, p.slug);
    return {
      status: invalidItems ? 'partial' : 'ok',
      asOf: f.meta.asOf,
      hash: f.sha256,
      details: { charts: valid.length, invalidItems },
      // A catalog read whole states the token's charts: one it no longer lists is closed, with its points.
      writes: [
        into(charts, rows, { ...wholeSet(charts, { tokenSlug: p.slug }, list !== undefined && invalidItems === 0), fromEach: items.flatMap((raw, i) => (entries[i] ? [f.pageOf(raw)] : [])) }),
        into(chartPoints, [], keptMembers(chartPoints, { tokenSlug: p.slug }, list !== undefined && invalidItems === 0, valid.map((e) => ({ chartKey: e.key })))),
      ],
      followUps: () => screenCharts(ctx, p.slug, stored, followUps, list !== undefined && invalidItems === 0),
    };
  },
});
