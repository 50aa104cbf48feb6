-- The daily archives' fill (src/store/write/daily-archive.ts): a repeatable migration
-- (src/store/schema/sql-files.ts), after history.sql, whose as-of functions it reads.
--
-- `sync.fill_daily_archive(archive, source, universe, at)` fills `archive` for each UTC day
-- from the last one archived (again, as it may have been archived before its end) through the
-- day of `at`: the rows of `source` for each token `universe` listed at the day's end, as
-- known then (`T_as_of`). A day's rows that were archived but are no longer what was known at
-- its end (a token delisted later that day) leave. Never earlier than the first version known,
-- so rows archived by an earlier release, before the versions began, stay as they are.
--
-- A fill costs the days it fills, not the depth of the history: each day is read through the
-- as-of functions (an index search for the versions holding at its end), and the first
-- version known is looked for only when no version was known by the end of the last archived
-- day (an empty archive, or one an earlier release left): otherwise that day is the start.
-- Days are counted in `date`, never in `timestamptz`, so the session's TimeZone cannot drop
-- or double one (a DST change at midnight).
--
-- What it reads of the tables: the archive's columns are the source's plus one day column
-- (the first the source does not have), its key is its primary key, and a token is the first
-- column of the source's and of the universe's primary keys. Values are compared as text, as
-- the write path compares (a decimal's written form counts).
CREATE OR REPLACE FUNCTION "sync"."fill_daily_archive"(archive regclass, source regclass, universe regclass, "at" timestamptz) RETURNS void LANGUAGE plpgsql AS $fill$
DECLARE
  source_schema text;
  source_name text;
  universe_schema text;
  universe_name text;
  columns text[] := array(SELECT attname::text FROM pg_attribute WHERE attrelid = archive AND attnum > 0 AND NOT attisdropped ORDER BY attnum);
  key_columns text[] := "sync"."primary_key"(archive);
  token_key text := ("sync"."primary_key"(source))[1];
  universe_key text := ("sync"."primary_key"(universe))[1];
  day_column text;
  copied text[];
  compared text[];
BEGIN
  SELECT n.nspname, c.relname INTO source_schema, source_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = source;
  SELECT n.nspname, c.relname INTO universe_schema, universe_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = universe;
  IF token_key IS NULL OR universe_key IS NULL THEN
    RAISE EXCEPTION '%: source and universe need a key', archive;
  END IF;
  day_column := (SELECT c FROM unnest(columns) WITH ORDINALITY u(c, i)
                  WHERE NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = source AND attname = u.c AND attnum > 0 AND NOT attisdropped) ORDER BY i LIMIT 1);
  IF day_column IS NULL THEN
    RAISE EXCEPTION '%: no day column beside the source''s columns', archive;
  END IF;
  copied := array(SELECT c FROM unnest(columns) WITH ORDINALITY u(c, i) WHERE c <> day_column ORDER BY i);
  compared := array(SELECT c FROM unnest(copied) WITH ORDINALITY u(c, i) WHERE c <> ALL (key_columns) ORDER BY i);

  EXECUTE format($q$
with archived as (
  select max(%1$I) as day, ((max(%1$I) + 1)::timestamp at time zone 'UTC') as ends from %2$s
),
bounds as (
  select case
    when archived.day is not null and (exists (select 1 from %3$s where "fetched_at" < archived.ends)
      or exists (select 1 from %4$s where tstzrange("known_from", "known_to") && tstzrange(null, archived.ends)))
    then archived.day
    else (select (min(k) at time zone 'UTC')::date from (
      select min("fetched_at") as k from %3$s
      union all select min("known_from") from %4$s) m)
  end as first, ($1 at time zone 'UTC')::date as last
  from archived
),
days as (
  select d.day, least($1, ((d.day + 1)::timestamp at time zone 'UTC') - interval '1 microsecond') as at
  from bounds, generate_series(0, bounds.last - bounds.first) i, lateral (select bounds.first + i as day) d
),
filled as (
  select days.day as %1$I, %5$s
  from days cross join lateral (
    select s.* from %6$s(days.at) s
    join %7$s(days.at) u on u.%8$I = s.%9$I and u."delisted_at" is null
  ) s
),
removed as (
  delete from %2$s a using bounds
  where a.%1$I between bounds.first and bounds.last
    and not exists (select 1 from filled f where %10$s)
)
insert into %2$s as t (%11$s)
select %11$s from filled
on conflict (%12$s) do update set %13$s
where (%14$s) is distinct from (%15$s)$q$,
    day_column,
    archive,
    source,
    format('%I.%I', source_schema, source_name || '_history'),
    (SELECT string_agg(format('s.%I', c), ', ' ORDER BY i) FROM unnest(copied) WITH ORDINALITY u(c, i)),
    format('%I.%I', source_schema, source_name || '_as_of'),
    format('%I.%I', universe_schema, universe_name || '_as_of'),
    universe_key,
    token_key,
    (SELECT string_agg(format('f.%1$I = a.%1$I', k), ' and ') FROM unnest(key_columns) k),
    (SELECT string_agg(format('%I', c), ', ' ORDER BY i) FROM unnest(columns) WITH ORDINALITY u(c, i)),
    (SELECT string_agg(format('%I', k), ', ') FROM unnest(key_columns) k),
    (SELECT string_agg(format('%1$I = excluded.%1$I', c), ', ' ORDER BY i) FROM unnest(compared) WITH ORDINALITY u(c, i)),
    (SELECT string_agg(format('t.%I::text', c), ', ' ORDER BY i) FROM unnest(compared) WITH ORDINALITY u(c, i)),
    (SELECT string_agg(format('excluded.%I::text', c), ', ' ORDER BY i) FROM unnest(compared) WITH ORDINALITY u(c, i)))
  USING "at";
END
$fill$;

-- Each daily archive's days (`sync.archive_days`): a day's rows and the last transaction that
-- changed them, kept by statement triggers on the archive in the transaction that writes it,
-- whoever writes it (the fill, a person's UPDATE). `tesync export` asks which days changed
-- since its last snapshot of them here (`pg_visible_in_snapshot(writer, ...)`), instead of
-- reading each row's writer off the whole archive, which cost a scan of gigabytes of payloads
-- to find one new day (docs/performance.md, "Export").
--
-- A statement's changes are counted per day from its transition tables and added in day
-- order, so two writers of the same days take their locks in the same order. A day rewritten
-- by two transactions keeps the later committer: it waited for the earlier one's row lock, so
-- whoever sees the later one saw the earlier too.
CREATE OR REPLACE FUNCTION "sync"."count_archive_days"() RETURNS trigger LANGUAGE plpgsql AS $count$
DECLARE
  archive_name text := TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME;
  day_column text := TG_ARGV[0];
  delta text;
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    UPDATE "sync"."archive_days" SET "rows" = 0, "writer" = pg_current_xact_id() WHERE "archive" = archive_name AND "rows" <> 0;
    RETURN NULL;
  ELSIF TG_OP = 'INSERT' THEN
    delta := format('select %1$I as day, count(*) as n from new_rows group by 1', day_column);
  ELSIF TG_OP = 'DELETE' THEN
    delta := format('select %1$I as day, -count(*) as n from old_rows group by 1', day_column);
  ELSE
    delta := format('select day, sum(n) as n from (select %1$I as day, count(*) as n from new_rows group by 1 union all select %1$I, -count(*) from old_rows group by 1) d group by 1', day_column);
  END IF;
  EXECUTE format($q$
    insert into "sync"."archive_days" as a ("archive", "day", "rows", "writer")
    select $1, d.day, d.n, pg_current_xact_id() from (%s) d order by d.day
    on conflict ("archive", "day") do update set "rows" = a."rows" + excluded."rows", "writer" = excluded."writer"
  $q$, delta) USING archive_name;
  RETURN NULL;
END
$count$;

-- `sync.track_archive_days(schema, name, day column)`: the triggers on one archive, and its days
-- as it holds them now for an archive that had none counted (an archive an earlier release
-- filled: its days are counted as written now, so the next export writes them all once).
-- Run for each archive the declarations name (src/store/schema/sql-files.ts), in the migration's
-- transaction: the triggers' lock keeps writers out until the counts are in.
CREATE OR REPLACE FUNCTION "sync"."track_archive_days"(schema_name text, table_name text, day_column text) RETURNS void LANGUAGE plpgsql AS $track$
DECLARE
  target text := format('%I.%I', schema_name, table_name);
BEGIN
  EXECUTE format('CREATE OR REPLACE TRIGGER "archive_days_insert" AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "sync"."count_archive_days"(%L)', target, day_column);
  EXECUTE format('CREATE OR REPLACE TRIGGER "archive_days_update" AFTER UPDATE ON %s REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "sync"."count_archive_days"(%L)', target, day_column);
  EXECUTE format('CREATE OR REPLACE TRIGGER "archive_days_delete" AFTER DELETE ON %s REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "sync"."count_archive_days"(%L)', target, day_column);
  EXECUTE format('CREATE OR REPLACE TRIGGER "archive_days_truncate" AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION "sync"."count_archive_days"(%L)', target, day_column);
  IF NOT EXISTS (SELECT 1 FROM "sync"."archive_days" WHERE "archive" = schema_name || '.' || table_name) THEN
    EXECUTE format('insert into "sync"."archive_days" ("archive", "day", "rows", "writer") select $1, %1$I, count(*), pg_current_xact_id() from %2$s group by 2 order by 2', day_column, target)
      USING schema_name || '.' || table_name;
  END IF;
END
$track$;
