// The metric catalog as stored by the app.metrics job, for cells that came without units.
import { metrics } from '../../schema/warehouse/app.ts';
import type { MetricCatalog } from '../../engine/metric-cells.ts';
import type { JobContext } from '../../engine/types.ts';

export async function loadMetricCatalog(ctx: JobContext): Promise<MetricCatalog> {
  const rows = await ctx.warehouse.db.select({ slug: metrics.slug, unit: metrics.unit, kind: metrics.kind }).from(metrics);
  return new Map(rows.map((r) => [r.slug, { unit: r.unit, kind: r.kind }]));
}
