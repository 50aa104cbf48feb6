// What a backtest's universe held at every instant: the live tokens `S.tokens_as_of(t)`
// returns each time something could have changed it, for tests that a list not whole never
// removes a token, at any instant.
import { sql, type SQL } from 'drizzle-orm';
import type { TestWarehouse } from './services.ts';

const q = <T>(tw: TestWarehouse, query: SQL) => tw.warehouse.query<T>(query);

/**
 * The live tokens `S.tokens_as_of(t)` holds at every instant from `since` on: each time a
 * version of a token began or ended, each row's fetch, each of `marks`, and now.
 */
export async function liveAtEveryInstant(tw: TestWarehouse, schema: 'app' | 'gateway', since: string, marks: string[]): Promise<number[]> {
  const instants = await q<{ t: string }>(
    tw,
    sql.raw(`select distinct t::text as t from (
      select known_from as t from ${schema}.tokens_history union all select known_to from ${schema}.tokens_history
      union all select fetched_at from ${schema}.tokens union all select "sync"."server_clock"()
      ${marks.map((m) => `union all select '${m}'::timestamptz`).join(' ')}
    ) x where isfinite(t) and t >= '${since}' order by 1`),
  );
  const out: number[] = [];
  for (const { t } of instants) out.push((await q<{ n: number }>(tw, sql.raw(`select count(*)::int as n from ${schema}.tokens_as_of('${t}') where delisted_at is null`)))[0]!.n);
  return out;
}
