// The app's metric catalog as stored, units and kinds by slug: for the cells of a screener row or
// a snapshot that came without units.
import { metrics } from '../../../schema/warehouse/app.ts';
import { question } from '../../../engine/kit/knows.ts';

export const storedMetricCatalog = question('storedMetricCatalog', async (w) => {
  const rows = await w.db.select({ slug: metrics.slug, unit: metrics.unit, kind: metrics.kind }).from(metrics);
  return new Map(rows.map((r) => [r.slug, { unit: r.unit, kind: r.kind }]));
});
