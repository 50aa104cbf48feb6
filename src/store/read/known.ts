// What the resources know of the warehouse, read for them: a resource never queries the
// warehouse itself (its file holds no SQL). The lifecycle hands each job a `Known` over the
// warehouse; each method is one question a resource asks (what a planner stored before this
// run's list is written, the streams a token is known to have). It writes nothing: what a
// resource writes goes through the lifecycle, in its job's transaction.
import { and, eq, isNull, sql } from 'drizzle-orm';
import { charts, metrics, tokens, tokenStreams } from '../../schema/warehouse/app.ts';
import { gatewayCharts, gatewayTokens } from '../../schema/warehouse/gateway.ts';
import { rawResponses } from '../../schema/warehouse/sync.ts';
import type { Warehouse } from '../connection.ts';

export interface StoredAppChart {
  key: string;
  freshness: string | null;
  rowCount: number | null;
}

/** A token's gateway chart as stored: its whole row. */
export type StoredGatewayChart = typeof gatewayCharts.$inferSelect;

export interface StoredGatewayToken {
  slug: string;
  symbol: string | null;
  delisted: boolean;
}

export interface Known {
  /** The app's metric catalog (units and kinds by slug), for cells that came without units. */
  metricCatalog(): Promise<Map<string, { unit: string | null; kind: string | null }>>;
  /** A token's app chart catalog as stored. */
  appCharts(slug: string): Promise<StoredAppChart[]>;
  /** The stream keys known for a token: its snapshot's streams and its screener row's. */
  streamKeys(slug: string): Promise<Set<string>>;
  /** A token's gateway chart catalog as stored. */
  gatewayCharts(slug: string): Promise<StoredGatewayChart[]>;
  /** The app's token list as stored, delisted tokens left out: each listed item as it was sent. */
  appTokenItems(): Promise<unknown[]>;
  /** The gateway's tokens as stored, delisted ones included. */
  gatewayTokens(): Promise<StoredGatewayToken[]>;
  /** An archived body by its hash (undefined: not archived, or kept as text). */
  archivedBody(source: string, path: string, sha256: string): Promise<unknown>;
}

export function knownOf(warehouse: Warehouse): Known {
  const db = warehouse.db;
  return {
    async metricCatalog() {
      const rows = await db.select({ slug: metrics.slug, unit: metrics.unit, kind: metrics.kind }).from(metrics);
      return new Map(rows.map((r) => [r.slug, { unit: r.unit, kind: r.kind }]));
    },
    appCharts(slug) {
      return db.select({ key: charts.chartKey, freshness: charts.freshness, rowCount: charts.rowCount }).from(charts).where(eq(charts.tokenSlug, slug));
    },
    async streamKeys(slug) {
      const fromSnapshot = await db.select({ key: tokenStreams.streamKey }).from(tokenStreams).where(eq(tokenStreams.tokenSlug, slug));
      const fromScreener = await warehouse.query<{ key: string | null }>(
        sql`select s->>'key' as key from app.screener_rows r, jsonb_array_elements(case when jsonb_typeof(r.payload->'streams') = 'array' then r.payload->'streams' else '[]'::jsonb end) s where r.token_slug = ${slug}`,
      );
      return new Set([...fromSnapshot.map((r) => r.key), ...fromScreener.map((r) => r.key).filter((k): k is string => typeof k === 'string' && k !== '')]);
    },
    gatewayCharts(slug) {
      return db
        .select()
        .from(gatewayCharts)
        .where(eq(gatewayCharts.tokenSlug, slug));
    },
    async appTokenItems() {
      const rows = await db.select({ payload: tokens.payload }).from(tokens).where(isNull(tokens.delistedAt)).orderBy(tokens.slug);
      return rows.map((r) => r.payload);
    },
    async gatewayTokens() {
      const rows = await db.select({ slug: gatewayTokens.slug, symbol: gatewayTokens.symbol, delistedAt: gatewayTokens.delistedAt }).from(gatewayTokens);
      return rows.map((r) => ({ slug: r.slug, symbol: r.symbol, delisted: r.delistedAt !== null }));
    },
    async archivedBody(source, path, sha256) {
      const rows = await db
        .select({ body: rawResponses.body })
        .from(rawResponses)
        .where(and(eq(rawResponses.source, source), eq(rawResponses.path, path), eq(rawResponses.sha256, sha256)))
        .limit(1);
      return rows[0]?.body ?? undefined;
    },
  };
}
