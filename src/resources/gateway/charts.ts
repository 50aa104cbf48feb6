// /v1/tokens/{slug}/charts: the chart catalog (key, title, supported timeframes, data link),
// then one data job per chart and timeframe to mirror: each configured timeframe the chart
// lists, and for one it does not list the longest it lists instead (timeframes.ts; recorded in
// the chart's `timeframe_substitutions`, never a chart left without points). The catalog
// items carry no version; the catalog's meta.asOf (with any freshness or row count an item
// has) is the marker: a chart timeframe whose marker is as at its last fetch is not fetched again.
// The catalog itself is skipped while the token catalog's marker is unchanged (see tokens.ts);
// it then plans the charts it listed last time, each with the marker it had then.
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { readList } from '../../schema/upstream/envelope.ts';
import { versionMarker } from '../../schema/upstream/values.ts';
import { gatewayChartPoints, gatewayCharts, gatewayChartSeries, gatewayChartTimeframes } from '../../schema/warehouse/gateway.ts';
import { GATEWAY_TIMEFRAMES } from '../../lib/variables.ts';
import { readCatalogItem, type CatalogEntry } from '../../engine/kit/lists.ts';
import { readEntries, catalogSummary } from '../../engine/kit/item-refusals.ts';
import { rowMeta, type Stamp } from '../../engine/kit/rows.ts';
import { keptMembers, wholeSet } from '../../engine/kit/stated-set.ts';
import { documentedPath } from '../../engine/kit/paths.ts';
import { defineJob, into, type ReadInput, type TableWrite, type Unchanged } from '../../engine/kit/types.ts';
import { storedGatewayCharts, type StoredGatewayChart } from './knows/charts.ts';
import { slugPayload } from './page.ts';
import type { GatewayTokenItem } from './tokens.ts';
import { mirroredTimeframes, chooseTimeframes, type TimeframeChoice } from './timeframes.ts';

declare module '../../engine/kit/declaration.ts' {
  interface SyncSettings {
    /** The timeframes of a gateway chart asked for, as configured (TE_GATEWAY_CHART_TIMEFRAMES; chooseTimeframes). */
    gatewayChartTimeframes: readonly string[];
  }
}

export interface GatewayCatalogEntry extends CatalogEntry {
  /** As the catalog lists them; null when it does not say. */
  timeframes: string[] | null;
}

/** Pure: a catalog item in any accepted form, with the timeframes it supports. */
export function readGatewayCatalogItem(raw: unknown): GatewayCatalogEntry | null {
  const e = readCatalogItem(raw);
  if (!e) return null;
  const r = raw as Record<string, unknown>;
  const listed = r.timeframes ?? r.supportedTimeframes;
  const timeframes = Array.isArray(listed) ? listed.filter((t): t is string => typeof t === 'string') : null;
  return { ...e, timeframes };
}

/** Pure: what to fetch of a chart for the configured timeframes (timeframes.ts). */
export function chartTimeframes(entry: Pick<GatewayCatalogEntry, 'timeframes'>, configured: readonly string[]): TimeframeChoice {
  return chooseTimeframes(entry.timeframes, configured, GATEWAY_TIMEFRAMES);
}

/** Pure: the timeframes fetched of a chart (configured ones it lists, and substitutes). */
export function timeframesToFetch(entry: Pick<GatewayCatalogEntry, 'timeframes'>, configured: readonly string[]): string[] {
  return mirroredTimeframes(chartTimeframes(entry, configured));
}

/** Pure: the chart row's record of what is mirrored (gateway.charts columns). */
export function mirrorColumns(entry: Pick<GatewayCatalogEntry, 'timeframes'>, configured: readonly string[]) {
  const choice = chartTimeframes(entry, configured);
  return { mirroredTimeframes: mirroredTimeframes(choice), timeframeSubstitutions: choice.substitutions };
}

/** Pure: what says a chart changed: the catalog's asOf with the item's own markers. */
export function chartMarker(catalogAsOf: Date | null, entry: Pick<CatalogEntry, 'marker'>): string | null {
  return versionMarker({ asOf: catalogAsOf?.toISOString() ?? null, item: entry.marker });
}

/** A listed chart, as its timeframe jobs fan out over it (gateway.chart). */
export interface GatewayChartItem {
  slug: string;
  entry: GatewayCatalogEntry;
  /** The catalog's as-of, part of the chart's marker. */
  catalogAsOf: Date | null;
}

/**
 * The catalog was not fetched (its marker is unchanged), but the configured timeframes may
 * have changed since its rows were written: their record of what is mirrored follows the
 * configuration. Only rows whose record differs are written, as a write like any other (the
 * lifecycle writes it with the unchanged state): a new version from known time on, by this
 * run, still linked to the body the row was read from. Pure.
 */
export function mirrorRefresh(rows: readonly StoredGatewayChart[], configured: readonly string[], runId: string): TableWrite<any>[] {
  const changed = rows.flatMap((r) => {
    const m = mirrorColumns(r, configured);
    return isDeepStrictEqual(m, { mirroredTimeframes: r.mirroredTimeframes, timeframeSubstitutions: r.timeframeSubstitutions }) ? [] : [{ ...r, ...m, runId }];
  });
  return changed.length === 0 ? [] : [into(gatewayCharts, changed, { from: null, keep: ['rawResponseId'] })];
}

/**
 * The chart jobs of the catalog as its last fetch stored it (charts it no longer listed keep
 * their rows, from older runs): a chart whose last fetch failed still heals.
 */
function whenUnchanged<P extends { slug: string }>(input: ReadInput<P>): Unchanged {
  const rows = storedGatewayCharts.answerIn(input.known) ?? [];
  const last = rows.reduce<(typeof rows)[number] | undefined>((a, r) => (!a || r.fetchedAt > a.fetchedAt ? r : a), undefined);
  const listed = rows.filter((r) => r.runId === last?.runId);
  const items = listed.flatMap((r): GatewayChartItem[] => {
    const e = readGatewayCatalogItem(r.payload);
    return e ? [{ slug: input.payload.slug, entry: { ...e, timeframes: r.timeframes }, catalogAsOf: r.asOf }] : [];
  });
  return { items, writes: mirrorRefresh(listed, input.settings.gatewayChartTimeframes, input.runId) };
}

/**
 * A catalog read whole states the token's charts: one it no longer lists is closed, with its
 * timeframes, series and points; a timeframe a listed chart no longer lists is closed with its
 * points (a chart that does not say which it has keeps them all).
 */
function catalogWrites(
  slug: string,
  rows: (typeof gatewayCharts.$inferInsert)[],
  listed: readonly GatewayCatalogEntry[],
  whole: boolean,
  fromEach?: TableWrite['fromEach'],
): TableWrite<any>[] {
  const charts = listed.map((e) => ({ chartKey: e.key }));
  const byTimeframe = listed.filter((e) => e.timeframes !== null);
  return [
    into(gatewayCharts, rows, { ...wholeSet(gatewayCharts, { tokenSlug: slug }, whole), ...(fromEach ? { fromEach } : {}) }),
    into(gatewayChartTimeframes, [], keptMembers(gatewayChartTimeframes, { tokenSlug: slug }, whole, charts)),
    into(gatewayChartSeries, [], keptMembers(gatewayChartSeries, { tokenSlug: slug }, whole, charts)),
    into(gatewayChartPoints, [], keptMembers(gatewayChartPoints, { tokenSlug: slug }, whole, charts)),
    ...byTimeframe.flatMap((e) => {
      const timeframes = e.timeframes!.map((timeframe) => ({ timeframe }));
      return [
        into(gatewayChartTimeframes, [], keptMembers(gatewayChartTimeframes, { tokenSlug: slug, chartKey: e.key }, whole, timeframes)),
        into(gatewayChartPoints, [], keptMembers(gatewayChartPoints, { tokenSlug: slug, chartKey: e.key }, whole, timeframes)),
      ];
    }),
  ];
}

export const gatewayChartsJob = defineJob({
  name: 'gateway.charts',
  route: 'gateway.charts',
  source: 'gateway',
  group: 'charts',
  plannedBy: 'gateway.tokens',
  each: (t: GatewayTokenItem) => [t],
  payload: slugPayload,
  resource: (p) => `token/${p.slug}/charts`,
  token: (p) => p.slug,
  marker: (p) => p.marker,
  unchanged: { knows: (p) => [storedGatewayCharts.ask(p.slug)], plan: whenUnchanged },
  reader: {
    asks: (input) => [{ route: 'gateway.charts', params: { slug: input.payload.slug }, list: { listOf: (d) => readList(d) } }],
    read(input, [got]) {
      const p = input.payload;
      const f = got!.list!;
      const listed = f.items;
      // An entry refused alone (item-refusals.ts) is not written; its clean key still plans its chart.
      const { valid, validItems, invalidItems, refusedRead, refused } = readEntries<GatewayCatalogEntry>(f, readGatewayCatalogItem);
      // Its link is not followed (the documented path is asked), and its marker not trusted.
      const plannedOnly = refusedRead.map((e) => ({ ...e, link: null, marker: null }));
      const rows = valid.map((e) => ({
        tokenSlug: p.slug,
        chartKey: e.key,
        title: e.title,
        timeframes: e.timeframes,
        ...mirrorColumns(e, input.settings.gatewayChartTimeframes),
        dataPath: documentedPath('gateway.chart', { slug: p.slug, chartKey: e.key }),
        payload: e.raw,
        ...rowMeta(input, { asOf: f.meta.asOf, freshness: e.freshness }),
      }));
      // A catalog not proven whole (fetch-list.ts) closes nothing.
      const whole = listed !== undefined && invalidItems === 0 && f.incomplete === undefined;
      return {
        ...catalogSummary(f, valid.length, invalidItems, refused),
        writes: catalogWrites(p.slug, rows, valid, whole, validItems.map((raw) => f.pageOf(raw))),
        // A catalog read whole plans every chart that exists: one it leaves out is gone.
        listed: { items: [...valid, ...plannedOnly].map((entry): GatewayChartItem => ({ slug: p.slug, entry, catalogAsOf: f.meta.asOf })), ...(whole ? { wholeUnder: `token/${p.slug}/chart/` } : {}) },
      };
    },
  },
});
