// Absence is not emptiness (contract: "Forms the seeds leave open"). A stored row leaves its
// table (deleted, or delisted) only when a response stated the whole set it belongs to: the
// array present, the list complete, the history fetched whole. A response that leaves a
// field, array or section out says nothing about what it would have held, and closes nothing.
//
// The sets are declared here, one entry per table and set whose rows can leave: the columns that name
// one set (`scope`: a token's sections are the set of one token), and in words which response
// states it (for docs and reviewers). A handler says only whether its response stated the set
// (`wholeSet`); the lifecycle removes what the set no longer carries, after the mass-removal
// check (removal-check.ts).
import { sql, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import * as app from '../schema/warehouse/app.ts';
import * as gw from '../schema/warehouse/gateway.ts';
import { SET_FROM, SET_KEEPS, SET_KEPT_WHILE } from '../store/write/set-removal.ts';

export interface SetDeclaration {
  table: PgTable;
  /** The columns (by property) whose values name one set; empty: the whole table is one set. */
  scope: readonly string[];
  /** Which response states the whole set. */
  statedBy: string;
  /**
   * A window that slides (a trend period, a chart timeframe): the response states the set from
   * its earliest value of this column on, and nothing about what came before.
   */
  from?: string;
  /**
   * A set stated by a response that lists its members by some key columns only (a catalog
   * lists charts, not their points): written without rows, the members kept named by these
   * columns (`keptMembers`).
   */
  keptBy?: readonly string[];
  /** A stored member also stays while this holds of it (SQL on the table's qualified name). */
  keptWhile?: SQL;
}

export const SETS: readonly SetDeclaration[] = [
  { table: app.metrics, scope: [], statedBy: 'a /api/v1/metrics catalog whose every item is readable' },
  { table: app.tokens, scope: [], statedBy: 'a complete /api/v1/tokens list (read to its last page, every item readable, every count and total matching: fetch-list.ts)' },
  { table: app.screenerRows, scope: [], statedBy: 'a /api/v1/screener list whose every row names its token' },
  { table: app.tokenStreams, scope: ['tokenSlug'], statedBy: "a snapshot that carries its `streams` array" },
  { table: app.metricValues, scope: ['surface'], statedBy: 'a /api/v1/screener list whose every row names its token (surface `screener`): a row states its cells, the list its tokens' },
  { table: app.metricValues, scope: ['tokenSlug', 'surface'], statedBy: 'a snapshot that carries all of `row`, `combinedRevenue`, `fundamentals` and `streams` (surface `snapshot`)' },
  { table: app.metricHistory, scope: ['tokenSlug'], statedBy: 'a history fetched whole with `stream=all` (no `from=`)' },
  { table: app.metricHistory, scope: ['tokenSlug', 'stream'], statedBy: 'one stream fetched whole (no `from=`), when `stream=all` is fetched stream by stream' },
  { table: app.charts, scope: ['tokenSlug'], statedBy: 'a chart catalog that is a list, every item readable' },
  { table: app.chartPoints, scope: ['tokenSlug', 'chartKey'], statedBy: "a chart's data (its `rows`)" },
  { table: app.valueDrivers, scope: ['tokenSlug'], statedBy: 'a research bundle that carries `valueDrivers`, `valueDriverEdges` and `tokenFunctions`' },
  { table: app.valueDriverEdges, scope: ['tokenSlug'], statedBy: 'a research bundle that carries all three arrays' },
  { table: app.tokenFunctions, scope: ['tokenSlug'], statedBy: 'a research bundle that carries all three arrays' },
  { table: gw.gatewayTokens, scope: [], statedBy: 'a complete /v1/tokens list (read to its last page, every item readable, every count and total matching)' },
  { table: gw.gatewayScreenerRows, scope: [], statedBy: 'a /v1/screener list whose every row names a known token' },
  { table: gw.gatewayScreenerWindows, scope: [], statedBy: 'a /v1/screener list whose every row names a known token and carries `windows`' },
  { table: gw.gatewayScreenerStreams, scope: [], statedBy: 'a /v1/screener list whose every row names a known token and carries a `streams` array of keyed items' },
  { table: gw.gatewayScreenerUnmatched, scope: [], statedBy: 'a /v1/screener list (its unmatched rows are all it has)' },
  { table: gw.gatewayTokenSections, scope: ['tokenSlug'], statedBy: 'a token page that carries `sections` (a page without it is refused)' },
  { table: gw.gatewayTrendPoints, scope: ['tokenSlug', 'period'], from: 'ts', statedBy: 'a materialized history of the period (`data` not null), from its first time on' },
  { table: gw.gatewayCharts, scope: ['tokenSlug'], statedBy: 'a chart catalog that is a list, every item readable' },
  { table: gw.gatewayChartPoints, scope: ['tokenSlug', 'chartKey', 'timeframe'], from: 'ts', statedBy: "a chart timeframe's `data` array, from its first time on" },
  {
    table: gw.gatewayChartSeries,
    scope: ['tokenSlug', 'chartKey'],
    statedBy: "a chart timeframe that carries `config.series` (with its rows' keys); a series it does not carry stays while another timeframe of the chart has points of it",
    keptWhile: sql.raw(
      'exists (select 1 from gateway.chart_points p where p.token_slug = gateway.chart_series.token_slug and p.chart_key = gateway.chart_series.chart_key and p.series_key = gateway.chart_series.series_key)',
    ),
  },
  // A chart gone from its catalog takes its timeframes, series and points with it; a timeframe
  // gone from a chart's list of timeframes takes its points.
  { table: app.chartPoints, scope: ['tokenSlug'], keptBy: ['chartKey'], statedBy: 'a chart catalog that is a list, every item readable (the points of a chart it no longer lists)' },
  { table: gw.gatewayChartTimeframes, scope: ['tokenSlug'], keptBy: ['chartKey'], statedBy: 'a chart catalog that is a list, every item readable (the timeframes of a chart it no longer lists)' },
  { table: gw.gatewayChartTimeframes, scope: ['tokenSlug', 'chartKey'], keptBy: ['timeframe'], statedBy: 'such a catalog whose entry lists the chart\'s `timeframes` (a timeframe it no longer lists)' },
  { table: gw.gatewayChartSeries, scope: ['tokenSlug'], keptBy: ['chartKey'], statedBy: 'a chart catalog that is a list, every item readable (the series of a chart it no longer lists)' },
  { table: gw.gatewayChartPoints, scope: ['tokenSlug'], keptBy: ['chartKey'], statedBy: 'a chart catalog that is a list, every item readable (the points of a chart it no longer lists)' },
  { table: gw.gatewayChartPoints, scope: ['tokenSlug', 'chartKey'], keptBy: ['timeframe'], statedBy: 'such a catalog whose entry lists the chart\'s `timeframes` (the points of a timeframe it no longer lists)' },
];

/** Pure: the declaration a write's scope matches, by table and scope columns (`kept`: one kept by some key columns). */
export function declarationOf(table: PgTable, scope: Record<string, unknown>, kept = false): SetDeclaration | undefined {
  const columns = Object.keys(scope).sort().join(',');
  return SETS.find((d) => d.table === table && [...d.scope].sort().join(',') === columns && (d.keptBy !== undefined) === kept);
}

/**
 * The write option that makes `rows` the whole set named by `scope`, when the response
 * stated it; otherwise none (absent is not empty: nothing closes).
 */
export function wholeSet<T extends PgTable>(table: T, scope: Partial<T['$inferInsert']>, stated: boolean, rows: readonly T['$inferInsert'][] = []): { replace?: Partial<T['$inferInsert']> } {
  const d = declarationOf(table, scope as Record<string, unknown>);
  if (!d) throw new Error(`no set is declared for this table by ${Object.keys(scope).join(', ') || '(the whole table)'}`);
  if (!stated) return {};
  if (d.keptWhile !== undefined) return { replace: { ...scope, [SET_KEPT_WHILE]: d.keptWhile } };
  if (d.from === undefined) return { replace: scope };
  // A window without rows says nowhere it starts: it states nothing.
  const first = earliest(rows.map((r) => (r as Record<string, unknown>)[d.from!]));
  return first === undefined ? {} : { replace: { ...scope, [SET_FROM]: { [d.from]: first } } };
}

/**
 * The write option that keeps, of the set named by `scope`, only the members `kept` names (by
 * the declaration's `keptBy` columns), when the response stated the set; the write has no rows.
 */
export function keptMembers<T extends PgTable>(table: T, scope: Partial<T['$inferInsert']>, stated: boolean, kept: readonly Partial<T['$inferInsert']>[]): { replace?: Partial<T['$inferInsert']> } {
  const d = declarationOf(table, scope as Record<string, unknown>, true);
  if (!d?.keptBy) throw new Error(`no set kept by some of its key columns is declared for this table by ${Object.keys(scope).join(', ') || '(the whole table)'}`);
  const columns = [...d.keptBy].sort().join(',');
  if (kept.some((k) => Object.keys(k).sort().join(',') !== columns)) throw new Error(`the members kept must be named by ${d.keptBy.join(', ')}`);
  return stated ? { replace: { ...scope, [SET_KEEPS]: kept } } : {};
}

function earliest(values: readonly unknown[]): unknown {
  let min: unknown;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    if (min === undefined || (v instanceof Date && min instanceof Date ? v.getTime() < min.getTime() : String(v) < String(min))) min = v;
  }
  return min;
}
