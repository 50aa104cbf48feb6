// A token's app chart catalog as stored, each chart with the marker it was stored under: what an
// unchanged catalog plans again.
import { eq } from 'drizzle-orm';
import { charts } from '../../../schema/warehouse/app.ts';
import { question } from '../../../engine/kit/knows.ts';

export interface StoredAppChart {
  key: string;
  freshness: string | null;
  rowCount: number | null;
}

export const storedAppCharts = question(
  'storedAppCharts',
  (w, slug: string): Promise<StoredAppChart[]> => w.db.select({ key: charts.chartKey, freshness: charts.freshness, rowCount: charts.rowCount }).from(charts).where(eq(charts.tokenSlug, slug)),
);
