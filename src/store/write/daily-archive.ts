// The daily archives, filled from the versions when a run finishes: for each UTC day from the
// last one archived through today, the rows of each token listed at the day's end, as known
// then. The fill itself is SQL (`sync.fill_daily_archive`, src/store/sql/daily-archive.sql);
// this module runs it for each archive the declarations name (src/schema/warehouse/history.ts).
//
// A day is final once a fill has run after its end, because a fill first passes the write
// barrier: every writing transaction holds it (shared) from the moment it takes its known time
// until it commits, so once the fill holds it alone, every write known before that instant
// has committed and is seen, a late commit across midnight included, and every later write is
// known after it.
import { sql } from 'drizzle-orm';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { DAILY_ARCHIVES } from '../../schema/warehouse/history.ts';
import { quoteIdentifier as quote } from '../quote.ts';
import { rowsOf, type Db } from '../connection.ts';

const regclass = (t: PgTable) => {
  const { schema, name } = getTableConfig(t);
  return `${quote(schema ?? 'public')}.${quote(name)}`;
};

/**
 * Fills every daily archive through the server's present day, after the write barrier
 * (above). Returns the instant the archives hold. `through`: that instant instead (as the
 * server wrote it), for a replay (src/replay/), which fills them at each run's end as the run
 * did, with no other writer to wait for.
 */
export async function fillDailyArchives(db: Db, through?: string): Promise<Date> {
  const at =
    through ??
    (await db.transaction(async (tx) => {
      const [row] = rowsOf<{ at: string }>(await tx.execute(sql`select "sync"."pass_write_barrier"()::text as at`));
      return row!.at;
    }));
  for (const a of DAILY_ARCHIVES) {
    await db.transaction(async (tx) => {
      // The planner cannot count the days from the archive's bounds and would compile a fill
      // of one or two days as if it were large (docs/performance.md, "JIT").
      await tx.execute(sql`set local jit = off`);
      await tx.execute(sql`select "sync"."fill_daily_archive"(${regclass(a.archive)}::regclass, ${regclass(a.source)}::regclass, ${regclass(a.universe)}::regclass, ${at}::text::timestamptz)`);
    });
  }
  return new Date(at);
}
