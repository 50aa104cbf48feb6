// /v1/tokens/{slug}/charts/{chartKey}?timeframe=T: one chart timeframe. Row schemas are
// token-specific: the series are those `config.series` declares plus any other row key that
// holds decimals, never fixed columns. Rows go into chart_points (long format), kept apart
// from the history's trend_points.
//
// T is the timeframe actually fetched, and the points are stored under it. It may stand in
// for configured timeframes the chart does not list (`requested`, see timeframes.ts): the
// resource state's details then say so (`mirrored`, `requested`, `substituted`, `substitutedFor`).
import { readDecimal } from '../../schema/upstream/values.ts';
import { z } from 'zod';
import { GATEWAY_TIMEFRAMES } from '../../lib/variables.ts';
import { gatewayChartItem, gatewayChartSeries as seriesSchema, type GatewayChartItemIn } from '../../schema/upstream/gateway.ts';
import { isRecord, readTime } from '../../schema/upstream/values.ts';
import { gatewayChartPoints, gatewayChartSeries, gatewayChartTimeframes } from '../../schema/warehouse/gateway.ts';
import { rowMeta, type Stamp } from '../../engine/kit/rows.ts';
import { CellTally } from '../../engine/kit/cell-tally.ts';
import { wholeSet } from '../../engine/kit/stated-set.ts';
import { refusalDetails, refusalNotes, splitItems } from '../../engine/kit/item-refusals.ts';
import { defineJob, into, type ItemsLocator } from '../../engine/kit/types.ts';
import { chartMarker, chartTimeframes, type GatewayChartItem } from './charts.ts';

export const chartPayload = z.object({
  slug: z.string().min(1),
  chartKey: z.string().min(1),
  timeframe: z.enum(GATEWAY_TIMEFRAMES),
  /** The configured timeframes this fetch stands for (absent: `timeframe` itself). */
  requested: z.array(z.string()).nullish(),
  link: z.string().nullish(),
  marker: z.string().nullish(),
});

export interface TimeframeRecord {
  mirrored: string;
  requested: string[];
  substituted: boolean;
  substitutedFor?: string[];
}

/** Pure: what a fetch of a chart timeframe stands for, for its resource state. */
export function timeframeRecord(p: { timeframe: string; requested?: readonly string[] | null }): TimeframeRecord {
  const requested = p.requested?.length ? [...p.requested] : [p.timeframe];
  const substitutedFor = requested.filter((t) => t !== p.timeframe);
  return { mirrored: p.timeframe, requested, substituted: substitutedFor.length > 0, ...(substitutedFor.length ? { substitutedFor } : {}) };
}

/** Pure: whether the last fetch stood for the same configured timeframes (a state from before they were recorded stood for its own). */
export function sameRequest(details: unknown, record: TimeframeRecord): boolean {
  const d = typeof details === 'object' && details !== null ? (details as Record<string, unknown>) : {};
  const before = Array.isArray(d.requested) ? d.requested : [record.mirrored];
  return before.length === record.requested.length && record.requested.every((t) => before.includes(t));
}

// The row's time key: `timestamp` as documented, else a usual name.
const TIME_KEYS = ['timestamp', 'date', 'time', 'ts', 't', 'day', 'x'];

export interface SeriesKeys {
  /** Declared by config.series, in order, then found only in rows. */
  keys: string[];
  declared: Map<string, z.infer<typeof seriesSchema>>;
  /** Row keys that never hold a decimal: not series (they stay in the raw response). */
  ignored: string[];
}

export function timeKeyOf(row: Record<string, unknown>): string | undefined {
  return TIME_KEYS.find((k) => k in row);
}

/** Pure: the chart's series keys, from config.series and the rows' own keys. */
export function seriesKeys(config: GatewayChartItemIn['config'], rows: readonly unknown[]): SeriesKeys {
  const declared = new Map<string, z.infer<typeof seriesSchema>>();
  for (const s of config?.series ?? []) {
    const p = seriesSchema.safeParse(s);
    if (p.success && !declared.has(p.data.key)) declared.set(p.data.key, p.data);
  }
  const extra = new Map<string, boolean>();
  for (const row of rows) {
    if (!isRecord(row)) continue;
    const tk = timeKeyOf(row);
    for (const [k, v] of Object.entries(row)) {
      if (k === tk || declared.has(k)) continue;
      const d = readDecimal(v);
      extra.set(k, (extra.get(k) ?? false) || (d.ok && d.value !== null));
    }
  }
  const found = [...extra].filter(([, numeric]) => numeric).map(([k]) => k);
  return { keys: [...declared.keys(), ...found], declared, ignored: [...extra].filter(([, numeric]) => !numeric).map(([k]) => k) };
}

/**
 * Pure: the chart timeframe's rows for the warehouse; `rows`: those of `data.data` to read
 * (default all; not the ones refused alone), while `rowCount` stays the rows received.
 */
export function readChart(input: Stamp, p: { slug: string; chartKey: string; timeframe: string }, data: GatewayChartItemIn, raw: Record<string, unknown>, asOf: Date | null, rows: readonly unknown[] = data.data) {
  const series = seriesKeys(data.config, rows);
  const meta = rowMeta(input, { asOf });
  const points: (typeof gatewayChartPoints.$inferInsert)[] = [];
  const cells = new CellTally();
  let badRows = 0;
  let invalidValues = 0;
  for (const row of rows) {
    const tk = isRecord(row) ? timeKeyOf(row) : undefined;
    const ts = isRecord(row) && tk ? readTime(row[tk]) : null;
    if (!isRecord(row) || !ts) {
      badRows++;
      cells.badTime();
      continue;
    }
    for (const key of series.keys) {
      // A series the row does not mention has no point there (absent is not null).
      if (!(key in row)) continue;
      const d = readDecimal(row[key]);
      if (!d.ok) invalidValues++;
      cells.column(key, d.ok);
      points.push({ tokenSlug: p.slug, chartKey: p.chartKey, timeframe: p.timeframe, ts, seriesKey: key, value: d.ok ? d.value : null, payload: d.ok ? null : row[key], ...meta, status: d.ok ? 'ok' : 'invalid' });
    }
  }
  const seriesRows = series.keys.map((key): typeof gatewayChartSeries.$inferInsert => {
    const s = series.declared.get(key);
    return { tokenSlug: p.slug, chartKey: p.chartKey, seriesKey: key, label: s?.label ?? null, render: s?.render ?? null, declared: s !== undefined, payload: s ?? null, ...meta };
  });
  // The item as sent, without its rows (they are the points).
  const item = Object.fromEntries(Object.entries(raw).filter(([k]) => k !== 'data'));
  const timeframe: typeof gatewayChartTimeframes.$inferInsert = {
    tokenSlug: p.slug,
    chartKey: p.chartKey,
    timeframe: p.timeframe,
    type: data.type ?? null,
    currentTimeframe: data.currentTimeframe ?? null,
    title: data.config?.title ?? null,
    dataFrom: readTime(data.dataFrom),
    dataThrough: readTime(data.dataThrough),
    rowCount: data.data.length,
    payload: item,
    ...meta,
  };
  return { points, seriesRows, timeframe, cells, details: { series: series.keys, ignoredKeys: series.ignored, badRows, invalidValues } };
}

/** Pure: a chart timeframe's rows in its `data`, each (its time and its points) refusable alone (item-refusals.ts). */
export const chartRows: ItemsLocator = (data) => (isRecord(data) && Array.isArray(data.data) ? data.data : undefined);

export const gatewayChartJob = defineJob({
  name: 'gateway.chart',
  route: 'gateway.chart',
  source: 'gateway',
  group: 'chart',
  // One per timeframe to mirror: each configured one the chart lists, or its substitute.
  plannedBy: 'gateway.charts',
  each: (c: GatewayChartItem, s) =>
    chartTimeframes(c.entry, s.gatewayChartTimeframes).fetches.map((f) => ({
      slug: c.slug,
      chartKey: c.entry.key,
      timeframe: f.timeframe as (typeof GATEWAY_TIMEFRAMES)[number],
      requested: f.requested,
      link: c.entry.link,
      marker: chartMarker(c.catalogAsOf, c.entry),
    })),
  payload: chartPayload,
  resource: (p) => `token/${p.slug}/chart/${p.chartKey}/${p.timeframe}`,
  token: (p) => p.slug,
  marker: (p) => p.marker,
  // Unchanged only while it stands for the same configured timeframes (else its details
  // would say the wrong thing about what it replaces).
  sameAsBefore: (state, p) => sameRequest(state.details, timeframeRecord(p)),
  one: {
    request: (p) => ({ params: { slug: p.slug, chartKey: p.chartKey }, query: { timeframe: p.timeframe }, ...(p.link ? { link: p.link } : {}) }),
    schema: gatewayChartItem,
    items: chartRows,
    read(input, f) {
      const p = input.payload;
      const record = timeframeRecord(p);
      const notes = record.substituted
        ? [{ level: 'info' as const, msg: 'chart does not list the configured timeframe; mirrored the longest it lists instead', fields: { chartKey: p.chartKey, requested: record.substitutedFor, mirrored: p.timeframe } }]
        : [];
      // A row holding a string Postgres cannot store is refused alone, its points with it (a
      // row that is not an object stays a bad row of its own: no sibling shape is asked for).
      const split = splitItems({ items: f.data.data, refused: f.refused }, { shapes: false });
      const whole = split.refused.length === 0;
      const r = readChart(input, p, f.data, isRecord(f.body.data) ? f.body.data : {}, f.meta.asOf, split.understood);
      return {
        status: whole ? 'ok' : 'partial',
        details: { ...record, ...r.details, ...refusalDetails(split.refused) },
        cells: r.cells,
        notes: [...notes, ...refusalNotes(split.refused)],
        writes: [
          into(gatewayChartTimeframes, [r.timeframe]),
          // The timeframe's `data` is all its points from its first on: one it no longer has is closed; not while a row is refused.
          into(gatewayChartPoints, r.points, wholeSet(gatewayChartPoints, { tokenSlug: p.slug, chartKey: p.chartKey, timeframe: p.timeframe }, whole, r.points)),
          // After the points: a series neither declared nor in any timeframe's points any more is closed.
          into(gatewayChartSeries, r.seriesRows, wholeSet(gatewayChartSeries, { tokenSlug: p.slug, chartKey: p.chartKey }, whole && Array.isArray(f.data.config?.series))),
        ],
      };
    },
  },
});
