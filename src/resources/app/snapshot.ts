// /api/v1/tokens/{slug}: a token's snapshot, its streams and every numeric cell.
import { z } from 'zod';
import { snapshot, type TokenItem } from '../../schema/upstream/app.ts';
import { isRecord, readText, readTime, versionMarker } from '../../schema/upstream/values.ts';
import { metricValues, tokenSnapshots, tokenStreams } from '../../schema/warehouse/app.ts';
import { rowMeta, type Stamp } from '../../engine/kit/rows.ts';
import { wholeSet } from '../../engine/kit/stated-set.ts';
import { cellValue, collectMetricCells, enrichFromCatalog, fieldValue, tallyCells, type MetricCatalog } from '../../engine/kit/metric-cells.ts';
import { defineJob, into } from '../../engine/kit/types.ts';
import { storedMetricCatalog } from './knows/metric-catalog.ts';
import { metricValueRows } from './screener.ts';

export const tokenPayload = z.object({ slug: z.string().min(1), marker: z.string().nullish() });

/**
 * Pure: the payload of a token route's job, from the token list's entry (app.tokens): its
 * `freshness` as sent is the marker (an `asOf` moved by a recomputation is a change here).
 * `coverage` picks the entries that have the route; none: every entry.
 */
export function tokenRoute(coverage?: keyof NonNullable<TokenItem['coverage']>) {
  return (item: TokenItem): z.infer<typeof tokenPayload>[] => (coverage && !item.coverage?.[coverage] ? [] : [{ slug: item.slug, marker: versionMarker(item.freshness) }]);
}

/** The parts of a snapshot its metric cells are read from. */
const SNAPSHOT_CELL_ROOTS = ['row', 'combinedRevenue', 'fundamentals', 'streams'] as const;

/** Pure: the snapshot's rows. */
export function normalizeSnapshot(input: Stamp, slug: string, data: z.infer<typeof snapshot>, raw: Record<string, unknown>, metaAsOf: Date | null, catalog: MetricCatalog = new Map()) {
  const cells = enrichFromCatalog(collectMetricCells(raw, SNAPSHOT_CELL_ROOTS), catalog);
  // The data's own time: the snapshot's `asOf` if it has one, else the envelope's. When
  // upstream generated it (often hours later) is another clock, kept apart.
  const asOf = readTime(raw.asOf) ?? metaAsOf;
  const generatedAt = readTime(data.freshness?.generatedAt);
  const freshness = data.freshness?.status ?? null;
  const bad = cells.some((c) => c.status === 'invalid');
  const row = {
    tokenSlug: slug,
    displayName: data.token?.displayName ?? null,
    symbol: data.token?.symbol ?? null,
    effectiveMarketCap: cellValue(cells, 'row.effectiveMarketCap'),
    annualizedRevenue: cellValue(cells, 'row.annualizedRevenue'),
    combinedRevenueAnnualized: cellValue(cells, 'combinedRevenue.annualized'),
    fdvToRevenue: cellValue(cells, 'fundamentals.fdvToRevenue'),
    multiple30d: cellValue(cells, 'row.multiples.30d'),
    multiple365d: cellValue(cells, 'row.multiples.365d'),
    sections: data.sections ?? null,
    generatedAt,
    payload: raw,
    ...rowMeta(input, { asOf, freshness, status: bad ? 'invalid' : 'ok' }),
  };
  const streams = (data.streams ?? []).map((s) => {
    const v = fieldValue(s.annualizedRevenue);
    return {
      tokenSlug: slug,
      streamKey: s.key,
      label: s.label ?? null,
      mixPercentLabel: s.mixPercentLabel ?? null,
      annualizedRevenue: v.value,
      payload: s,
      ...rowMeta(input, { asOf, freshness, status: v.valid ? 'ok' : 'invalid' }),
    };
  });
  return { row, streams, cells: metricValueRows(input, slug, 'snapshot', cells), cellsRead: cells };
}

export const appSnapshotJob = defineJob({
  name: 'app.snapshot',
  route: 'app.token',
  source: 'app',
  group: 'snapshot',
  plannedBy: 'app.tokens',
  each: tokenRoute('snapshot'),
  payload: tokenPayload,
  resource: (p) => `token/${p.slug}/snapshot`,
  token: (p) => p.slug,
  marker: (p) => p.marker,
  // Units and kinds for cells that came without them.
  knows: () => [storedMetricCatalog.ask()],
  one: {
    request: (p) => ({ params: { slug: p.slug } }),
    schema: snapshot,
    read(input, f) {
      const p = input.payload;
      const raw = isRecord(f.body.data) ? f.body.data : {};
      const n = normalizeSnapshot(input, p.slug, f.data, raw, f.meta.asOf, storedMetricCatalog.answerIn(input.known));
      return {
        status: 'ok',
        asOf: n.row.asOf,
        hash: f.response.sha256,
        // The newest generatedAt: the row keeps the one that came with its values (a volatile column).
        details: { freshness: readText(f.data.freshness?.status) ?? null, generatedAt: n.row.generatedAt?.toISOString() ?? null },
        cells: tallyCells(n.cellsRead),
        writes: [
          into(tokenSnapshots, [n.row]),
          // Streams close only when the snapshot carries its `streams` array, and the
          // snapshot's cells only when it carries every part they are read from (absent is not empty).
          into(tokenStreams, n.streams, wholeSet(tokenStreams, { tokenSlug: p.slug }, Array.isArray(raw.streams))),
          into(metricValues, n.cells, wholeSet(metricValues, { tokenSlug: p.slug, surface: 'snapshot' }, SNAPSHOT_CELL_ROOTS.every((k) => raw[k] !== undefined && raw[k] !== null))),
        ],
      };
    },
  },
});
