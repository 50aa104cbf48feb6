// The SQL that keeps and reads the versions of every versioned table, generated from the
// declarations (src/schema/warehouse/history.ts) into a migration by `npm run db:generate`
// (scripts/sql-migration.ts); a test checks that the migrations hold what this generates.
//
// - Known time: `sync.server_clock()`, the warehouse server's clock; `sync.begin_write()`
//   takes it once per writing transaction, and `sync.known_at()` returns it (the default of
//   every `fetched_at`). No writer's own clock enters a version.
// - `sync.keep_version()`: a trigger before UPDATE or DELETE on `T` copies the old row into
//   `T_history`, its version held from its `fetched_at` until this write's known time, with
//   the body that replaced or removed it; the new row starts where the old one ends.
// - An exclusion constraint per `T_history`: versions of one key never overlap.
// - `T_as_of(at)`: `T`'s rows as tesync knew them at `at`, current and earlier versions together.
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { VERSIONED } from '../schema/warehouse/history.ts';
import { quoteIdentifier as quote } from './quote.ts';
import { rulesOf } from '../schema/warehouse/table-rules.ts';

/** The setting a writing transaction sets to its known time (`sync.begin_write`). */
export const KNOWN_AT_SETTING = 'tesync.known_at';
/** The archived body a writing transaction read: what closes the versions it removes. */
export const CLOSING_BODY_SETTING = 'tesync.raw_response_id';
/**
 * An offset added to the server's clock, for a whole database (or one connection): a test's
 * way to run syncs days apart. It moves every writer alike, as a server whose clock is off
 * would; no process's own clock enters known time.
 */
export const CLOCK_OFFSET_SETTING = 'tesync.clock_offset';
/**
 * The lock every writing transaction holds shared from the moment it takes its known time,
 * and a daily fill takes alone for an instant: once the fill has it, every write known
 * before that instant has committed (src/store/daily-archive.ts).
 */
export const WRITE_BARRIER_LOCK = 7_281_190_437_355_202n;

// Known time is the warehouse server's clock, the one clock every writer shares. A writing
// transaction takes it once (`sync.begin_write`), so that all it writes is known from one
// instant; outside such a transaction a write is known from the transaction's start.
const CLOCK = `CREATE OR REPLACE FUNCTION "sync"."server_clock"() RETURNS timestamptz LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT clock_timestamp() + coalesce(nullif(current_setting('${CLOCK_OFFSET_SETTING}', true), '')::interval, interval '0')
$$;`;

const KNOWN_AT = `CREATE OR REPLACE FUNCTION "sync"."known_at"() RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT coalesce(nullif(current_setting('${KNOWN_AT_SETTING}', true), '')::timestamptz,
                  now() + coalesce(nullif(current_setting('${CLOCK_OFFSET_SETTING}', true), '')::interval, interval '0'))
$$;`;

const BEGIN_WRITE = `CREATE OR REPLACE FUNCTION "sync"."begin_write"(closing_body bigint) RETURNS timestamptz LANGUAGE plpgsql AS $$
DECLARE
  known timestamptz;
BEGIN
  PERFORM pg_advisory_xact_lock_shared(${WRITE_BARRIER_LOCK});
  known := "sync"."server_clock"();
  PERFORM set_config('${KNOWN_AT_SETTING}', known::text, true);
  PERFORM set_config('${CLOSING_BODY_SETTING}', coalesce(closing_body::text, ''), true);
  RETURN known;
END
$$;`;

// Before the row changes: the old row becomes a version held from its `fetched_at` until
// now (known time), and the new row starts where it ends. A version's end is never before its
// start: a row stamped later than this write's clock (another writer whose transaction began
// after this one's and committed first) is followed one microsecond after it, so no version
// is lost and none overlaps (the exclusion constraint on `T_history` enforces it). A row
// this very transaction wrote held at no instant anyone could see: it makes no version.
const KEEP_VERSION = `CREATE OR REPLACE FUNCTION "sync"."keep_version"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  known timestamptz := "sync"."known_at"();
  ends timestamptz;
  closing bigint;
BEGIN
  IF OLD.fetched_at = known THEN
    IF TG_OP = 'UPDATE' THEN
      NEW.fetched_at := known;
      RETURN NEW;
    END IF;
    RETURN OLD;
  END IF;
  ends := greatest(known, OLD.fetched_at + interval '1 microsecond');
  IF TG_OP = 'UPDATE' THEN
    NEW.fetched_at := ends;
    closing := NEW.raw_response_id;
  ELSE
    closing := nullif(current_setting('${CLOSING_BODY_SETTING}', true), '')::bigint;
  END IF;
  EXECUTE format('INSERT INTO %I.%I SELECT * FROM jsonb_populate_record(NULL::%I.%I, $1)', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_history', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_history')
    USING to_jsonb(OLD) || jsonb_build_object('known_from', OLD.fetched_at, 'known_to', ends, 'closing_raw_response_id', closing);
  IF TG_OP = 'UPDATE' THEN
    RETURN NEW;
  END IF;
  RETURN OLD;
END
$$;`;

// The database, not the writers, keeps versions of one key apart. Versions written before
// known time came from the server may overlap (writers whose clocks differed): each is cut
// where the next begins, and the last where the current row begins (a version cut to
// nothing stays, held at no instant), before the constraint is added, once.
//
// The constraint's GiST index is also what `T_as_of(at)` reads the versions through, so the
// period comes first: "the versions holding at `at`" is then one narrow search, for the whole
// table or, with the key's columns narrowing the same search, for one key. With the key first
// (an earlier release's order, rebuilt here), a whole table at an instant scanned most of it.
const NO_OVERLAP = `CREATE OR REPLACE FUNCTION "sync"."enforce_versions"(schema_name text, table_name text, key_columns text[]) RETURNS void LANGUAGE plpgsql AS $enforce$
DECLARE
  h text := format('%I.%I', schema_name, table_name || '_history');
  t text := format('%I.%I', schema_name, table_name);
  keys text := (SELECT string_agg(quote_ident(k), ', ') FROM unnest(key_columns) k);
  same text := (SELECT string_agg(format('h.%1$I = t.%1$I', k), ' AND ') FROM unnest(key_columns) k);
  name text := table_name || '_history_no_overlap';
  existing text := (SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = name AND connamespace = schema_name::regnamespace);
BEGIN
  IF existing LIKE 'EXCLUDE USING gist (tstzrange(known_from, known_to) WITH &&%' THEN
    RETURN;
  END IF;
  IF existing IS NULL THEN
    EXECUTE format($q$WITH o AS (SELECT ctid AS id, lead(known_from) OVER (PARTITION BY %s ORDER BY known_from, known_to) AS next_from FROM %s)
      UPDATE %s h SET known_to = greatest(h.known_from, o.next_from) FROM o WHERE h.ctid = o.id AND o.next_from < h.known_to$q$, keys, h, h);
    EXECUTE format($q$UPDATE %s h SET known_to = greatest(h.known_from, t.fetched_at) FROM %s t WHERE %s AND t.fetched_at < h.known_to$q$, h, t, same);
  ELSE
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', h, name);
  END IF;
  EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I EXCLUDE USING gist (tstzrange(known_from, known_to) WITH &&, %s)',
    h, name, (SELECT string_agg(format('%I WITH =', k), ', ') FROM unnest(key_columns) k));
END
$enforce$;`;

// `T_as_of` is made by the database from `T`'s columns in their stored order (a column added
// later stands last there, wherever it is declared), so the function always returns `T`'s row.
//
// Its shape is for the planner. A SQL function of one SELECT, stable, is inlined into the query
// that calls it (unless its argument holds a sub-select: docs/warehouse.md says which form to
// use). Inside, `T` and `T_history` are a UNION ALL whose two branches have no WHERE of their
// own: only then does Postgres flatten it into one relation of two members, push the caller's
// conditions into each, read them in parallel, and merge two ordered index scans (a token's
// latest point is one backward step). The instant is tested outside: on `T`, `fetched_at <= at`
// (its period is unbounded, a constant); on `T_history`, the period `@>`, which its GiST
// index (`T_history_no_overlap`) answers.
const CREATE_AS_OF = `CREATE OR REPLACE FUNCTION "sync"."create_as_of"(schema_name text, table_name text) RETURNS void LANGUAGE plpgsql AS $create$
DECLARE
  cols text;
BEGIN
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols FROM pg_attribute
   WHERE attrelid = format('%I.%I', schema_name, table_name)::regclass AND attnum > 0 AND NOT attisdropped;
  EXECUTE format($f$CREATE OR REPLACE FUNCTION %I.%I("at" timestamptz) RETURNS SETOF %I.%I LANGUAGE sql STABLE PARALLEL SAFE AS $b$
  SELECT %s FROM (
    SELECT %s, "fetched_at" AS "version_from", tstzrange(NULL, NULL) AS "version_period" FROM %I.%I
    UNION ALL
    SELECT %s, '-infinity'::timestamptz, tstzrange("known_from", "known_to") FROM %I.%I
  ) "versions" WHERE "version_from" <= "at" AND "version_period" @> "at"
$b$$f$, schema_name, table_name || '_as_of', schema_name, table_name, cols, cols, schema_name, table_name, cols, schema_name, table_name || '_history');
END
$create$;`;

// Versions link to the bodies they were read from and closed by: the archive is never pruned.
const KEEP_BODIES = [
  `CREATE OR REPLACE FUNCTION "sync"."keep_bodies"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'sync.raw_responses keeps every body a version was read from or closed by: it is never pruned'
    USING ERRCODE = 'restrict_violation', HINT = 'sync.requests is the table retention prunes (TE_REQUESTS_RETENTION_DAYS).';
END
$$;`,
  'DROP TRIGGER IF EXISTS "keep_bodies" ON "sync"."raw_responses";',
  'CREATE TRIGGER "keep_bodies" BEFORE DELETE OR TRUNCATE ON "sync"."raw_responses" FOR EACH STATEMENT EXECUTE FUNCTION "sync"."keep_bodies"();',
];

/**
 * The statements, in order: the extension and functions, then per table its trigger, its
 * exclusion constraint and its as-of function. Every statement can run again (a later
 * migration repeats them after a change).
 */
export function historyStatements(tables: readonly PgTable[] = VERSIONED): string[] {
  // btree_gist: the key's equality beside the range's overlap in one GiST constraint.
  const out = ['CREATE EXTENSION IF NOT EXISTS btree_gist;', CLOCK, KNOWN_AT, BEGIN_WRITE, KEEP_VERSION, NO_OVERLAP, CREATE_AS_OF, ...KEEP_BODIES];
  for (const table of tables) {
    const { schema, name } = getTableConfig(table);
    const s = schema ?? 'public';
    const t = `${quote(s)}.${quote(name)}`;
    const key = rulesOf(table).key.map((c) => `'${c.name}'`).join(', ');
    out.push(`DROP TRIGGER IF EXISTS "keep_version" ON ${t};`);
    out.push(`CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();`);
    out.push(`SELECT "sync"."enforce_versions"('${s}', '${name}', ARRAY[${key}]);`);
    out.push(`SELECT "sync"."create_as_of"('${s}', '${name}');`);
  }
  return out;
}

/** The statements as one migration file's text (drizzle's statement breakpoints between them). */
export function historyMigration(): string {
  return `${historyStatements().join('\n--> statement-breakpoint\n')}\n`;
}
