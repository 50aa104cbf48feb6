// /api/v1/tokens/{slug}/charts/{chartKey}: one chart's rows, in long format (x, series).
import { z } from 'zod';
import { chartData } from '../../schema/upstream/app.ts';
import { isLosslessNumber } from 'lossless-json';
import { isRecord, readDecimal, readText, readTime } from '../../schema/upstream/values.ts';
import { chartPoints } from '../../schema/warehouse/app.ts';
import { rowMeta, type Stamp } from '../../engine/kit/rows.ts';
import { wholeSet } from '../../engine/kit/stated-set.ts';
import { cellOf, declaredNotNumeric, textCells, timeColumnIndex } from '../../engine/kit/table.ts';
import { CellTally } from '../../engine/kit/cell-tally.ts';
import { refusalDetails, refusalNotes, splitItems } from '../../engine/kit/item-refusals.ts';
import { defineJob, into, type ItemsLocator } from '../../engine/kit/types.ts';

export const chartPayload = z.object({
  slug: z.string().min(1),
  chartKey: z.string().min(1),
  link: z.string().nullish(),
  marker: z.string().nullish(),
});

/**
 * Pure: chart rows as points; the x cell kept as sent, and as a timestamp when it is one.
 * A column of text (declared a dimension or label, or with no cell that is a number) is no
 * series: where it tells apart rows that share an x it is a dimension, and names the series
 * with the value (`<value>/<column>`); otherwise it labels the row and is not stored (the
 * body is archived). A series cell that is not a number is counted in `cells`.
 */
export function readChartPoints(input: Stamp, slug: string, chartKey: string, data: z.infer<typeof chartData>, asOf: Date | null) {
  const xi = timeColumnIndex(data.columns, data.x);
  const xColumn = data.columns[xi]!;
  const meta = rowMeta(input, { asOf, freshness: typeof data.freshness === 'string' ? data.freshness : null });
  const cells = new CellTally();
  const textual = new Set(data.columns.flatMap((col, i) => (i !== xi && (declaredNotNumeric(col) || textCells(data.rows, col, i) !== null) ? [i] : [])));
  const xs = data.rows.map((row) => xText(cellOf(row, xColumn, xi)));
  const dimensions = new Set(xs).size < xs.length ? [...textual] : [];
  const points: (typeof chartPoints.$inferInsert)[] = [];
  data.rows.forEach((row, r) => {
    const x = xs[r];
    if (x === null || x === undefined) {
      cells.badTime();
      return;
    }
    const ts = readTime(cellOf(row, xColumn, xi));
    const prefix = dimensions.map((i) => `${readText(cellOf(row, data.columns[i]!, i)) ?? ''}/`).join('');
    data.columns.forEach((col, i) => {
      if (i === xi || textual.has(i)) return;
      const d = readDecimal(cellOf(row, col, i));
      cells.column(col.key, d.ok);
      points.push({ tokenSlug: slug, chartKey, x, series: prefix + col.key, ts, value: d.ok ? d.value : null, unit: col.unit ?? null, kind: col.kind ?? null, ...meta, status: d.ok ? 'ok' : 'invalid' });
    });
  });
  return { points, cells, labels: [...textual].filter((i) => !dimensions.includes(i)).map((i) => data.columns[i]!.key), dimensions: dimensions.map((i) => data.columns[i]!.key) };
}

/** Pure: a chart's rows in its `data`, each (its x and its points) refusable alone (item-refusals.ts). */
export const chartRows: ItemsLocator = (data) => (isRecord(data) && Array.isArray(data.rows) ? data.rows : undefined);

function xText(cell: unknown): string | null {
  return typeof cell === 'string' ? cell : isLosslessNumber(cell) ? String(cell) : null;
}

export const appChartJob = defineJob({
  name: 'app.chart',
  route: 'app.chart',
  source: 'app',
  group: 'chart',
  // The chart catalog lists the charts' payloads as they are (app.charts).
  plannedBy: 'app.charts',
  each: (item: z.infer<typeof chartPayload>) => [item],
  payload: chartPayload,
  resource: (p) => `token/${p.slug}/chart/${p.chartKey}`,
  token: (p) => p.slug,
  marker: (p) => p.marker,
  one: {
    request: (p) => ({ params: { slug: p.slug, chartKey: p.chartKey }, ...(p.link ? { link: p.link } : {}) }),
    schema: chartData,
    items: chartRows,
    read(input, f) {
      const p = input.payload;
      // A row holding a string Postgres cannot store is refused alone, its points with it;
      // array and object rows are both the documented forms (no sibling shape is asked for).
      const split = splitItems({ items: f.data.rows, refused: f.refused }, { shapes: false });
      const { points, cells, labels, dimensions } = readChartPoints(input, p.slug, p.chartKey, { ...f.data, rows: split.understood as typeof f.data.rows }, f.meta.asOf);
      const refused = refusalDetails(split.refused);
      const columns = labels.length + dimensions.length > 0 ? { labelColumns: labels, dimensionColumns: dimensions } : {};
      return {
        status: split.refused.length > 0 ? 'partial' : 'ok',
        details: Object.keys(columns).length + Object.keys(refused).length > 0 ? { ...columns, ...refused } : null,
        cells,
        notes: refusalNotes(split.refused),
        // The chart's rows are all its points: one it no longer has is closed; not while a row is refused.
        writes: [into(chartPoints, points, wholeSet(chartPoints, { tokenSlug: p.slug, chartKey: p.chartKey }, split.refused.length === 0))],
      };
    },
  },
});
