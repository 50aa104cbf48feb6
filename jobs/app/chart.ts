// /api/v1/tokens/{slug}/charts/{chartKey}: one chart's rows, in long format (x, series).
import { z } from 'zod';
import { chartData } from '../../schema/upstream/app.ts';
import { isLosslessNumber } from 'lossless-json';
import { readDecimal, readTime } from '../../schema/upstream/values.ts';
import { chartPoints } from '../../schema/warehouse/app.ts';
import { skipIfUnchanged } from '../shared/change.ts';
import { commit, prepareRows, rowMeta } from '../shared/commit.ts';
import { fetchData } from '../shared/fetch.ts';
import { cellOf, timeColumnIndex } from '../shared/table.ts';
import { defineJob, type JobContext } from '../types.ts';

export const chartPayload = z.object({
  slug: z.string().min(1),
  chartKey: z.string().min(1),
  link: z.string().nullish(),
  marker: z.string().nullish(),
});

/** Pure: chart rows as points; the x cell kept as sent, and as a timestamp when it is one. */
export function readChartPoints(ctx: JobContext, slug: string, chartKey: string, data: z.infer<typeof chartData>, asOf: Date | null) {
  const xi = timeColumnIndex(data.columns, data.x);
  const xColumn = data.columns[xi]!;
  const meta = rowMeta(ctx, { asOf, freshness: typeof data.freshness === 'string' ? data.freshness : null });
  const points: (typeof chartPoints.$inferInsert)[] = [];
  let skipped = 0;
  for (const row of data.rows) {
    const xCell = cellOf(row, xColumn, xi);
    const x = typeof xCell === 'string' ? xCell : isLosslessNumber(xCell) ? String(xCell) : null;
    if (x === null) {
      skipped++;
      continue;
    }
    const ts = readTime(xCell);
    data.columns.forEach((col, i) => {
      if (i === xi) return;
      const d = readDecimal(cellOf(row, col, i));
      points.push({ tokenSlug: slug, chartKey, x, series: col.key, ts, value: d.ok ? d.value : null, unit: col.unit ?? null, kind: col.kind ?? null, ...meta, status: d.ok ? 'ok' : 'invalid' });
    });
  }
  return { points, skipped };
}

export const appChartJob = defineJob({
  name: 'app.chart',
  source: 'app',
  group: 'chart',
  payload: chartPayload,
  resource: (p) => `token/${p.slug}/chart/${p.chartKey}`,
  token: (p) => p.slug,
  async handle(ctx, p) {
    const resource = `token/${p.slug}/chart/${p.chartKey}`;
    if (await skipIfUnchanged(ctx, 'app', resource, p.marker)) return { status: 'unchanged', rows: 0 };
    const req = { route: 'app.chart' as const, params: { slug: p.slug, chartKey: p.chartKey }, ...(p.link ? { link: p.link } : {}) };
    const f = await fetchData(ctx, req, chartData);
    const { points, skipped } = readChartPoints(ctx, p.slug, p.chartKey, f.data, f.meta.asOf);
    const write = await prepareRows(ctx, chartPoints, points, {
      target: [chartPoints.tokenSlug, chartPoints.chartKey, chartPoints.x, chartPoints.series],
      batchSize: ctx.settings.batchSize,
    });
    const n = await commit(
      ctx,
      { source: 'app', resource, kind: 'chart', status: 'ok', freshness: p.marker ?? null, asOf: f.meta.asOf, hash: f.response.sha256, details: skipped ? { rowsWithoutX: skipped } : null },
      (tx) => write.run(tx),
    );
    return { status: 'ok', rows: n };
  },
});
