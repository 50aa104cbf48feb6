// The warehouse database's defaults for every session that reads it (a BI tool, a notebook,
// psql), kept at every migrate: `jit = off`. The warehouse's reads are index-driven (a key's
// latest version is one step along an index), but over years of versions Postgres estimates
// them large, and a server built with JIT compiles a query it believes large before running
// it: the docs' backtest at 500 tokens spent 280 ms of 358 compiling (docs/performance.md,
// "JIT"). A session may still `set jit = on`.
//
// Kept at every migrate, not as a migration: a database's settings are not copied by
// `create database ... template` nor by a dump without `--create`, while its tables are. Only
// the database's owner (or a superuser) may set them; for another role nothing changes, and
// docs/warehouse.md says what to run.
import type postgres from 'postgres';
import { quoteIdentifier } from '../quote.ts';

export const SESSION_DEFAULTS: Readonly<Record<string, string>> = { jit: 'off' };

/** Sets what the database does not hold yet; returns what it could not (not its owner). */
export async function keepSessionDefaults(sql: postgres.Sql | postgres.ReservedSql): Promise<string[]> {
  const [row] = await sql<{ db: string; config: string[] | null }[]>`
    select current_database() as db,
           (select setconfig from pg_db_role_setting s join pg_database d on d.oid = s.setdatabase
             where d.datname = current_database() and s.setrole = 0) as config`;
  const held = new Set(row!.config ?? []);
  const refused: string[] = [];
  for (const [name, value] of Object.entries(SESSION_DEFAULTS)) {
    if (held.has(`${name}=${value}`)) continue;
    try {
      await sql.unsafe(`alter database ${quoteIdentifier(row!.db)} set ${name} = ${value}`);
    } catch (err) {
      if ((err as { code?: string }).code !== '42501') throw err;
      refused.push(`${name} = ${value}`);
    }
  }
  return refused;
}
