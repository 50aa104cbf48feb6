// A warehouse as deep as years of daily syncs leave it, made from a shallow one by SQL: the
// as-of leg of the bench (as-of-leg.ts) reads it. From a warehouse synced once (a few
// tokens, the simulator's years of daily history), in place:
//
// - every token's rows are copied until there are `copies` times as many tokens (`-c<k>`
//   appended to the slug);
// - points (every table with a data time `ts`) become known the day after their day, as
//   daily syncs would have received them, the newest yesterday; one in fifty, a week old by
//   then, was revised a week after it arrived (its first value a version);
// - the daily-changing tables (lists, screeners, snapshots) get a version for each of `days`
//   days before their current row, the other versioned tables one for each 30 days.
//
// Known times are placed on the warehouse server's clock, as the trigger would have placed
// them; nothing is written through the trigger (the versions are made, not replaced).
import type { Sql } from 'postgres';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { VERSIONED } from '../../src/schema/warehouse/history.ts';
import { quoteIdentifier as q, quoteLiteral as lit } from '../../src/store/quote.ts';

/** The tables that change every day: a version per day (the rest: one per 30 days). */
export const DAILY_CHANGING = ['app.tokens', 'app.screener_rows', 'app.token_snapshots', 'gateway.tokens', 'gateway.screener_rows', 'gateway.screener_windows'];

export interface DepthOptions {
  /** Tokens become this many times as many (1: as synced). */
  copies: number;
  /** Days of daily versions (and the span of the other tables' monthly ones). */
  days: number;
  log: (line: string) => void;
}

export interface DepthFigures {
  tokens: { app: number; gateway: number };
  /** Rows per versioned table: current and history. */
  rows: Record<string, { current: number; history: number }>;
  buildMs: number;
}


async function columnsOf(db: Sql, schema: string, table: string): Promise<{ name: string; type: string }[]> {
  const rows = await db<{ name: string; type: string }[]>`
    select attname as name, format_type(atttypid, atttypmod) as type from pg_attribute
    where attrelid = ${`${q(schema)}.${q(table)}`}::regclass and attnum > 0 and not attisdropped order by attnum`;
  return [...rows];
}

/** Deepens the warehouse at `db` in place (see the top of the file). */
export async function deepen(db: Sql, o: DepthOptions): Promise<DepthFigures> {
  const started = Date.now();
  const tables = VERSIONED.map((t) => getTableConfig(t)).map((c) => ({ schema: c.schema ?? 'public', name: c.name, full: `${c.schema}.${c.name}` }));
  // The newest point becomes known today at 00:00 (the server's day), the rest a day after theirs.
  const [shift] = await db<{ shift: string }[]>`
    select (date_trunc('day', sync.server_clock()) - max(ts))::text as shift from (
      select max(ts) as ts from app.metric_history union all select max(ts) from gateway.trend_points) m`;
  const pointsShift = shift?.shift ?? '0';

  for (const t of tables) {
    for (const name of [t.name, `${t.name}_history`]) {
      const cols = await columnsOf(db, t.schema, name);
      const names = cols.map((c) => c.name);
      const tokenColumn = names.includes('token_slug') ? 'token_slug' : t.name === 'tokens' ? 'slug' : null;
      const hasTs = names.includes('ts') && name === t.name;
      if (!tokenColumn && !hasTs) continue;
      const renamed = (c: string) => `case when k = 0 then ${q(c)} else ${q(c)} || '-c' || k end`;
      const select = cols.map((c) => {
        if (c.name === tokenColumn || (t.full === 'gateway.screener_insights' && c.name === 'id')) return renamed(c.name);
        if (hasTs && c.name === 'fetched_at') return `case when ts is null then fetched_at else least(fetched_at, ts + ${lit(pointsShift)}::interval + interval '1 day' + case when ${revised(renamed('token_slug'))} then interval '7 days' else interval '0' end) end`;
        return q(c.name);
      });
      const target = `${q(t.schema)}.${q(name)}`;
      await db.begin(async (tx) => {
        await tx.unsafe(`create temp table depth_source on commit drop as select * from ${target}`);
        await tx.unsafe(`truncate ${target}`);
        await tx.unsafe(`insert into ${target} select ${select.join(', ')} from depth_source cross join generate_series(0, ${tokenColumn ? o.copies - 1 : 0}) k`);
      });
    }
    o.log(`depth: ${t.full} copied ${o.copies}x`);
  }

  for (const t of tables) {
    const cols = await columnsOf(db, t.schema, t.name);
    const names = cols.map((c) => c.name);
    const history = `${q(t.schema)}.${q(`${t.name}_history`)}`;
    const current = `${q(t.schema)}.${q(t.name)}`;
    // A version's values differ from the next one's a little, as a day's move would.
    const varied = (d: string) =>
      cols.map((c) => (c.type === 'numeric' ? `${q(c.name)} * (1 + (${d} % 89) / 10000.0)` : c.name === 'fetched_at' ? 'known_from' : q(c.name)));
    const versionColumns = [...names, 'known_from', 'known_to', 'closing_raw_response_id'].map(q).join(', ');
    if (names.includes('ts')) {
      // The revised points: their first value, held for the week before the revision.
      await db.unsafe(`insert into ${history} (${versionColumns})
        select ${varied('1').join(', ')}, known_from, known_to, raw_response_id from (
          select *, fetched_at - interval '7 days' as known_from, fetched_at as known_to from ${current}
          where ts is not null and fetched_at < sync.server_clock() - interval '1 day' and ${revised('token_slug')}) v`);
    } else {
      const daily = DAILY_CHANGING.includes(t.full);
      const step = daily ? "interval '1 day'" : "interval '30 days'";
      const count = daily ? o.days : Math.ceil(o.days / 30);
      await db.unsafe(`insert into ${history} (${versionColumns})
        select ${varied('d').join(', ')}, known_from, known_to, raw_response_id from (
          select t.*, d, t.fetched_at - d * ${step} as known_from, t.fetched_at - (d - 1) * ${step} as known_to
          from ${current} t cross join generate_series(1, ${count}) d) v`);
    }
    o.log(`depth: ${t.full} versions made`);
  }
  for (const a of ['app.screener_daily', 'app.token_snapshots_daily', 'gateway.screener_daily']) await db.unsafe(`truncate ${a}`);
  // As autovacuum leaves a live warehouse: pages all-visible and hints set, so that the first
  // reads do not pay for the bulk load (a T_as_of read right after it took twice as long).
  await db.unsafe('vacuum (analyze)');

  const rows: DepthFigures['rows'] = {};
  for (const t of tables) {
    const [r] = await db.unsafe<{ current: string; history: string }[]>(
      `select (select count(*) from ${q(t.schema)}.${q(t.name)})::text as current, (select count(*) from ${q(t.schema)}.${q(`${t.name}_history`)})::text as history`,
    );
    rows[t.full] = { current: Number(r!.current), history: Number(r!.history) };
  }
  return { tokens: { app: rows['app.tokens']!.current, gateway: rows['gateway.tokens']!.current }, rows, buildMs: Date.now() - started };
}

/** One point in fifty, chosen by its key, was revised a week after it arrived. */
function revised(token: string): string {
  return `abs(hashtext(${token} || coalesce(ts::text, ''))) % 50 = 0`;
}
