// The SQL that keeps and reads the versions of every versioned table, generated from the
// declarations (schema/warehouse/history.ts) into a migration by `npm run db:generate`
// (scripts/sql-migration.ts); a test checks that the migrations hold what this generates.
//
// - `sync.keep_version()`: a trigger after UPDATE or DELETE on `T` copies the old row into
//   `T_history`, its version held from its `fetched_at` (when tesync received it; a write that
//   changes nothing leaves the row, so that is the first response that carried it) until the
//   new row's `fetched_at`, or for a removed row the transaction's `tesync.known_at`.
// - `T_as_of(at)`: `T`'s rows as tesync knew them at `at`, current and earlier versions together.
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { VERSIONED } from '../../schema/warehouse/history.ts';

/** The setting a writing transaction sets to the time its rows were received (known time). */
export const KNOWN_AT_SETTING = 'tesync.known_at';

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

const KEEP_VERSION = `CREATE OR REPLACE FUNCTION "sync"."keep_version"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  known_to timestamptz;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    known_to := NEW.fetched_at;
  ELSE
    known_to := coalesce(nullif(current_setting('${KNOWN_AT_SETTING}', true), '')::timestamptz, now());
  END IF;
  -- A version that held for no time (written and replaced by one response) is no version.
  IF known_to <= OLD.fetched_at THEN
    RETURN NULL;
  END IF;
  EXECUTE format('INSERT INTO %I.%I SELECT * FROM jsonb_populate_record(NULL::%I.%I, $1)', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_history', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_history')
    USING to_jsonb(OLD) || jsonb_build_object('known_from', OLD.fetched_at, 'known_to', known_to);
  RETURN NULL;
END
$$;`;

// `T_as_of` is made by the database from `T`'s columns in their stored order (a column added
// later stands last there, wherever it is declared), so the function always returns `T`'s row.
const CREATE_AS_OF = `CREATE OR REPLACE FUNCTION "sync"."create_as_of"(schema_name text, table_name text) RETURNS void LANGUAGE plpgsql AS $create$
DECLARE
  cols text;
BEGIN
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols FROM pg_attribute
   WHERE attrelid = format('%I.%I', schema_name, table_name)::regclass AND attnum > 0 AND NOT attisdropped;
  EXECUTE format($f$CREATE OR REPLACE FUNCTION %I.%I("at" timestamptz) RETURNS SETOF %I.%I LANGUAGE sql STABLE AS $b$
  SELECT %s FROM %I.%I WHERE "fetched_at" <= "at"
  UNION ALL
  SELECT %s FROM %I.%I WHERE "known_from" <= "at" AND "at" < "known_to"
$b$$f$, schema_name, table_name || '_as_of', schema_name, table_name, cols, schema_name, table_name, cols, schema_name, table_name || '_history');
END
$create$;`;

/**
 * The statements, in order: the two functions, then per table its trigger and its as-of
 * function. Every statement can run again (a later migration repeats them after a change).
 */
export function historyStatements(tables: readonly PgTable[] = VERSIONED): string[] {
  const out = [KEEP_VERSION, CREATE_AS_OF];
  for (const table of tables) {
    const { schema, name } = getTableConfig(table);
    const s = schema ?? 'public';
    const t = `${quote(s)}.${quote(name)}`;
    out.push(`DROP TRIGGER IF EXISTS "keep_version" ON ${t};`);
    out.push(`CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();`);
    out.push(`SELECT "sync"."create_as_of"('${s}', '${name}');`);
  }
  return out;
}

/** The statements as one migration file's text (drizzle's statement breakpoints between them). */
export function historyMigration(): string {
  return `${historyStatements().join('\n--> statement-breakpoint\n')}\n`;
}
