-- Point in time: how every versioned table `T` keeps and gives back its earlier versions.
-- A repeatable migration (src/store/schema/sql-files.ts): applied after the drizzle migrations when
-- this file or the schema changed, then `sync.keep_history(schema, table)` for every
-- versioned table (src/schema/warehouse/history.ts). Every statement can run again.
--
-- - Known time: `sync.server_clock()`, the warehouse server's clock; `sync.begin_write()`
--   takes it once per writing transaction, and `sync.known_at()` returns it (the default of
--   every `fetched_at`). No writer's own clock enters a version.
-- - `sync.keep_version()`: a trigger before UPDATE or DELETE on `T` copies the old row into
--   `T_history`, its version held from its `fetched_at` until this write's known time, with
--   the body that replaced or removed it; the new row starts where the old one ends.
-- - The newest response wins, not the last commit: a write whose known time is earlier than
--   the current row's (an older writer that committed last), or an insert of a key a newer
--   writer removed, is placed in the history where its known time puts it
--   (`sync.place_version`), and the newer row stays.
-- - An exclusion constraint per `T_history`: versions of one key never overlap.
-- - `T_as_of(at)`: `T`'s rows as tesync knew them at `at`, current and earlier versions together.
--
-- Four names live here and only here: the settings `tesync.known_at` (a writing
-- transaction's known time), `tesync.raw_response_id` (the body whose answer closes what it
-- removes), `tesync.placing` (`place_version` is removing a row it placed in the history) and
-- `tesync.clock_offset` (an interval added to the server's clock, for a whole
-- database or one connection: a test's way to run syncs days apart; it moves every writer
-- alike, as a server whose clock is off would), and the write barrier's lock number.

-- btree_gist: the key's equality beside the range's overlap in one GiST constraint.
CREATE EXTENSION IF NOT EXISTS btree_gist;

-- Known time is the warehouse server's clock, the one clock every writer shares. A writing
-- transaction takes it once (`sync.begin_write`), so that all it writes is known from one
-- instant; outside such a transaction a write is known from the transaction's start.
CREATE OR REPLACE FUNCTION "sync"."server_clock"() RETURNS timestamptz LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT clock_timestamp() + coalesce(nullif(current_setting('tesync.clock_offset', true), '')::interval, interval '0')
$$;

CREATE OR REPLACE FUNCTION "sync"."known_at"() RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT coalesce(nullif(current_setting('tesync.known_at', true), '')::timestamptz,
                  now() + coalesce(nullif(current_setting('tesync.clock_offset', true), '')::interval, interval '0'))
$$;

-- The body whose answer closes what the next statements of this transaction remove.
CREATE OR REPLACE FUNCTION "sync"."set_closing_body"(closing_body bigint) RETURNS void LANGUAGE sql AS $$
  SELECT set_config('tesync.raw_response_id', coalesce(closing_body::text, ''), true);
$$;

CREATE OR REPLACE FUNCTION "sync"."closing_body"() RETURNS bigint LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT nullif(current_setting('tesync.raw_response_id', true), '')::bigint
$$;

-- The write barrier: every writing transaction holds it shared from the moment it takes its
-- known time; a daily fill takes it alone for an instant (`sync.pass_write_barrier`), after
-- which every write known before that instant has committed (src/store/write/daily-archive.ts).
--
-- `resource` (`<source>/<resource>`): the writes of one resource, one after another. Its lock
-- is taken before the clock, so that of two writers of one resource the one that takes its
-- known time later commits later: the newer of two responses of a resource always commits
-- last, and one that confirmed the rows unchanged (which rewrites none) is never overtaken by
-- an older one still in its transaction.
--
-- `at`: the known time a replayed write had (the write record's, `tesync replay`), not the clock's.
DROP FUNCTION IF EXISTS "sync"."begin_write"(bigint);
DROP FUNCTION IF EXISTS "sync"."begin_write"(bigint, text);
CREATE OR REPLACE FUNCTION "sync"."begin_write"(closing_body bigint, resource text DEFAULT NULL, "at" timestamptz DEFAULT NULL) RETURNS timestamptz LANGUAGE plpgsql AS $$
DECLARE
  known timestamptz;
BEGIN
  IF resource IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(hashtextextended('tesync resource ' || resource, 0));
  END IF;
  PERFORM pg_advisory_xact_lock_shared(7281190437355202);
  known := coalesce("at", "sync"."server_clock"());
  PERFORM set_config('tesync.known_at', known::text, true);
  PERFORM "sync"."set_closing_body"(closing_body);
  RETURN known;
END
$$;

CREATE OR REPLACE FUNCTION "sync"."pass_write_barrier"() RETURNS timestamptz LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(7281190437355202);
  RETURN "sync"."server_clock"();
END
$$;

-- Before the row changes: the old row becomes a version held from its `fetched_at` until
-- now (known time), and the new row starts where it ends. A row this very transaction wrote
-- held at no instant anyone could see: it makes no version.
--
-- The newest response wins, not the last commit. A row stamped later than this write's known
-- time was written by a writer that took its known time after this one and committed first
-- (a sync beside a worker on the same keys, this one held inside its transaction): what this
-- write carries is older than what that row holds. It does not replace the row: it becomes
-- the version it would have been had the two committed in order (`sync.place_version`), and
-- a removal leaves the key absent from its known time until the newer row begins.
--
-- Nor does the move an older release's mending makes (`keep_history`) make a version: an
-- update that changes nothing but a later start, to exactly where the key's history ends.
-- The row it moves started inside a version already kept (it can hold at no instant before
-- that end), so what it gives up was never its to hold. The guard is cheap on the ordinary
-- write, whose row starts at known time, and the history is read only for a row that moves.
CREATE OR REPLACE FUNCTION "sync"."keep_version"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  known timestamptz := "sync"."known_at"();
  ends timestamptz;
  closing bigint;
  moved record;
  key_columns text[];
BEGIN
  -- `sync.place_version`'s own removal of a row it has placed in the history.
  IF current_setting('tesync.placing', true) = 'on' THEN
    RETURN OLD;
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.fetched_at > OLD.fetched_at AND NEW.fetched_at <> known THEN
    moved := OLD;
    moved.fetched_at := NEW.fetched_at;
    IF moved::text = NEW::text THEN
      key_columns := "sync"."primary_key"(TG_RELID);
      EXECUTE format('SELECT max(known_to) FROM %I.%I WHERE (%s) = (%s) AND tstzrange(known_from, known_to) && tstzrange($1.fetched_at, NULL)',
        TG_TABLE_SCHEMA, TG_TABLE_NAME || '_history',
        (SELECT string_agg(quote_ident(k), ', ') FROM unnest(key_columns) k),
        (SELECT string_agg(format('$1.%I', k), ', ') FROM unnest(key_columns) k))
        INTO ends USING OLD;
      IF NEW.fetched_at = ends THEN
        RETURN NEW;
      END IF;
    END IF;
  END IF;
  IF OLD.fetched_at = known THEN
    IF TG_OP = 'UPDATE' THEN
      NEW.fetched_at := known;
      RETURN NEW;
    END IF;
    RETURN OLD;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    closing := NEW.raw_response_id;
  ELSE
    closing := "sync"."closing_body"();
  END IF;
  IF OLD.fetched_at > known THEN
    PERFORM "sync"."place_version"(TG_TABLE_SCHEMA, TG_TABLE_NAME, "sync"."primary_key"(TG_RELID), to_jsonb(OLD),
      CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(NEW) END, known, closing);
    RETURN NULL;
  END IF;
  EXECUTE format('INSERT INTO %I.%I SELECT * FROM jsonb_populate_record(NULL::%I.%I, $1)', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_history', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_history')
    USING to_jsonb(OLD) || jsonb_build_object('known_from', OLD.fetched_at, 'known_to', known, 'closing_raw_response_id', closing);
  IF TG_OP = 'UPDATE' THEN
    NEW.fetched_at := known;
    RETURN NEW;
  END IF;
  RETURN OLD;
END
$$;

-- An older write, placed where its known time `at` puts it among a key's versions: the
-- version holding at `at` now ends there, closed by `closing` (the older write's body), and
-- `version` (null for a removal) holds from `at` until that version used to end, closed by
-- what closed it; when the key was absent at `at`, until the key's next version or row
-- begins. A version this transaction placed at `at` before is replaced, not cut to nothing.
-- `key_row`: a row of `T` holding the key. Called by the triggers, for the rare late write.
CREATE OR REPLACE FUNCTION "sync"."place_version"(schema_name text, table_name text, key_columns text[], key_row jsonb, version jsonb, at timestamptz, closing bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  t text := format('%I.%I', schema_name, table_name);
  h text := format('%I.%I', schema_name, table_name || '_history');
  same text := (SELECT string_agg(format('v.%1$I = k.%1$I', c), ' AND ') FROM unnest(key_columns) c);
  held tid;
  held_from timestamptz;
  ends timestamptz;
  after bigint;
BEGIN
  EXECUTE format('SELECT v.ctid, v.known_from, v.known_to, v.closing_raw_response_id FROM %s v, jsonb_populate_record(NULL::%s, $1) k WHERE %s AND tstzrange(v.known_from, v.known_to) @> $2', h, t, same)
    INTO held, held_from, ends, after USING key_row, at;
  IF held_from = at THEN
    EXECUTE format('DELETE FROM %s WHERE ctid = $1', h) USING held;
  ELSIF held_from IS NOT NULL THEN
    EXECUTE format('UPDATE %s SET known_to = $2, closing_raw_response_id = $3 WHERE ctid = $1', h) USING held, at, closing;
  ELSE
    EXECUTE format($q$SELECT n.start, n.body FROM (
        SELECT v.known_from AS start, v.raw_response_id AS body FROM %1$s v, jsonb_populate_record(NULL::%2$s, $1) k WHERE %3$s AND v.known_from > $2
        UNION ALL
        SELECT v.fetched_at, v.raw_response_id FROM %2$s v, jsonb_populate_record(NULL::%2$s, $1) k WHERE %3$s AND v.fetched_at > $2) n ORDER BY n.start LIMIT 1$q$, h, t, same)
      INTO ends, after USING key_row, at;
  END IF;
  IF version IS NOT NULL AND ends IS NOT NULL THEN
    EXECUTE format('INSERT INTO %s SELECT * FROM jsonb_populate_record(NULL::%s, $1)', h, h)
      USING version || jsonb_build_object('fetched_at', at, 'known_from', at, 'known_to', ends, 'closing_raw_response_id', after);
  END IF;
END
$$;

-- After an INSERT into `T`: an inserted row whose `fetched_at` is earlier than the end of its
-- key's last version was written by a writer whose known time came before another's that
-- removed the key (or wrote and removed it) and committed first. Left there, the current row
-- would overlap the version before it, `T_as_of` would return the key twice, and every later
-- write of the key would be refused by the constraint. What it carries is older than that
-- removal: it is placed in the history where its known time puts it (`sync.place_version`),
-- and the key stays as the newer writer left it, as an update racing the same way does
-- (`keep_version`). `TG_ARGV`: the key's columns.
--
-- What it costs is for a first sync's batches of new keys: one statement per INSERT (a
-- statement trigger over the transition table `inserted`), not a lookup per row. Only a
-- version still held after the earliest inserted row's start can overlap one, and only a
-- writer known later than this one can have closed it: those few are found by one search of
-- the period index (`T_history_no_overlap`, as `T_as_of(now)` searches it), and only their keys
-- are looked for among the inserted rows. Searches, never scans: a plan chosen from missing or
-- stale statistics (a history too young to be analyzed) could read the whole history for
-- every batch.
CREATE OR REPLACE FUNCTION "sync"."start_after_history"() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  earliest timestamptz;
  late boolean;
  r record;
  keys text := (SELECT string_agg(quote_ident(k), ', ') FROM unnest(TG_ARGV) k);
BEGIN
  SELECT min(fetched_at) INTO earliest FROM inserted;
  -- An upsert whose every row conflicted inserted nothing.
  IF earliest IS NULL THEN
    RETURN NULL;
  END IF;
  -- Most often there is no such version: a statement quicker to plan than the search says so.
  EXECUTE format('SELECT EXISTS (SELECT FROM %I.%I WHERE tstzrange(known_from, known_to) && tstzrange($1, NULL))', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_history')
    INTO late USING earliest;
  IF NOT late THEN
    RETURN NULL;
  END IF;
  FOR r IN EXECUTE format($q$SELECT to_jsonb(t) AS j FROM %1$I.%2$I t
      JOIN (SELECT %4$s, max(known_to) AS ends FROM %1$I.%3$I WHERE tstzrange(known_from, known_to) && tstzrange($1, NULL) GROUP BY %4$s) l ON (%5$s) = (%6$s)
     WHERE t.fetched_at < l.ends AND (%5$s) IN (SELECT %4$s FROM inserted)$q$,
    TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_TABLE_NAME || '_history', keys,
    (SELECT string_agg(format('t.%I', k), ', ') FROM unnest(TG_ARGV) k),
    (SELECT string_agg(format('l.%I', k), ', ') FROM unnest(TG_ARGV) k))
    USING earliest
  LOOP
    PERFORM "sync"."place_version"(TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_ARGV, r.j, r.j, (r.j->>'fetched_at')::timestamptz, (r.j->>'raw_response_id')::bigint);
    PERFORM set_config('tesync.placing', 'on', true);
    EXECUTE format('DELETE FROM %I.%I t WHERE (%s) = (SELECT %s FROM jsonb_populate_record(NULL::%I.%I, $1))', TG_TABLE_SCHEMA, TG_TABLE_NAME,
      (SELECT string_agg(format('t.%I', k), ', ') FROM unnest(TG_ARGV) k), keys, TG_TABLE_SCHEMA, TG_TABLE_NAME)
      USING r.j;
    PERFORM set_config('tesync.placing', '', true);
  END LOOP;
  RETURN NULL;
END
$$;

-- The database, not the writers, keeps versions of one key apart. Versions written before
-- known time came from the server may overlap (writers whose clocks differed): each is cut
-- where the next begins, and the last where the current row begins (a version cut to
-- nothing stays, held at no instant), before the constraint is added, once.
--
-- The constraint's GiST index is also what `T_as_of(at)` reads the versions through, so the
-- period comes first: "the versions holding at `at`" is then one narrow search, for the whole
-- table or, with the key's columns narrowing the same search, for one key.
CREATE OR REPLACE FUNCTION "sync"."enforce_versions"(schema_name text, table_name text, key_columns text[]) RETURNS void LANGUAGE plpgsql AS $enforce$
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
$enforce$;

-- `T_as_of` is made by the database from `T`'s columns in their stored order (a column added
-- later stands last there, wherever it is declared), so the function always returns `T`'s row.
--
-- Its shape is for the planner. A SQL function of one SELECT, stable, is inlined into the query
-- that calls it (unless its argument holds a sub-select: docs/warehouse.md says which form to
-- use). Inside, `T` and `T_history` are a UNION ALL whose two branches have no WHERE of their
-- own: only then does Postgres flatten it into one relation of two members, push the caller's
-- conditions into each, read them in parallel, and merge two ordered index scans (a token's
-- latest point is one backward step). The instant is tested outside: on `T`, `fetched_at <= at`
-- (its period is unbounded, a constant); on `T_history`, the period `@>`, which its GiST
-- index (`T_history_no_overlap`) answers.
CREATE OR REPLACE FUNCTION "sync"."create_as_of"(schema_name text, table_name text) RETURNS void LANGUAGE plpgsql AS $create$
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
$create$;

-- A table's primary key columns, in the key's order.
CREATE OR REPLACE FUNCTION "sync"."primary_key"(t regclass) RETURNS text[] LANGUAGE sql STABLE AS $$
  SELECT array_agg(a.attname::text ORDER BY k.ord)
    FROM pg_index x CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
    JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
   WHERE x.indrelid = t AND x.indisprimary
$$;

-- `T_history` from `T`: `T`'s columns (nullable as they are, no defaults) and the version's
-- times, an index by key and time and one beside each of `T`'s indexes (they serve the same
-- query shapes through `T_as_of`, which reads both). A column `T` gains later is added
-- nullable (the versions before it had none), one whose type changes changes with it, and one
-- `T` lets be null may be null here too. Then the triggers, the constraint and the as-of function.
CREATE OR REPLACE FUNCTION "sync"."keep_history"(schema_name text, table_name text) RETURNS void LANGUAGE plpgsql AS $keep$
DECLARE
  t regclass := format('%I.%I', schema_name, table_name)::regclass;
  history_name text := table_name || '_history';
  h text := format('%I.%I', schema_name, history_name);
  key_columns text[] := "sync"."primary_key"(t);
  c record;
  i record;
BEGIN
  IF key_columns IS NULL THEN
    RAISE EXCEPTION '%: a versioned table needs a primary key', t;
  END IF;

  IF to_regclass(h) IS NULL THEN
    EXECUTE format('CREATE TABLE %s (%s, "known_from" timestamptz NOT NULL, "known_to" timestamptz NOT NULL, "closing_raw_response_id" bigint)', h,
      (SELECT string_agg(format('%I %s%s', attname, format_type(atttypid, atttypmod), CASE WHEN attnotnull THEN ' NOT NULL' ELSE '' END), ', ' ORDER BY attnum)
         FROM pg_attribute WHERE attrelid = t AND attnum > 0 AND NOT attisdropped));
  END IF;
  FOR c IN
    SELECT s.attname, format_type(s.atttypid, s.atttypmod) AS type, s.attnotnull, hc.attname IS NOT NULL AS present,
           format_type(hc.atttypid, hc.atttypmod) AS history_type, hc.attnotnull AS history_notnull
      FROM pg_attribute s
      LEFT JOIN pg_attribute hc ON hc.attrelid = h::regclass AND hc.attname = s.attname AND hc.attnum > 0 AND NOT hc.attisdropped
     WHERE s.attrelid = t AND s.attnum > 0 AND NOT s.attisdropped ORDER BY s.attnum
  LOOP
    IF NOT c.present THEN
      EXECUTE format('ALTER TABLE %s ADD COLUMN %I %s', h, c.attname, c.type);
    ELSE
      IF c.type <> c.history_type THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I TYPE %s USING %I::%s', h, c.attname, c.type, c.attname, c.type);
      END IF;
      IF c.history_notnull AND NOT c.attnotnull THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP NOT NULL', h, c.attname);
      END IF;
    END IF;
  END LOOP;

  EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s USING btree (%s, "known_from")', history_name || '_key_idx', h,
    (SELECT string_agg(quote_ident(k), ', ') FROM unnest(key_columns) k));
  FOR i IN
    SELECT ic.relname AS name,
           (SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.ord)
              FROM unnest(x.indkey) WITH ORDINALITY k(attnum, ord) JOIN pg_attribute a ON a.attrelid = t AND a.attnum = k.attnum) AS columns
      FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid
     WHERE x.indrelid = t AND NOT x.indisprimary AND NOT (0 = ANY (x.indkey::int2[])) AND x.indexprs IS NULL
  LOOP
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s USING btree (%s)',
      history_name || CASE WHEN starts_with(i.name, table_name) THEN substr(i.name, length(table_name) + 1) ELSE '_' || i.name END, h, i.columns);
  END LOOP;

  EXECUTE format('CREATE OR REPLACE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"()', t);
  PERFORM "sync"."enforce_versions"(schema_name, table_name, key_columns);
  -- A table without `start_after_history` yet (a release before it) may hold a row a racing
  -- insert left overlapping its key's history, where every later write of the key is refused:
  -- it is moved as the trigger would have moved it, once.
  IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = t AND tgname = 'start_after_history') THEN
    EXECUTE format($q$UPDATE %1$s t SET fetched_at = l.ends
        FROM (SELECT %3$s, max(known_to) AS ends FROM %2$s WHERE known_from < known_to GROUP BY %3$s) l
       WHERE %4$s AND t.fetched_at < l.ends$q$, t, h,
      (SELECT string_agg(quote_ident(k), ', ') FROM unnest(key_columns) k),
      (SELECT string_agg(format('t.%1$I = l.%1$I', k), ' AND ') FROM unnest(key_columns) k));
  END IF;
  EXECUTE format('CREATE OR REPLACE TRIGGER "start_after_history" AFTER INSERT ON %s REFERENCING NEW TABLE AS "inserted" FOR EACH STATEMENT EXECUTE FUNCTION "sync"."start_after_history"(%s)',
    t, (SELECT string_agg(quote_literal(k), ', ') FROM unnest(key_columns) k));
  PERFORM "sync"."create_as_of"(schema_name, table_name);
END
$keep$;

-- Versions link to the bodies they were read from and closed by: the archive is never pruned.
CREATE OR REPLACE FUNCTION "sync"."keep_bodies"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'sync.raw_responses keeps every body a version was read from or closed by: it is never pruned'
    USING ERRCODE = 'restrict_violation', HINT = 'sync.requests is the table retention prunes (TE_REQUESTS_RETENTION_DAYS).';
END
$$;

CREATE OR REPLACE TRIGGER "keep_bodies" BEFORE DELETE OR TRUNCATE ON "sync"."raw_responses" FOR EACH STATEMENT EXECUTE FUNCTION "sync"."keep_bodies"();
