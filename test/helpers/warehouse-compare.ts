// Every table of the data schemas as row counts and content digests, without the columns
// that say when, by which run or from which archived body a row was written, nor upstream's
// volatile fields (columns, and members of jsonb values): two warehouses synced from the same
// upstream data, by whatever runner and after whatever recomputations, must come out equal.
import { sql } from 'drizzle-orm';
import { VOLATILE_COLUMNS } from '../../src/schema/warehouse/columns.ts';
import type { Warehouse } from '../../src/store/connection.ts';
import { withoutVolatileSql } from '../../src/store/write/volatile-sql.ts';

const VOLATILE = new Set(['fetched_at', 'run_id', 'first_seen_at', 'last_seen_at', 'raw_response_id', ...VOLATILE_COLUMNS]);

export async function warehouseDigest(w: Warehouse, schemas: readonly string[] = ['app', 'gateway']): Promise<Record<string, { rows: number; digest: string }>> {
  const cols = await w.query<{ t: string; c: string; type: string }>(
    sql.raw(`select table_schema || '.' || table_name as t, column_name as c, data_type as type from information_schema.columns
             where table_schema in (${schemas.map((s) => `'${s}'`).join(',')}) order by table_schema, table_name, ordinal_position`),
  );
  const byTable = new Map<string, string[]>();
  for (const { t, c, type } of cols) {
    if (VOLATILE.has(c)) continue;
    (byTable.get(t) ?? byTable.set(t, []).get(t)!).push(type === 'jsonb' ? `${withoutVolatileSql(`"${c}"::text`)} as "${c}"` : `"${c}"`);
  }
  const out: Record<string, { rows: number; digest: string }> = {};
  for (const [table, list] of byTable) {
    const [r] = await w.query<{ n: string; d: string }>(
      sql.raw(`select count(*)::text as n, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as d from (select ${list.join(', ')} from ${table}) x`),
    );
    out[table] = { rows: Number(r!.n), digest: r!.d };
  }
  return out;
}
