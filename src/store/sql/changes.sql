-- What changed between two instants: the versions read as changes. A repeatable migration
-- (src/store/schema/sql-files.ts), after history.sql, whose `T_history` tables it reads; then
-- `sync.create_changes(schema, table, data_time, bookkeeping)` for every versioned table, with
-- the table's data-time column (empty when it has none) and the bookkeeping columns, as
-- src/schema/warehouse/ declares them.
--
-- A change is the edge between two versions of a key, known at the instant the later one began
-- (or the earlier one ended, with nothing after it):
-- - a version that began in `(from_at, to_at]` is an `update` when an earlier version of its key
--   ended where it began, else an `insert` (the key's first version, or its return after a removal);
-- - a version that ended in `(from_at, to_at]` with no version of its key beginning there is a
--   `delete`.
-- A version held at no instant (`known_from = known_to`, one a late write cut to nothing) is no
-- change: `T_as_of` never returns it either. So the changes of an interval carry exactly
-- `T_as_of(from_at)` to `T_as_of(to_at)`, key by key (test/store/changes.test.ts).
--
-- `T_changes(from_at, to_at)` is made per table from its columns, as `T_as_of` is: a plain SQL
-- query over the table and its history, whose periods are found through `T_history_no_overlap`
-- (the versions touching the interval) and whose earlier versions through `T_history_key_idx`
-- (one backward step per key). The generic functions of `sync` name the table as a `regclass`
-- and return its changes in one shape, the key as jsonb.

-- The shape every `T_changes` returns, and the generic functions with it.
--   change_type      insert | update | delete
--   key              the key's columns, as jsonb
--   known_at         the known time of the change: the later version's `known_from`, a delete's `known_to`
--   run_id           the run that wrote the later version; for a delete, the run that first received the body that closed it
--   raw_response_id  the body the later version was read from; for a delete, the body that closed it
--   before, after    the row's columns before and after (null for an insert's before, a delete's after)
--   changed          the columns whose text differs, bookkeeping aside, in the table's order
--   data_time        the row's data time, where the table has one (after, else before)
--   revision         an update or delete of a value whose data time is before `from_at`

-- A run's end: the instant a bound given as a run id stands for.
CREATE OR REPLACE FUNCTION "sync"."run_end"(run uuid) RETURNS timestamptz LANGUAGE plpgsql STABLE AS $$
DECLARE
  ended timestamptz;
  found_run boolean;
BEGIN
  SELECT true, finished_at INTO found_run, ended FROM "sync"."runs" WHERE id = run;
  IF found_run IS NULL THEN
    RAISE EXCEPTION 'no run % in sync.runs', run USING ERRCODE = 'no_data_found';
  END IF;
  IF ended IS NULL THEN
    RAISE EXCEPTION 'run % has not finished: it has no end to stand for an instant', run USING ERRCODE = 'object_not_in_prerequisite_state';
  END IF;
  RETURN ended;
END
$$;

-- `T_changes(from_at, to_at)` from `T`'s columns in their stored order. `data_time`: the
-- column of `T` holding its rows' data time, or empty; `bookkeeping`: the columns, comma-separated,
-- that say when and from where a row was written rather than what it holds (left out of `changed`).
CREATE OR REPLACE FUNCTION "sync"."create_changes"(schema_name text, table_name text, data_time text, bookkeeping text) RETURNS void LANGUAGE plpgsql AS $create$
DECLARE
  t text := format('%I.%I', schema_name, table_name);
  h text := format('%I.%I', schema_name, table_name || '_history');
  key_columns text[];
  ignored text[] := coalesce(string_to_array(nullif(bookkeeping, ''), ','), '{}');
  compared text[];
  dt text := CASE WHEN coalesce(data_time, '') = '' THEN 'NULL::timestamptz' ELSE format('x.%I', data_time) END;
  as_row text;
  cols text;
  same text;
  key_of text;
  differs text;
BEGIN
  IF to_regclass(h) IS NULL THEN
    RAISE EXCEPTION '%: not versioned (sync.keep_history makes % first)', t, h;
  END IF;
  key_columns := "sync"."primary_key"(t::regclass);
  compared := array(SELECT attname::text FROM pg_attribute WHERE attrelid = t::regclass AND attnum > 0 AND NOT attisdropped AND NOT attname = ANY (ignored) ORDER BY attnum);
  -- A version as `T`'s row, by its columns. Rows travel as such through the sort, their large
  -- values still compressed as stored, and become jsonb once, after it.
  cols := (SELECT string_agg(format('x.%I', attname), ', ' ORDER BY attnum) FROM pg_attribute WHERE attrelid = t::regclass AND attnum > 0 AND NOT attisdropped);
  as_row := format('(%s)::%s', cols, t);
  same := (SELECT string_agg(format('x.%1$I = v.%1$I', k), ' AND ') FROM unnest(key_columns) k);
  key_of := (SELECT 'jsonb_build_object(' || string_agg(format('%L, v.%I', k, k), ', ') || ')' FROM unnest(key_columns) k);
  -- The columns an update changed, compared typed, column by column (a jsonb one as jsonb,
  -- without printing it); a decimal as text, since its written form counts, as the write path
  -- compares it.
  differs := (SELECT 'array_remove(ARRAY[' || string_agg(
      CASE WHEN format_type(atttypid, atttypmod) LIKE 'numeric%' OR format_type(atttypid, atttypmod) = 'json'
           THEN format('CASE WHEN p.%1$I::text IS DISTINCT FROM v.%1$I::text THEN %1$L END', attname)
           ELSE format('CASE WHEN p.%1$I IS DISTINCT FROM v.%1$I THEN %1$L END', attname) END, ', ' ORDER BY attnum) || ']::text[], NULL)'
    FROM pg_attribute WHERE attrelid = t::regclass AND attnum > 0 AND NOT attisdropped AND NOT attname = ANY (ignored));
  EXECUTE format($f$CREATE OR REPLACE FUNCTION %1$I.%2$I(from_at timestamptz, to_at timestamptz)
  RETURNS TABLE (change_type text, key jsonb, known_at timestamptz, run_id uuid, raw_response_id bigint, before jsonb, after jsonb, changed text[], data_time timestamptz, revision boolean)
  LANGUAGE sql STABLE PARALLEL SAFE AS $b$
  WITH began AS (
    SELECT %5$s, %7$s AS r, x.fetched_at AS began_at, %6$s AS dt FROM %3$s x
     WHERE x.fetched_at > from_at AND x.fetched_at <= to_at
    UNION ALL
    SELECT %5$s, %7$s, x.known_from, %6$s FROM %4$s x
     WHERE tstzrange(x.known_from, x.known_to) && tstzrange(from_at, to_at, '(]')
       AND x.known_from > from_at AND x.known_from <= to_at AND x.known_from < x.known_to
  ), ended AS (
    SELECT %5$s, %7$s AS r, x.known_to AS ended_at, x.closing_raw_response_id AS body, %6$s AS dt FROM %4$s x
     WHERE tstzrange(x.known_from, x.known_to) && tstzrange(from_at, to_at, '(]')
       AND x.known_to > from_at AND x.known_to <= to_at AND x.known_from < x.known_to
  ), edges AS (
    SELECT CASE WHEN p.known_to = v.began_at THEN 'update' ELSE 'insert' END AS change_type, %8$s AS key, v.began_at AS known_at, v.run_id,
           v.raw_response_id, CASE WHEN p.known_to = v.began_at THEN p.r END AS b, v.r AS a,
           CASE WHEN p.known_to = v.began_at THEN %10$s ELSE %11$L::text[] END AS changed, v.dt
      FROM began v
      LEFT JOIN LATERAL (SELECT x.*, %7$s AS r FROM %4$s x
                          WHERE %9$s AND x.known_from < v.began_at AND x.known_from < x.known_to
                          ORDER BY x.known_from DESC LIMIT 1) p ON true
    UNION ALL
    SELECT 'delete', %8$s, v.ended_at, (SELECT rr.run_id FROM "sync"."raw_responses" rr WHERE rr.id = v.body), v.body, v.r, NULL::%3$s, %11$L::text[], v.dt
      FROM ended v
     WHERE NOT EXISTS (SELECT FROM %4$s x WHERE %9$s AND x.known_from = v.ended_at AND x.known_from < x.known_to)
       AND NOT EXISTS (SELECT FROM %3$s x WHERE %9$s AND x.fetched_at = v.ended_at)
  )
  SELECT e.change_type, e.key, e.known_at, e.run_id, e.raw_response_id, to_jsonb(e.b), to_jsonb(e.a), e.changed, e.dt, e.change_type <> 'insert' AND e.dt < from_at
    FROM (SELECT * FROM edges ORDER BY known_at, key OFFSET 0) e
   ORDER BY e.known_at, e.key
$b$$f$, schema_name, table_name || '_changes', t, h, cols, dt, as_row, key_of, same, differs, compared);
END
$create$;

-- A versioned table's `T_changes`, or an error naming what `tbl` is not.
CREATE OR REPLACE FUNCTION "sync"."changes_function"(tbl regclass) RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  f text;
BEGIN
  SELECT format('%I.%I', n.nspname, c.relname || '_changes') INTO f FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = tbl;
  IF f IS NULL OR to_regprocedure(f || '(timestamptz, timestamptz)') IS NULL
     OR NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = tbl AND tgname = 'keep_version') THEN
    RAISE EXCEPTION '% is not a versioned table: changes are read from the versions of the tables of app and gateway', tbl USING ERRCODE = 'undefined_table';
  END IF;
  RETURN f;
END
$$;

-- Every change of `tbl` known in (from_at, to_at], in the order they became known.
CREATE OR REPLACE FUNCTION "sync"."changes"(tbl regclass, from_at timestamptz, to_at timestamptz)
  RETURNS TABLE (change_type text, key jsonb, known_at timestamptz, run_id uuid, raw_response_id bigint, before jsonb, after jsonb, changed text[], data_time timestamptz, revision boolean)
  LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN QUERY EXECUTE format('SELECT * FROM %s($1, $2)', "sync"."changes_function"(tbl)) USING from_at, to_at;
END
$$;

CREATE OR REPLACE FUNCTION "sync"."changes"(tbl regclass, run_a uuid, run_b uuid)
  RETURNS TABLE (change_type text, key jsonb, known_at timestamptz, run_id uuid, raw_response_id bigint, before jsonb, after jsonb, changed text[], data_time timestamptz, revision boolean)
  LANGUAGE sql STABLE AS $$
  SELECT * FROM "sync"."changes"(tbl, "sync"."run_end"(run_a), "sync"."run_end"(run_b))
$$;

-- The revisions: the changes of values whose data time is before from_at.
CREATE OR REPLACE FUNCTION "sync"."revisions"(tbl regclass, from_at timestamptz, to_at timestamptz)
  RETURNS TABLE (change_type text, key jsonb, known_at timestamptz, run_id uuid, raw_response_id bigint, before jsonb, after jsonb, changed text[], data_time timestamptz, revision boolean)
  LANGUAGE sql STABLE AS $$
  SELECT * FROM "sync"."changes"(tbl, from_at, to_at) c WHERE c.revision
$$;

CREATE OR REPLACE FUNCTION "sync"."revisions"(tbl regclass, run_a uuid, run_b uuid)
  RETURNS TABLE (change_type text, key jsonb, known_at timestamptz, run_id uuid, raw_response_id bigint, before jsonb, after jsonb, changed text[], data_time timestamptz, revision boolean)
  LANGUAGE sql STABLE AS $$
  SELECT * FROM "sync"."revisions"(tbl, "sync"."run_end"(run_a), "sync"."run_end"(run_b))
$$;

-- Net: each key's first `before` against its last `after`, which are its rows in
-- `T_as_of(from_at)` and `T_as_of(to_at)` (the changes carry one to the other); a key whose two
-- ends hold the same values (bookkeeping aside: a value changed and changed back, a row
-- inserted and removed) is left out. Its known time, run and body are those of its last change.
CREATE OR REPLACE FUNCTION "sync"."changes_net"(tbl regclass, from_at timestamptz, to_at timestamptz)
  RETURNS TABLE (change_type text, key jsonb, known_at timestamptz, run_id uuid, raw_response_id bigint, before jsonb, after jsonb, changed text[], data_time timestamptz, revision boolean)
  LANGUAGE sql STABLE AS $$
  WITH steps AS (
    SELECT c.*, row_number() OVER (PARTITION BY c.key ORDER BY c.known_at) AS first, row_number() OVER (PARTITION BY c.key ORDER BY c.known_at DESC) AS last
      FROM "sync"."changes"(tbl, from_at, to_at) c
  ), ends AS (
    SELECT s.key, max(s.before::text) FILTER (WHERE s.first = 1)::jsonb AS b,
           max(s.after::text) FILTER (WHERE s.last = 1)::jsonb AS a,
           max(s.known_at) AS known_at,
           (array_agg(s.run_id) FILTER (WHERE s.last = 1))[1] AS run_id,
           (array_agg(s.raw_response_id) FILTER (WHERE s.last = 1))[1] AS raw_response_id,
           (array_agg(s.data_time) FILTER (WHERE s.last = 1))[1] AS data_time,
           jsonb_agg(to_jsonb(s.changed)) AS touched
      FROM steps s
     GROUP BY s.key
  ), net AS (
    SELECT e.*, array(SELECT a.attname::text FROM pg_attribute a
                       WHERE a.attrelid = tbl AND a.attnum > 0 AND NOT a.attisdropped
                         AND (e.b -> a.attname::text)::text IS DISTINCT FROM (e.a -> a.attname::text)::text
                         AND EXISTS (SELECT FROM jsonb_array_elements(e.touched) t, jsonb_array_elements_text(t) c WHERE c = a.attname::text)
                       ORDER BY a.attnum) AS cols
      FROM ends e
  )
  SELECT CASE WHEN n.b IS NULL THEN 'insert' WHEN n.a IS NULL THEN 'delete' ELSE 'update' END, n.key, n.known_at, n.run_id, n.raw_response_id, n.b, n.a, n.cols,
         n.data_time, n.b IS NOT NULL AND n.data_time < from_at
    FROM net n
   WHERE (n.b IS NULL) <> (n.a IS NULL) OR (n.b IS NOT NULL AND cardinality(n.cols) > 0)
   ORDER BY n.known_at, n.key
$$;

CREATE OR REPLACE FUNCTION "sync"."changes_net"(tbl regclass, run_a uuid, run_b uuid)
  RETURNS TABLE (change_type text, key jsonb, known_at timestamptz, run_id uuid, raw_response_id bigint, before jsonb, after jsonb, changed text[], data_time timestamptz, revision boolean)
  LANGUAGE sql STABLE AS $$
  SELECT * FROM "sync"."changes_net"(tbl, "sync"."run_end"(run_a), "sync"."run_end"(run_b))
$$;

-- Per versioned table, in name order: its inserts, updates, deletes and revisions in (from_at, to_at].
CREATE OR REPLACE FUNCTION "sync"."change_summary"(from_at timestamptz, to_at timestamptz)
  RETURNS TABLE (table_name text, inserts bigint, updates bigint, deletes bigint, revisions bigint)
  LANGUAGE plpgsql STABLE AS $$
DECLARE
  t record;
BEGIN
  FOR t IN
    SELECT c.oid::regclass AS tbl, n.nspname || '.' || c.relname AS name
      FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE g.tgname = 'keep_version' AND to_regprocedure(format('%I.%I(timestamptz, timestamptz)', n.nspname, c.relname || '_changes')) IS NOT NULL
     ORDER BY 2
  LOOP
    RETURN QUERY SELECT t.name, count(*) FILTER (WHERE x.change_type = 'insert'), count(*) FILTER (WHERE x.change_type = 'update'),
                        count(*) FILTER (WHERE x.change_type = 'delete'), count(*) FILTER (WHERE x.revision)
                   FROM "sync"."changes"(t.tbl, from_at, to_at) x;
  END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION "sync"."change_summary"(run_a uuid, run_b uuid)
  RETURNS TABLE (table_name text, inserts bigint, updates bigint, deletes bigint, revisions bigint)
  LANGUAGE sql STABLE AS $$
  SELECT * FROM "sync"."change_summary"("sync"."run_end"(run_a), "sync"."run_end"(run_b))
$$;
