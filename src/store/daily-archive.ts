// The daily archives, filled from the versions: for each UTC day from the last one archived
// (again, as it may have been archived before its end) through today, the rows of each token
// listed at the day's end, as known then (`T_as_of`). Days on which no sync ran are filled by
// the next run; a day's rows that were archived but are no longer what was known at its end
// (a token delisted later that day) leave. Never earlier than the first version known, so
// rows archived by an earlier release, before the versions began, stay as they are.
//
// A fill costs the days it fills, not the depth of the history: each day is read through the
// as-of functions (an index search for the versions holding at its end), and the first
// version known is looked for only when no version was known by the end of the last archived
// day (an empty archive, or one an earlier release left): otherwise that day is the start.
//
// A day is final once a fill has run after its end, because a fill first passes the write
// barrier: every writing transaction holds it (shared) from the moment it takes its known time
// until it commits, so once the fill holds it alone, every write known before that instant
// has committed and is seen, a late commit across midnight included, and every later write is
// known after it. Days are counted in `date`, never in `timestamptz`, so the session's
// TimeZone cannot drop or double one (a DST change at midnight).
import { getTableColumns, sql, type SQL } from 'drizzle-orm';
import { getTableConfig, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';
import { DAILY_ARCHIVES, type DailyArchive } from '../schema/warehouse/history.ts';
import type { Db } from './connection.ts';
import { WRITE_BARRIER_LOCK } from './history-sql.ts';
import { serverClock } from './known-time.ts';
import { rulesOf } from '../schema/warehouse/table-rules.ts';

const ident = (name: string) => sql.identifier(name);
const qualified = (table: PgTable, suffix = '') => {
  const { schema, name } = getTableConfig(table);
  return sql`${ident(schema ?? 'public')}.${ident(name + suffix)}`;
};
const list = (names: readonly string[], prefix?: string) => sql.join(names.map((n) => (prefix ? sql`${ident(prefix)}.${ident(n)}` : ident(n))), sql`, `);

/** The statement that fills one archive through the UTC day of `at`. Pure. */
export function fillStatement(a: DailyArchive, at: Date): SQL {
  const columns = Object.values(getTableColumns(a.archive) as Record<string, PgColumn>).map((c) => c.name);
  const key = rulesOf(a.archive).key.map((c) => c.name);
  const [tokenKey] = rulesOf(a.source).key.map((c) => c.name);
  const [universeKey] = rulesOf(a.universe).key.map((c) => c.name);
  if (!tokenKey || !universeKey) throw new Error(`${getTableConfig(a.archive).name}: source and universe need a key`);
  const dayColumn = columns.find((c) => !(c in sourceColumnsByName(a.source)));
  if (!dayColumn) throw new Error(`${getTableConfig(a.archive).name}: no day column beside the source's columns`);
  const copied = columns.filter((c) => c !== dayColumn);
  const values = copied.filter((c) => !key.includes(c));
  const iso = at.toISOString();
  return sql`
with archived as (
  select max(${ident(dayColumn)}) as day, ((max(${ident(dayColumn)}) + 1)::timestamp at time zone 'UTC') as ends from ${qualified(a.archive)}
),
bounds as (
  select case
    when archived.day is not null and (exists (select 1 from ${qualified(a.source)} where "fetched_at" < archived.ends)
      or exists (select 1 from ${qualified(a.source, '_history')} where tstzrange("known_from", "known_to") && tstzrange(null, archived.ends)))
    then archived.day
    else (select (min(k) at time zone 'UTC')::date from (
      select min("fetched_at") as k from ${qualified(a.source)}
      union all select min("known_from") from ${qualified(a.source, '_history')}) m)
  end as first, (${iso}::timestamptz at time zone 'UTC')::date as last
  from archived
),
days as (
  select d.day, least(${iso}::timestamptz, ((d.day + 1)::timestamp at time zone 'UTC') - interval '1 microsecond') as at
  from bounds, generate_series(0, bounds.last - bounds.first) i, lateral (select bounds.first + i as day) d
),
filled as (
  select days.day as ${ident(dayColumn)}, ${list(copied, 's')}
  from days cross join lateral (
    select s.* from ${qualified(a.source, '_as_of')}(days.at) s
    join ${qualified(a.universe, '_as_of')}(days.at) u on u.${ident(universeKey)} = s.${ident(tokenKey)} and u."delisted_at" is null
  ) s
),
removed as (
  delete from ${qualified(a.archive)} a using bounds
  where a.${ident(dayColumn)} between bounds.first and bounds.last
    and not exists (select 1 from filled f where ${sql.join(key.map((k) => sql`f.${ident(k)} = a.${ident(k)}`), sql` and `)})
)
insert into ${qualified(a.archive)} as t (${list(columns)})
select ${list(columns)} from filled
on conflict (${list(key)}) do update set ${sql.join(values.map((c) => sql`${ident(c)} = excluded.${ident(c)}`), sql`, `)}
where (${asText(values, 't')}) is distinct from (${asText(values, 'excluded')})`;
}

/** As text, as the write path compares (a decimal's written form counts: src/store/upsert.ts). */
const asText = (names: readonly string[], alias: string) => sql.join(names.map((n) => sql`${ident(alias)}.${ident(n)}::text`), sql`, `);

function sourceColumnsByName(table: PgTable): Record<string, true> {
  return Object.fromEntries(Object.values(getTableColumns(table) as Record<string, PgColumn>).map((c) => [c.name, true]));
}

/**
 * Fills every daily archive through the server's present day, after the write barrier
 * (above). Returns the instant the archives hold.
 */
export async function fillDailyArchives(db: Db): Promise<Date> {
  const at = await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${WRITE_BARRIER_LOCK.toString()}::bigint)`);
    return serverClock(tx);
  });
  for (const a of DAILY_ARCHIVES) {
    await db.transaction(async (tx) => {
      // The planner cannot count the days from the archive's bounds and would compile a fill
      // of one or two days as if it were large (docs/performance.md, "JIT").
      await tx.execute(sql`set local jit = off`);
      await tx.execute(fillStatement(a, at));
    });
  }
  return at;
}
