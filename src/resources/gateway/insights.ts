// Pure: the screener's `insights` (a top-level array beside `data`). Their shape is not
// shown; an insight's key is its own `id`, or the hash of its content when it has none, so
// the same insight sent again lands on the same row.
import { gatewayInsight } from '../../schema/upstream/gateway.ts';
import { isRecord, readTime } from '../../schema/upstream/values.ts';
import type { gatewayScreenerInsights } from '../../schema/warehouse/gateway.ts';
import { rowMeta, type Stamp } from '../../engine/kit/rows.ts';
import { contentKey, decimalReader, rowStatus, textOrNull } from './cells.ts';

type InsightInsert = typeof gatewayScreenerInsights.$inferInsert;

export function normalizeInsight(input: Stamp, raw: unknown, asOf: Date | null): InsightInsert {
  const p = gatewayInsight.safeParse(isRecord(raw) ? raw : null);
  if (!p.success) return { id: contentKey(raw), payload: raw, ...rowMeta(input, { asOf, status: 'invalid' }) };
  const d = p.data;
  const dec = decimalReader();
  return {
    id: d.id ?? contentKey(raw),
    type: d.type ?? null,
    title: d.title ?? null,
    tokenSlug: textOrNull(d.tokenSlug),
    value: dec.read(d.value, 'value'),
    window: d.window ?? null,
    generatedAt: readTime(d.generatedAt),
   
    payload: raw,
    ...rowMeta(input, { asOf, status: rowStatus(dec) }),
  };
}

/** The insights of a screener body; `present` says whether the body had the array at all. */
export function normalizeInsights(input: Stamp, insights: unknown, asOf: Date | null): { present: boolean; rows: InsightInsert[] } {
  if (!Array.isArray(insights)) return { present: false, rows: [] };
  return { present: true, rows: insights.map((raw) => normalizeInsight(input, raw, asOf)) };
}
