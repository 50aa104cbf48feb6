// The metric catalog as stored by the app.metrics job, for cells that came without units.
import type { MetricCatalog } from '../../engine/metric-cells.ts';
import type { JobContext } from '../../engine/types.ts';

export function loadMetricCatalog(ctx: JobContext): Promise<MetricCatalog> {
  return ctx.known.metricCatalog();
}
