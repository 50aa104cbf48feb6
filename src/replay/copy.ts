// What a replay takes over as it is, before it writes anything: the archive of bodies (their ids
// kept, so that every row it writes links to the same body as the row it repeats), the runs
// (the run ids rows carry, and the ends the daily archives are filled at), and the upstream the
// warehouse is bound to. Streamed from one database to the other by COPY, in Postgres' binary
// form: both are tesync warehouses of this release (migrated by it), so their columns agree.
import { pipeline } from 'node:stream/promises';
import { sql } from 'drizzle-orm';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { rawResponses, runs, upstreamBindingLog, upstreamBindings, writes } from '../schema/warehouse/sync.ts';
import { quoteIdentifier as quote } from '../store/quote.ts';
import type { Warehouse } from '../store/connection.ts';

/** Copied in this order; a table with an identity column has its sequence moved past the copied ids. */
const COPIED: readonly PgTable[] = [runs, rawResponses, upstreamBindings, upstreamBindingLog];

const qualified = (t: PgTable) => {
  const c = getTableConfig(t);
  return `${quote(c.schema ?? 'public')}.${quote(c.name)}`;
};

/**
 * Whether `target` holds anything a replay would write or take over: a replay writes into a
 * warehouse of its own, never over one.
 */
export async function holdsData(target: Warehouse): Promise<string | null> {
  for (const t of [...COPIED, writes]) {
    const [row] = await target.query<{ any: boolean }>(sql.raw(`select exists (select from ${qualified(t)}) as any`));
    if (row?.any) return qualified(t);
  }
  const [rows] = await target.query<{ t: string | null }>(
    sql.raw(`select (select string_agg(s, ', ') from (select format('%I.%I', schemaname, relname) as s from pg_stat_user_tables
                      where schemaname in ('app', 'gateway') and n_live_tup > 0 order by 1 limit 1) x) as t`),
  );
  return rows?.t ?? null;
}

/** COPYs the archive, the runs and the bindings from `source` into `target`; returns the bodies copied. */
export async function copyArchive(source: Warehouse, target: Warehouse): Promise<number> {
  let bodies = 0;
  for (const t of COPIED) {
    const columns = Object.values(getTableConfig(t).columns).map((c) => quote(c.name)).join(', ');
    // A connection each, ended after: no other query follows a COPY on one (src/export/pg-read.ts).
    const from = source.session({ name: 'tesync replay (copy out)' });
    const into = target.session({ name: 'tesync replay (copy in)' });
    try {
      const out = await from.unsafe(`copy ${qualified(t)} (${columns}) to stdout (format binary)`).readable();
      const input = await into.unsafe(`copy ${qualified(t)} (${columns}) from stdin (format binary)`).writable();
      await pipeline(out, input);
    } finally {
      await from.end({ timeout: 5 });
      await into.end({ timeout: 5 });
    }
    const identity = Object.values(getTableConfig(t).columns).find((c) => c.generatedIdentity !== undefined);
    if (identity) {
      // COPY keeps the ids it is given: the next body kept (a refusal replayed) must not take one.
      await target.query(sql.raw(`select setval(pg_get_serial_sequence('${qualified(t).replaceAll("'", "''")}', '${identity.name}'), coalesce((select max(${quote(identity.name)}) from ${qualified(t)}), 0) + 1, false)`));
    }
    if (t === rawResponses) bodies = (await target.query<{ n: number }>(sql`select count(*)::int as n from ${rawResponses}`))[0]?.n ?? 0;
  }
  return bodies;
}
