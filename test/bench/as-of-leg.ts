// The as-of leg of `npm run bench`: a warehouse as deep as years of daily syncs leave it
// (depth.ts, from a shallow one the orchestrator synced), and on it the reads of
// as-of-reads.ts: every versioned table plain and as of three instants, the documented
// backtests at 30 daily instants, `at` passed from a subquery both ways, the daily fill after a
// 60-day gap and after an unchanged run, sync.changes over a day against an as-of read
// (changes-read.ts), and the size of the indexes the as-of reads use.
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { DAILY_ARCHIVES } from '../../src/schema/warehouse/history.ts';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { fillDailyArchives } from '../../src/store/write/daily-archive.ts';
import { openWarehouse } from '../../src/store/connection.ts';
import { quoteIdentifier as q } from '../../src/store/quote.ts';
import { deepen, type DepthFigures } from './depth.ts';
import { runExportLeg, type ExportLegResult } from './export-leg.ts';
import { docExample, withDecisions } from '../docs/doc-examples.ts';
import { instants, QUICK_RUNS, tableReads, timed, type Instant, type TableReads } from './as-of-reads.ts';
import { changesLine, changesRead, type ChangesRead } from './changes-read.ts';

export interface AsOfLegOptions {
  databaseUrl: string;
  copies: number;
  days: number;
  /** Runs per timed read (their median). */
  runs: number;
  /** Runs of a read under 5 ms (default QUICK_RUNS). */
  quickRuns?: number;
  /** The export leg, on the same warehouse once it is read. */
  exportLeg?: boolean;
  log: (line: string) => void;
}

export interface AsOfLegResult {
  depth: DepthFigures & { copies: number; days: number };
  instants: Instant[];
  tables: TableReads[];
  /** The docs' backtests with their `decisions` replaced by 30 instants. */
  backtests: { example: string; instants: 'last 30 days' | '30 over the years'; ms: number; rows: number }[];
  /** One token's series as known when the last run finished: `at` a literal, a lateral column, a sub-select in the call. */
  atFromSubquery: { literalMs: number; lateralMs: number; subSelectMs: number };
  fill: { fromEmptyMs: number; daysFromEmpty: number; gapDays: number; afterGapMs: number; unchangedMs: number };
  /** sync.changes over the last whole day of app.screener_rows against its T_as_of read (changes-read.ts). */
  changes: ChangesRead;
  /** The GiST index of each history table (period, key): what the as-of reads search, and its size. */
  indexes: { table: string; bytes: number; tableBytes: number }[];
  /** The daily archives as Parquet (export-leg.ts); null when not asked. */
  export: ExportLegResult | null;
}

const GAP_DAYS = 60;

export async function runAsOfLeg(o: AsOfLegOptions): Promise<AsOfLegResult> {
  const quickRuns = o.quickRuns ?? QUICK_RUNS;
  const db = postgres(o.databaseUrl, { max: 1, onnotice: () => {} });
  const w = await openWarehouse({ databaseUrl: o.databaseUrl, dataDir: '' });
  try {
    o.log(`as-of: deepening the warehouse (${o.copies}x the tokens, ${o.days} days of versions)`);
    const depth = await deepen(db, { copies: o.copies, days: o.days, log: o.log });
    o.log(`as-of: built in ${(depth.buildMs / 1000).toFixed(0)} s; the daily fill from an empty archive`);

    // The fill: from an empty archive (every day), then with the last 60 days gone, then again.
    let t0 = performance.now();
    await fillDailyArchives(w.db);
    const fromEmptyMs = performance.now() - t0;
    const [span] = await db<{ days: number }[]>`select count(distinct snapshot_date)::int as days from app.screener_daily`;
    for (const a of DAILY_ARCHIVES) {
      const { schema, name } = getTableConfig(a.archive);
      await db.unsafe(`delete from ${q(schema!)}.${q(name)} where snapshot_date > (select max(snapshot_date) from ${q(schema!)}.${q(name)}) - ${GAP_DAYS}`);
    }
    await db.unsafe('vacuum analyze app.screener_daily, app.token_snapshots_daily, gateway.screener_daily');
    t0 = performance.now();
    await fillDailyArchives(w.db);
    const afterGapMs = performance.now() - t0;
    const unchanged: number[] = [];
    for (let i = 0; i < 5; i++) {
      t0 = performance.now();
      await fillDailyArchives(w.db);
      unchanged.push(performance.now() - t0);
    }
    const fill = { fromEmptyMs, daysFromEmpty: span!.days, gapDays: GAP_DAYS, afterGapMs, unchangedMs: median(unchanged) };
    o.log(`as-of: fill ${fromEmptyMs.toFixed(0)} ms from empty (${span!.days} days), ${afterGapMs.toFixed(0)} ms after a ${GAP_DAYS}-day gap, ${fill.unchangedMs.toFixed(0)} ms unchanged`);

    const at = await instants(db);
    const tables = await tableReads(db, at, o.runs, o.log, quickRuns);

    const backtests: AsOfLegResult['backtests'] = [];
    // In the docs' form: the instants counted in integers, so that the planner knows how many.
    const lastDays = `select least(date_trunc('day', now(), 'UTC') + k * interval '1 day', now()) as at from generate_series(-28, 1) as k`;
    const overYears = `select min_at + (now() - min_at) * i / 30 as at from (select min(known_from) as min_at from app.screener_rows_history) m, generate_series(1, 30) i`;
    for (const example of ['backtest-no-look-ahead', 'backtest-history']) {
      for (const [label, decisions] of [['last 30 days', lastDays], ['30 over the years', overYears]] as const) {
        const text = withDecisions(docExample(example), decisions);
        const r = await timed(db, text, o.runs, false, quickRuns);
        backtests.push({ example, instants: label, ms: r.ms, rows: r.rows });
        o.log(`as-of: ${example}, ${label}: ${r.ms.toFixed(1)} ms, ${r.rows} rows`);
      }
    }

    const [token] = await db<{ slug: string }[]>`select token_slug as slug from app.metric_history where stream = 'aggregate' order by 1 limit 1`;
    const one = `m.token_slug = '${token!.slug}' and m.stream = 'aggregate' and m.metric = 'erm30d'`;
    const [last] = await db<{ at: string }[]>`select max(finished_at)::text as at from sync.runs`;
    const literalMs = (await timed(db, `select m.ts, m.value from app.metric_history_as_of('${last!.at}') m where ${one} order by m.ts`, o.runs, false, quickRuns)).ms;
    const lateralMs = (await timed(db, `select m.ts, m.value from (select max(finished_at) as at from sync.runs) k cross join lateral app.metric_history_as_of(k.at) m where ${one} order by m.ts`, o.runs, false, quickRuns)).ms;
    const subSelectMs = (await timed(db, `select m.ts, m.value from app.metric_history_as_of((select max(finished_at) from sync.runs)) m where ${one} order by m.ts`, 1, false, quickRuns)).ms;
    o.log(`as-of: one token's series at the last run's end: literal ${literalMs.toFixed(1)} ms, lateral ${lateralMs.toFixed(1)} ms, sub-select in the call ${subSelectMs.toFixed(0)} ms`);
    const changes = await changesRead(db, { runs: o.runs, quickRuns });
    o.log(changesLine(changes));

    const sizes = await w.query<{ table: string; bytes: string; table_bytes: string }>(sql`
      select n.nspname || '.' || c.relname as table, pg_relation_size(i.indexrelid)::text as bytes, pg_relation_size(c.oid)::text as table_bytes
      from pg_index i join pg_class x on x.oid = i.indexrelid join pg_class c on c.oid = i.indrelid join pg_namespace n on n.oid = c.relnamespace
      where x.relname = c.relname || '_no_overlap' order by 1`);
    const indexes = sizes.map((r) => ({ table: r.table, bytes: Number(r.bytes), tableBytes: Number(r.table_bytes) }));
    const exported = o.exportLeg === false ? null : await runExportLeg({ databaseUrl: o.databaseUrl, warehouse: w, log: o.log });
    return { depth: { ...depth, copies: o.copies, days: o.days }, instants: at, tables, backtests, atFromSubquery: { literalMs, lateralMs, subSelectMs }, fill, changes, indexes, export: exported };
  } finally {
    await w.close();
    await db.end({ timeout: 5 });
  }
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
