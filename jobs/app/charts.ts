// /api/v1/tokens/{slug}/charts: the chart catalog, then one data job per chart. A chart
// whose catalog freshness and row count are as at its last fetch is not fetched again.
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { readList } from '../../schema/upstream/envelope.ts';
import { versionMarker } from '../../schema/upstream/values.ts';
import { charts } from '../../schema/warehouse/app.ts';
import { upsertRows } from '../../src/warehouse/upsert.ts';
import { skipIfUnchanged } from '../shared/change.ts';
import { commit, rowMeta } from '../shared/commit.ts';
import { fetchData } from '../shared/fetch.ts';
import { readCatalogItem, type CatalogEntry } from '../shared/lists.ts';
import { documentedPath } from '../shared/paths.ts';
import { defineJob, type JobContext, type JobRequest } from '../types.ts';
import { tokenPayload } from './snapshot.ts';

/** Chart-data jobs for the charts already in the catalog table, with the markers they were stored with. */
async function storedChartFollowUps(ctx: JobContext, slug: string): Promise<JobRequest[]> {
  const rows = await ctx.warehouse.db.select({ key: charts.chartKey, freshness: charts.freshness, rowCount: charts.rowCount }).from(charts).where(eq(charts.tokenSlug, slug));
  return rows.map((r) => ({ name: 'app.chart', payload: { slug, chartKey: r.key, link: null, marker: versionMarker({ freshness: r.freshness, rowCount: r.rowCount }) } }));
}

export const appChartsJob = defineJob({
  name: 'app.charts',
  source: 'app',
  group: 'charts',
  payload: tokenPayload,
  resource: (p) => `token/${p.slug}/charts`,
  token: (p) => p.slug,
  async handle(ctx, p) {
    const resource = `token/${p.slug}/charts`;
    if (await skipIfUnchanged(ctx, 'app', resource, p.marker)) {
      // The catalog is as before, but a chart whose last fetch failed must still be healed:
      // plan every known chart again; each skips itself when its own marker matches.
      return { status: 'unchanged', rows: 0, followUps: await storedChartFollowUps(ctx, p.slug) };
    }
    const f = await fetchData(ctx, { route: 'app.charts', params: { slug: p.slug } }, z.unknown());
    const items = readList(f.data) ?? [];
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
    const status = invalidItems ? 'partial' : 'ok';
    const n = await commit(
      ctx,
      { source: 'app', resource, kind: 'charts', status, freshness: p.marker ?? null, asOf: f.meta.asOf, hash: f.response.sha256, details: { charts: valid.length, invalidItems } },
      (tx) => upsertRows(tx, charts, rows, { target: [charts.tokenSlug, charts.chartKey] }),
    );
    const followUps: JobRequest[] = valid.map((e) => ({ name: 'app.chart', payload: { slug: p.slug, chartKey: e.key, link: e.link, marker: e.marker } }));
    return { status, rows: n, followUps };
  },
});
