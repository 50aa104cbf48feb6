// Sets that lose members, and answers that leave parts out (`SimLosses` in types.ts).
//
// `removed` changes the truth: a view over the dataset whose sets each lose one member (a day
// of every app history, a point of every chart, a time of every trend, a section of every
// page, a row of each screener, the last entry of the metric catalog, a chart of every catalog of two or more, a timeframe of every
// gateway chart, a series of every gateway chart of two or more). Full answers no longer carry them; `sim.data` says so.
//
// `omitted` changes only answers: the dataset is as before, but a page leaves out `sections`,
// a bundle its three graph arrays, and a token list comes cut short without a count (once per
// list, as a list cut on the way would: the next answer is whole again).
import { addDays } from './calendar.ts';
import { DatasetView } from './data.ts';
import type { AppChartCatalogEntry, AppChartData, AppHistory, AppMetricEntry, AppScreenerRow, GatewayChartCatalogEntry, GatewayChartItem, GatewayPageShell, GatewayScreenerRow, GatewayTrend, Period, Timeframe } from './dataset-types.ts';
import type { DataRouteKind } from './forms.ts';
import type { SimLosses, SimOmission } from './types.ts';

export const NO_LOSSES: SimLosses = { removed: false, omitted: [] };

export const SIM_OMISSIONS: readonly SimOmission[] = ['sections', 'bundleArrays', 'tokenListCut'];

/** The section every page loses. */
export const REMOVED_SECTION = 'charts';

/** How many items a cut token list keeps. */
export const CUT_LIST_LENGTH = 2;

/** The day every app history loses: the second day (the first stays, so dates do not move). */
export function removedHistoryDate(view: { firstDate: string }): string {
  return addDays(view.firstDate, 1);
}

/** Which row of each chart (app rows, gateway data) and time of each trend is removed: the second. */
export const REMOVED_POINT_INDEX = 1;

/** The timeframe every gateway chart catalog entry stops listing, where it lists another. */
export const REMOVED_TIMEFRAME: Timeframe = '90d';

const without = <T>(list: readonly T[], i: number): T[] => list.filter((_, j) => j !== i);

/** The dataset with one member of each set removed. */
export class RemovedView extends DatasetView {
  override appHistory(slug: string): readonly AppHistory[] | null {
    const docs = super.appHistory(slug);
    const gone = removedHistoryDate(this);
    return docs ? docs.map((d) => ({ ...d, rows: d.rows.filter((r) => r.date !== gone) })) : null;
  }

  override appChartData(slug: string, chartKey: string): AppChartData | null {
    const d = super.appChartData(slug, chartKey);
    return d ? { ...d, rows: without(d.rows, REMOVED_POINT_INDEX) } : null;
  }

  /** A catalog of two charts or more loses its last. */
  override appCharts(slug: string): readonly AppChartCatalogEntry[] | null {
    const c = super.appCharts(slug);
    return c && c.length >= 2 ? c.slice(0, -1) : c;
  }

  /** As the app's, and every entry stops listing REMOVED_TIMEFRAME where it lists another. */
  override gatewayCharts(slug: string): readonly GatewayChartCatalogEntry[] | null {
    const c = super.gatewayCharts(slug);
    if (!c) return null;
    const kept = c.length >= 2 ? c.slice(0, -1) : c;
    return kept.map((e) => (e.timeframes.length >= 2 ? { ...e, timeframes: e.timeframes.filter((t) => t !== REMOVED_TIMEFRAME) } : e));
  }

  /** The metric catalog loses its last entry. */
  override appMetrics(): readonly AppMetricEntry[] {
    return super.appMetrics().slice(0, -1);
  }

  override appScreenerRows(): readonly AppScreenerRow[] {
    return super.appScreenerRows().slice(0, -1);
  }

  override gatewayScreenerRows(): readonly GatewayScreenerRow[] {
    return super.gatewayScreenerRows().slice(0, -1);
  }

  override gatewayPage(slug: string): GatewayPageShell | null {
    const p = super.gatewayPage(slug);
    if (!p) return null;
    const sections = Object.fromEntries(Object.entries(p.sections).filter(([k]) => k !== REMOVED_SECTION));
    return { ...p, sections: sections as GatewayPageShell['sections'] };
  }

  override gatewayTrend(slug: string, period: Period): GatewayTrend | null {
    const t = super.gatewayTrend(slug, period);
    if (!t) return null;
    return { times: without(t.times, REMOVED_POINT_INDEX), series: t.series.map((s) => ({ ...s, values: without(s.values, REMOVED_POINT_INDEX) })) };
  }

  /** Its second row, and its last series where it has two or more (from its config and every row). */
  override gatewayChartData(slug: string, chartKey: string, timeframe: Timeframe): GatewayChartItem | null {
    const c = super.gatewayChartData(slug, chartKey, timeframe);
    if (!c) return null;
    const gone = c.config.series.length >= 2 ? c.config.series.at(-1)!.key : undefined;
    const data = without(c.data, REMOVED_POINT_INDEX).map((row) => (gone ? (Object.fromEntries(Object.entries(row).filter(([k]) => k !== gone)) as typeof row) : row));
    return { ...c, config: { ...c.config, series: c.config.series.filter((s) => s.key !== gone) }, data };
  }
}

/** Answers that leave parts out; `served` remembers the lists already cut (one cut per list). */
export function omitParts(
  omitted: readonly SimOmission[],
  kind: DataRouteKind | null,
  path: string,
  answer: { data: unknown; meta: Record<string, unknown> },
  served: Set<string>,
): { data: unknown; meta: Record<string, unknown> } {
  const { data, meta } = answer;
  const record = data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : null;
  if (kind === 'gateway.token' && record && omitted.includes('sections')) {
    const { sections: _s, ...rest } = record;
    return { data: rest, meta };
  }
  if (kind === 'app.bundle' && record && omitted.includes('bundleArrays')) {
    const { valueDrivers: _d, valueDriverEdges: _e, tokenFunctions: _f, ...rest } = record;
    return { data: rest, meta };
  }
  if ((kind === 'app.tokens' || kind === 'gateway.tokens') && Array.isArray(data) && omitted.includes('tokenListCut') && !served.has(path)) {
    served.add(path);
    const { count: _c, ...rest } = meta;
    return { data: data.slice(0, CUT_LIST_LENGTH), meta: rest };
  }
  return answer;
}
