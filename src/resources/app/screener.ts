// /api/v1/screener: one row per token, into the latest table, the day's archive and
// app.metric_values (every numeric cell, in whatever form it came).
import { z } from 'zod';
import { screenerRow } from '../../schema/upstream/app.ts';
import { isRecord, readText } from '../../schema/upstream/values.ts';
import { metricValues, screenerRows } from '../../schema/warehouse/app.ts';
import { rowMeta, verdictCounts, type Stamp } from '../../engine/kit/rows.ts';
import { wholeSet } from '../../engine/kit/stated-set.ts';
import { refusalDetails, refusalNotes, splitItems } from '../../engine/kit/item-refusals.ts';
import { cellValue, collectMetricCells, enrichFromCatalog, type MetricCatalog, type MetricCell, tallyCells } from '../../engine/kit/metric-cells.ts';
import { defineJob, into } from '../../engine/kit/types.ts';
import { storedMetricCatalog } from './knows/metric-catalog.ts';

const WINDOWS = ['7d', '30d', '90d', '180d', '365d'] as const;

export interface ScreenerRead {
  slug: string;
  displayName: string | null;
  symbol: string | null;
  cells: MetricCell[];
  raw: Record<string, unknown>;
}

/** Pure: a screener row's token and numeric cells, or null when it names no token. */
export function readScreenerRow(raw: unknown, catalog: MetricCatalog = new Map()): ScreenerRead | null {
  const p = screenerRow.safeParse(raw);
  if (!p.success || !isRecord(raw)) return null;
  const t = p.data.token;
  const token = typeof t === 'string' ? { slug: t, displayName: null, symbol: null } : { slug: t.slug, displayName: t.displayName ?? null, symbol: t.symbol ?? null };
  return { ...token, cells: enrichFromCatalog(collectMetricCells(raw), catalog), raw };
}

export function screenerValues(r: ScreenerRead) {
  const multiple = (w: (typeof WINDOWS)[number]) => cellValue(r.cells, `multiples.${w}`);
  return {
    effectiveMarketCap: cellValue(r.cells, 'effectiveMarketCap'),
    effectiveRatio: cellValue(r.cells, 'effectiveRatio'),
    annualizedRevenue: cellValue(r.cells, 'annualizedRevenue'),
    multiple7d: multiple('7d'),
    multiple30d: multiple('30d'),
    multiple90d: multiple('90d'),
    multiple180d: multiple('180d'),
    multiple365d: multiple('365d'),
    displayName: r.displayName,
    symbol: r.symbol,
  };
}

export function metricValueRows(input: Stamp, slug: string, surface: 'screener' | 'snapshot', cells: MetricCell[]): (typeof metricValues.$inferInsert)[] {
  return cells.map((c) => ({
    tokenSlug: slug,
    surface,
    path: c.path,
    metric: c.metric,
    value: c.value,
    unit: c.unit,
    kind: c.kind,
    reason: c.reason,
    payload: c.payload,
    ...rowMeta(input, { asOf: c.asOf, freshness: c.freshness, status: c.status }),
  }));
}

export const appScreenerJob = defineJob({
  name: 'app.screener',
  route: 'app.screener',
  source: 'app',
  group: 'screener',
  plannedBy: 'app.tokens',
  payload: z.object({}),
  resource: () => 'screener',
  knows: () => [storedMetricCatalog.ask()],
  reader: {
    asks: () => [{ route: 'app.screener', schema: z.array(z.unknown()), list: {} }],
    read(input, [got]) {
      const f = got!.list!;
      const catalog = storedMetricCatalog.answerIn(input.known);
      // A row refused alone (item-refusals.ts) is not read: nothing of it is written.
      const split = splitItems(f);
      const reads = split.understood.map((raw) => readScreenerRow(raw, catalog));
      const valid = reads.filter((r): r is ScreenerRead => r !== null);
      const invalidItems = reads.length - valid.length + split.refused.length;
      const latest = valid.map((r) => {
        const bad = r.cells.some((c) => c.status === 'invalid');
        return {
          tokenSlug: r.slug,
          ...screenerValues(r),
          payload: r.raw,
          ...rowMeta(input, { asOf: f.meta.asOf, freshness: readText(r.raw.freshness) ?? null, status: bad ? 'invalid' : 'ok' }),
        };
      });
      const cells = valid.flatMap((r) => metricValueRows(input, r.slug, 'screener', r.cells));
      const freshness = verdictCounts(latest.map((r) => r.freshness));
      return {
        status: invalidItems || f.incomplete !== undefined ? 'partial' : 'ok',
        asOf: f.meta.asOf,
        hash: f.sha256,
        details: invalidItems || freshness || f.incomplete !== undefined ? { ...(invalidItems ? { invalidItems } : {}), ...(freshness ? { freshness } : {}), ...refusalDetails(split.refused), ...(f.incomplete !== undefined ? { incomplete: f.incomplete } : {}) } : null,
        notes: refusalNotes(split.refused),
        cells: tallyCells(valid.flatMap((r) => r.cells)),
        writes: [
          // A screener whose every row names its token states the screener's membership: a
          // token no longer in it leaves, with its cells (a row that cannot be read could be anyone's).
          into(screenerRows, latest, { ...wholeSet(screenerRows, {}, invalidItems === 0 && f.incomplete === undefined), fromEach: valid.map((r) => f.pageOf(r.raw)) }),
          into(metricValues, cells, { ...wholeSet(metricValues, { surface: 'screener' }, invalidItems === 0 && f.incomplete === undefined), fromEach: valid.flatMap((r) => r.cells.map(() => f.pageOf(r.raw))) }),
        ],
      };
    },
  },
});
