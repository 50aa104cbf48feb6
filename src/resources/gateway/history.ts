// /v1/tokens/{slug}/metrics/history?period=P: TrendData (`times[]`, `series[]` with `key`
// and `values`) in long format, one job per configured period. `data: null` means the
// series is not materialized: recorded as such in sync.resource_state, and the points an
// earlier sync stored are kept.
//
// Periods are not substituted as chart timeframes are (timeframes.ts): nothing the gateway
// serves lists the periods a token supports (the page's `sections.trend` says only whether
// the trend is supported, the route takes every documented period), so each configured
// period is asked as is, and one a token lacks is on record as `not_materialized`.
import { readDecimal } from '../../schema/upstream/values.ts';
import { z } from 'zod';
import { GATEWAY_PERIODS } from '../../lib/variables.ts';
import { gatewayTrend, type GatewayTrendIn } from '../../schema/upstream/gateway.ts';
import { readTime } from '../../schema/upstream/values.ts';
import { gatewayTrendPoints } from '../../schema/warehouse/gateway.ts';
import { rowMeta, type Stamp } from '../../engine/kit/rows.ts';
import { CellTally } from '../../engine/kit/cell-tally.ts';
import { wholeSet } from '../../engine/kit/stated-set.ts';
import { defineJob, into } from '../../engine/kit/types.ts';
import type { GatewayTokenItem } from './tokens.ts';

declare module '../../engine/kit/declaration.ts' {
  interface SyncSettings {
    /** The periods of a token's gateway history mirrored, one job each (TE_GATEWAY_HISTORY_PERIODS). */
    gatewayHistoryPeriods: readonly string[];
  }
}

export const historyPayload = z.object({ slug: z.string().min(1), period: z.enum(GATEWAY_PERIODS), marker: z.string().nullish() });

export interface TrendRead {
  points: (typeof gatewayTrendPoints.$inferInsert)[];
  series: string[];
  lastTs: Date | null;
  /** Times that could not be read (their values are left out). */
  badTimes: number;
  /** Values beyond `times`, or series shorter than it. */
  misaligned: number;
  invalidValues: number;
  cells: CellTally;
}

/** Pure: TrendData in long format (token, period, series, time). */
export function readTrend(input: Stamp, slug: string, period: string, data: GatewayTrendIn, asOf: Date | null): TrendRead {
  const out: TrendRead = { points: [], series: [], lastTs: null, badTimes: 0, misaligned: 0, invalidValues: 0, cells: new CellTally() };
  const times = data.times.map(readTime);
  out.badTimes = times.filter((t) => t === null).length;
  for (let i = 0; i < out.badTimes; i++) out.cells.badTime();
  for (const t of times) if (t && (!out.lastTs || t > out.lastTs)) out.lastTs = t;
  const meta = rowMeta(input, { asOf });
  for (const s of data.series) {
    out.series.push(s.key);
    if (s.values.length !== times.length) {
      out.misaligned += Math.abs(s.values.length - times.length);
      // Which value belongs to which time cannot be told.
      out.cells.misread(`series ${s.key} has ${s.values.length} values for ${times.length} times`);
    }
    times.forEach((ts, i) => {
      if (!ts || i >= s.values.length) return;
      const raw = s.values[i];
      const d = readDecimal(raw);
      if (!d.ok) out.invalidValues++;
      out.cells.column(s.key, d.ok);
      out.points.push({ tokenSlug: slug, period, seriesKey: s.key, ts, value: d.ok ? d.value : null, payload: d.ok ? null : raw, ...meta, status: d.ok ? 'ok' : 'invalid' });
    });
  }
  return out;
}

export const gatewayHistoryJob = defineJob({
  name: 'gateway.history',
  route: 'gateway.history',
  source: 'gateway',
  group: 'history',
  plannedBy: 'gateway.tokens',
  // One per configured period.
  each: (t: GatewayTokenItem, s) => s.gatewayHistoryPeriods.map((period) => ({ ...t, period: period as (typeof GATEWAY_PERIODS)[number] })),
  payload: historyPayload,
  resource: (p) => `token/${p.slug}/history/${p.period}`,
  token: (p) => p.slug,
  marker: (p) => p.marker,
  rowsFromBodyAlone: true,
  one: {
    request: (p) => ({ params: { slug: p.slug }, query: { period: p.period } }),
    schema: gatewayTrend,
    read(input, f) {
      const p = input.payload;
      // Nothing to write, and nothing to delete: earlier points stay.
      if (f.data === null) return { status: 'not_materialized', rowCount: 0, details: { period: p.period, materialized: false } };
      const read = readTrend(input, p.slug, p.period, f.data, f.meta.asOf);
      const details = {
        period: p.period,
        materialized: true,
        series: read.series,
        lastTs: read.lastTs?.toISOString() ?? null,
        badTimes: read.badTimes,
        misaligned: read.misaligned,
        invalidValues: read.invalidValues,
      };
      return { status: 'ok', details, cells: read.cells, writes: [into(gatewayTrendPoints, read.points, wholeSet(gatewayTrendPoints, { tokenSlug: p.slug, period: p.period }, true, read.points))] };
    },
  },
});
