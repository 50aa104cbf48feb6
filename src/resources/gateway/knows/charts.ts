// A token's gateway chart catalog as stored, whole rows: what an unchanged catalog plans again.
import { eq } from 'drizzle-orm';
import { gatewayCharts } from '../../../schema/warehouse/gateway.ts';
import { question } from '../../../engine/kit/knows.ts';

/** A token's gateway chart as stored: its whole row. */
export type StoredGatewayChart = typeof gatewayCharts.$inferSelect;

export const storedGatewayCharts = question('storedGatewayCharts', (w, slug: string): Promise<StoredGatewayChart[]> => w.db.select().from(gatewayCharts).where(eq(gatewayCharts.tokenSlug, slug)));
