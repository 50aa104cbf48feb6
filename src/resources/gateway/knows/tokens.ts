// The gateway's tokens as stored, delisted ones included: what a screener row's symbol is matched
// against, and what an unchanged list plans again.
import { gatewayTokens } from '../../../schema/warehouse/gateway.ts';
import { question } from '../../../engine/kit/knows.ts';

export interface StoredGatewayToken {
  slug: string;
  symbol: string | null;
  delisted: boolean;
}

export const storedGatewayTokens = question('storedGatewayTokens', async (w): Promise<StoredGatewayToken[]> => {
  const rows = await w.db.select({ slug: gatewayTokens.slug, symbol: gatewayTokens.symbol, delistedAt: gatewayTokens.delistedAt }).from(gatewayTokens);
  return rows.map((r) => ({ slug: r.slug, symbol: r.symbol, delisted: r.delistedAt !== null }));
});
