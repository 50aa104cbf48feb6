// Point in time: every table `T` of `app` and `gateway` (the daily archives aside) has
// `T_history`, its earlier versions. Each is declared here from `T`'s own declaration, so a
// column added to `T` reaches its history through the same generated migration. A version
// held from `known_from` (when tesync received the response that carried it) until
// `known_to` (when a response replaced or removed it): tesync's clock, never upstream's asOf.
//
// The rows get there by a trigger on `T` and are read back by `T_as_of(at)`; both are SQL
// generated from these declarations (src/store/history-sql.ts).
import { getTableColumns } from 'drizzle-orm';
import { bigint, customType, getTableConfig, index, type PgColumn, type PgColumnBuilderBase, type PgSchema, type PgTable } from 'drizzle-orm/pg-core';
import * as app from './app.ts';
import { keyProps } from './table-rules.ts';
import { tstz } from './columns.ts';
import * as gateway from './gateway.ts';

/** A column of the same SQL type as one of `T`'s (values are copied, never read by tesync). */
const sameType = (type: string) => customType<{ data: unknown; driverData: unknown }>({ dataType: () => type });

/** The history table of `table`: its columns (nullable as they are, no defaults), the version's times, an index by key and time. */
function historyOf(table: PgTable) {
  const config = getTableConfig(table);
  const schema: PgSchema = config.schema === 'app' ? app.appSchema : gateway.gatewaySchema;
  const source = Object.entries(getTableColumns(table) as Record<string, PgColumn>);
  const key = keyProps(table);
  const columns: Record<string, PgColumnBuilderBase> = {};
  for (const [prop, column] of source) {
    const c = sameType(column.getSQLType())(column.name);
    columns[prop] = column.notNull ? c.notNull() : c;
  }
  const name = `${config.name}_history`;
  return schema.table(
    name,
    {
      ...columns,
      /** When tesync received the response that carried this version. */
      knownFrom: tstz('known_from').notNull(),
      /** When a response replaced or removed it. */
      knownTo: tstz('known_to').notNull(),
      /** The archived body that replaced or removed it (sync.raw_responses.id). */
      closingRawResponseId: bigint('closing_raw_response_id', { mode: 'number' }),
    },
    (t) => {
      const cols = t as unknown as Record<string, PgColumn>;
      const byName = new Map(Object.values(cols).map((c) => [c.name, c]));
      const [first, ...rest] = [...key.map((p) => cols[p]!), cols.knownFrom!];
      // `T`'s other indexes serve the same query shapes through `T_as_of`, which reads both.
      const same = config.indexes.map((i) => {
        const [head, ...tail] = i.config.columns.map((c) => byName.get((c as PgColumn).name)!);
        return index(`${name}${i.config.name!.slice(config.name.length)}`).on(head!, ...tail);
      });
      return [index(`${name}_key_idx`).on(first!, ...rest), ...same];
    },
  );
}

/** The tables whose versions are kept: every table of `app` and `gateway` but the daily archives. */
export const VERSIONED: readonly PgTable[] = [
  app.metrics,
  app.tokens,
  app.screenerRows,
  app.tokenSnapshots,
  app.metricValues,
  app.tokenStreams,
  app.metricHistory,
  app.charts,
  app.chartPoints,
  app.researchBundles,
  app.valueDrivers,
  app.valueDriverEdges,
  app.tokenFunctions,
  gateway.gatewayTokens,
  gateway.gatewayScreenerRows,
  gateway.gatewayScreenerWindows,
  gateway.gatewayScreenerStreams,
  gateway.gatewayScreenerUnmatched,
  gateway.gatewayScreenerInsights,
  gateway.gatewayTokenPages,
  gateway.gatewayTokenSections,
  gateway.gatewayTrendPoints,
  gateway.gatewayCharts,
  gateway.gatewayChartTimeframes,
  gateway.gatewayChartSeries,
  gateway.gatewayChartPoints,
];

export const metricsHistory = historyOf(app.metrics);
export const tokensHistory = historyOf(app.tokens);
export const screenerRowsHistory = historyOf(app.screenerRows);
export const tokenSnapshotsHistory = historyOf(app.tokenSnapshots);
export const metricValuesHistory = historyOf(app.metricValues);
export const tokenStreamsHistory = historyOf(app.tokenStreams);
export const metricHistoryHistory = historyOf(app.metricHistory);
export const chartsHistory = historyOf(app.charts);
export const chartPointsHistory = historyOf(app.chartPoints);
export const researchBundlesHistory = historyOf(app.researchBundles);
export const valueDriversHistory = historyOf(app.valueDrivers);
export const valueDriverEdgesHistory = historyOf(app.valueDriverEdges);
export const tokenFunctionsHistory = historyOf(app.tokenFunctions);
export const gatewayTokensHistory = historyOf(gateway.gatewayTokens);
export const gatewayScreenerRowsHistory = historyOf(gateway.gatewayScreenerRows);
export const gatewayScreenerWindowsHistory = historyOf(gateway.gatewayScreenerWindows);
export const gatewayScreenerStreamsHistory = historyOf(gateway.gatewayScreenerStreams);
export const gatewayScreenerUnmatchedHistory = historyOf(gateway.gatewayScreenerUnmatched);
export const gatewayScreenerInsightsHistory = historyOf(gateway.gatewayScreenerInsights);
export const gatewayTokenPagesHistory = historyOf(gateway.gatewayTokenPages);
export const gatewayTokenSectionsHistory = historyOf(gateway.gatewayTokenSections);
export const gatewayTrendPointsHistory = historyOf(gateway.gatewayTrendPoints);
export const gatewayChartsHistory = historyOf(gateway.gatewayCharts);
export const gatewayChartTimeframesHistory = historyOf(gateway.gatewayChartTimeframes);
export const gatewayChartSeriesHistory = historyOf(gateway.gatewayChartSeries);
export const gatewayChartPointsHistory = historyOf(gateway.gatewayChartPoints);

/**
 * The daily archives (contract: time and history): for every UTC day from the first sync on, a
 * row per token its `universe` listed at the day's end, holding `source`'s row as known then.
 * Filled from the versions when a run finishes (src/store/daily-archive.ts), so a day
 * without a sync or a change has its rows too.
 */
export interface DailyArchive {
  archive: PgTable;
  source: PgTable;
  universe: PgTable;
}

export const DAILY_ARCHIVES: readonly DailyArchive[] = [
  { archive: app.screenerDaily, source: app.screenerRows, universe: app.tokens },
  { archive: app.tokenSnapshotsDaily, source: app.tokenSnapshots, universe: app.tokens },
  { archive: gateway.gatewayScreenerDaily, source: gateway.gatewayScreenerRows, universe: gateway.gatewayTokens },
];
