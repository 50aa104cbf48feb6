// Point in time: every table `T` of `app` and `gateway` (the daily archives aside) keeps its
// earlier versions in `T_history`: `T`'s columns and the period tesync knew each version, from
// `known_from` (when tesync received the response that carried it) until `known_to` (when a
// response replaced or removed it): tesync's clock, never upstream's asOf.
//
// The history tables, the trigger that fills them and `T_as_of(at)` that reads them back are
// made by the database from `T` itself (src/store/sql/history.sql, run for each table listed
// here), so a table declared in app.ts or gateway.ts is versioned with no other edit.
import { getTableColumns, is } from 'drizzle-orm';
import { getTableConfig, PgTable, type PgColumn } from 'drizzle-orm/pg-core';
import { BOOKKEEPING_COLUMNS, DATA_TIME_COLUMN } from './columns.ts';
import * as app from './app.ts';
import * as gateway from './gateway.ts';

/**
 * The daily archives (contract: time and history): for every UTC day from the first sync on, a
 * row per token its `universe` listed at the day's end, holding `source`'s row as known then.
 * Filled from the versions when a run finishes (src/store/write/daily-archive.ts), so a day
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

/** Every table the declaration modules export, the daily archives aside. Pure. */
export function versionedTables(...modules: readonly Record<string, unknown>[]): PgTable[] {
  const tables = new Set(modules.flatMap((m) => Object.values(m).filter((v): v is PgTable => is(v, PgTable))));
  // In name order: module namespaces list their exports in an order that depends on the
  // loader (sorted under Node, as declared under vitest), and history.sql's fingerprint must not.
  return [...tables].filter((t) => !DAILY_ARCHIVES.some((a) => a.archive === t)).sort((a, b) => qualifiedName(a).localeCompare(qualifiedName(b)));
}

function qualifiedName(t: PgTable): string {
  const c = getTableConfig(t);
  return `${c.schema ?? 'public'}.${c.name}`;
}

/** The daily archives' `schema.table` names (what `tesync export --tables` takes). */
export const DAILY_ARCHIVE_NAMES: readonly string[] = DAILY_ARCHIVES.map((a) => qualifiedName(a.archive));

/** The tables whose versions are kept: every table of `app` and `gateway` but the daily archives. */
export const VERSIONED: readonly PgTable[] = versionedTables(app, gateway);

/** The column of `table` holding its rows' data time (DATA_TIME_COLUMN), when it is a series of points. Pure. */
export function dataTimeColumn(table: PgTable): string | undefined {
  return Object.values(getTableColumns(table) as Record<string, PgColumn>).some((c) => c.name === DATA_TIME_COLUMN) ? DATA_TIME_COLUMN : undefined;
}

/**
 * What src/store/sql/changes.sql makes each versioned table's `T_changes` from, beside the
 * table itself: its data-time column ('' when none) and the bookkeeping columns, comma-separated,
 * which say when and from which body a row was written, not what it holds (left out of `changed`).
 */
export function changeRules(table: PgTable): { dataTime: string; bookkeeping: string } {
  return { dataTime: dataTimeColumn(table) ?? '', bookkeeping: BOOKKEEPING_COLUMNS.join(',') };
}
