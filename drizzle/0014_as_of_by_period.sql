CREATE EXTENSION IF NOT EXISTS btree_gist;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "sync"."server_clock"() RETURNS timestamptz LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT clock_timestamp() + coalesce(nullif(current_setting('tesync.clock_offset', true), '')::interval, interval '0')
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "sync"."known_at"() RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT coalesce(nullif(current_setting('tesync.known_at', true), '')::timestamptz,
                  now() + coalesce(nullif(current_setting('tesync.clock_offset', true), '')::interval, interval '0'))
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "sync"."begin_write"(closing_body bigint) RETURNS timestamptz LANGUAGE plpgsql AS $$
DECLARE
  known timestamptz;
BEGIN
  PERFORM pg_advisory_xact_lock_shared(7281190437355202);
  known := "sync"."server_clock"();
  PERFORM set_config('tesync.known_at', known::text, true);
  PERFORM set_config('tesync.raw_response_id', coalesce(closing_body::text, ''), true);
  RETURN known;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "sync"."keep_version"() RETURNS trigger LANGUAGE plpgsql AS $$
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
    closing := nullif(current_setting('tesync.raw_response_id', true), '')::bigint;
  END IF;
  EXECUTE format('INSERT INTO %I.%I SELECT * FROM jsonb_populate_record(NULL::%I.%I, $1)', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_history', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_history')
    USING to_jsonb(OLD) || jsonb_build_object('known_from', OLD.fetched_at, 'known_to', ends, 'closing_raw_response_id', closing);
  IF TG_OP = 'UPDATE' THEN
    RETURN NEW;
  END IF;
  RETURN OLD;
END
$$;
--> statement-breakpoint
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
--> statement-breakpoint
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
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "sync"."keep_bodies"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'sync.raw_responses keeps every body a version was read from or closed by: it is never pruned'
    USING ERRCODE = 'restrict_violation', HINT = 'sync.requests is the table retention prunes (TE_REQUESTS_RETENTION_DAYS).';
END
$$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_bodies" ON "sync"."raw_responses";
--> statement-breakpoint
CREATE TRIGGER "keep_bodies" BEFORE DELETE OR TRUNCATE ON "sync"."raw_responses" FOR EACH STATEMENT EXECUTE FUNCTION "sync"."keep_bodies"();
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."metrics";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "app"."metrics" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('app', 'metrics', ARRAY['slug']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'metrics');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."tokens";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "app"."tokens" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('app', 'tokens', ARRAY['slug']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'tokens');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."screener_rows";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "app"."screener_rows" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('app', 'screener_rows', ARRAY['token_slug']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'screener_rows');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."token_snapshots";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "app"."token_snapshots" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('app', 'token_snapshots', ARRAY['token_slug']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'token_snapshots');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."metric_values";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "app"."metric_values" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('app', 'metric_values', ARRAY['token_slug', 'surface', 'path']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'metric_values');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."token_streams";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "app"."token_streams" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('app', 'token_streams', ARRAY['token_slug', 'stream_key']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'token_streams');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."metric_history";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "app"."metric_history" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('app', 'metric_history', ARRAY['token_slug', 'stream', 'metric', 'ts']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'metric_history');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."charts";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "app"."charts" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('app', 'charts', ARRAY['token_slug', 'chart_key']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'charts');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."chart_points";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "app"."chart_points" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('app', 'chart_points', ARRAY['token_slug', 'chart_key', 'x', 'series']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'chart_points');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."research_bundles";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "app"."research_bundles" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('app', 'research_bundles', ARRAY['token_slug']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'research_bundles');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."value_drivers";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "app"."value_drivers" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('app', 'value_drivers', ARRAY['token_slug', 'driver_id']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'value_drivers');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."value_driver_edges";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "app"."value_driver_edges" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('app', 'value_driver_edges', ARRAY['token_slug', 'from_driver_id', 'to_driver_id']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'value_driver_edges');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."token_functions";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "app"."token_functions" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('app', 'token_functions', ARRAY['token_slug', 'function_id']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'token_functions');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."tokens";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "gateway"."tokens" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('gateway', 'tokens', ARRAY['slug']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'tokens');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."screener_rows";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "gateway"."screener_rows" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('gateway', 'screener_rows', ARRAY['token_slug']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'screener_rows');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."screener_windows";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "gateway"."screener_windows" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('gateway', 'screener_windows', ARRAY['token_slug', 'window']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'screener_windows');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."screener_streams";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "gateway"."screener_streams" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('gateway', 'screener_streams', ARRAY['token_slug', 'stream_key']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'screener_streams');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."screener_unmatched";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "gateway"."screener_unmatched" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('gateway', 'screener_unmatched', ARRAY['row_key']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'screener_unmatched');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."screener_insights";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "gateway"."screener_insights" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('gateway', 'screener_insights', ARRAY['id']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'screener_insights');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."token_pages";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "gateway"."token_pages" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('gateway', 'token_pages', ARRAY['token_slug']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'token_pages');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."token_sections";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "gateway"."token_sections" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('gateway', 'token_sections', ARRAY['token_slug', 'section']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'token_sections');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."trend_points";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "gateway"."trend_points" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('gateway', 'trend_points', ARRAY['token_slug', 'period', 'series_key', 'ts']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'trend_points');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."charts";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "gateway"."charts" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('gateway', 'charts', ARRAY['token_slug', 'chart_key']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'charts');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."chart_timeframes";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "gateway"."chart_timeframes" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('gateway', 'chart_timeframes', ARRAY['token_slug', 'chart_key', 'timeframe']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'chart_timeframes');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."chart_series";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "gateway"."chart_series" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('gateway', 'chart_series', ARRAY['token_slug', 'chart_key', 'series_key']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'chart_series');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."chart_points";
--> statement-breakpoint
CREATE TRIGGER "keep_version" BEFORE UPDATE OR DELETE ON "gateway"."chart_points" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."enforce_versions"('gateway', 'chart_points', ARRAY['token_slug', 'chart_key', 'timeframe', 'ts', 'series_key']);
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'chart_points');
