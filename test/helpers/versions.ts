// Checks of the versions every versioned table keeps (src/store/sql/history.sql), for tests
// that drive writers against one warehouse.
import { sql } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { expect } from 'vitest';
import { VERSIONED } from '../../src/schema/warehouse/history.ts';
import { rulesOf } from '../../src/schema/warehouse/table-rules.ts';
import type { Warehouse } from '../../src/store/connection.ts';

/** No two versions of one key overlap, none overlaps its key's current row, and none is empty: in every versioned table. */
export async function expectNoOverlap(w: Warehouse): Promise<void> {
  for (const table of VERSIONED) {
    const { schema, name } = getTableConfig(table);
    const on = rulesOf(table).key.map((c) => `a."${c.name}" = b."${c.name}"`).join(' and ');
    const [r] = await w.query<{ n: string }>(
      sql.raw(`select (select count(*) from ${schema}.${name}_history a join ${schema}.${name}_history b on ${on} and a.ctid <> b.ctid
                 where a.known_from < b.known_to and b.known_from < a.known_to)
               + (select count(*) from ${schema}.${name}_history a join ${schema}.${name} b on ${on} where a.known_to > b.fetched_at)
               + (select count(*) from ${schema}.${name}_history where known_to <= known_from) as n`),
    );
    expect(Number(r!.n), `${schema}.${name}: overlapping or empty versions`).toBe(0);
  }
}
