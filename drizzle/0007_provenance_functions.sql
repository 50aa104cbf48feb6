CREATE OR REPLACE FUNCTION "sync"."keep_version"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  known_to timestamptz;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    known_to := NEW.fetched_at;
  ELSE
    known_to := coalesce(nullif(current_setting('tesync.known_at', true), '')::timestamptz, now());
  END IF;
  -- A version that held for no time (written and replaced by one response) is no version.
  IF known_to <= OLD.fetched_at THEN
    RETURN NULL;
  END IF;
  EXECUTE format('INSERT INTO %I.%I SELECT * FROM jsonb_populate_record(NULL::%I.%I, $1)', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_history', TG_TABLE_SCHEMA, TG_TABLE_NAME || '_history')
    USING to_jsonb(OLD) || jsonb_build_object('known_from', OLD.fetched_at, 'known_to', known_to);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "sync"."create_as_of"(schema_name text, table_name text) RETURNS void LANGUAGE plpgsql AS $create$
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
$create$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."metrics";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "app"."metrics" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'metrics');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."tokens";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "app"."tokens" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'tokens');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."screener_rows";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "app"."screener_rows" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'screener_rows');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."token_snapshots";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "app"."token_snapshots" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'token_snapshots');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."metric_values";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "app"."metric_values" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'metric_values');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."token_streams";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "app"."token_streams" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'token_streams');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."metric_history";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "app"."metric_history" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'metric_history');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."charts";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "app"."charts" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'charts');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."chart_points";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "app"."chart_points" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'chart_points');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."research_bundles";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "app"."research_bundles" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'research_bundles');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."value_drivers";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "app"."value_drivers" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'value_drivers');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."value_driver_edges";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "app"."value_driver_edges" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'value_driver_edges');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "app"."token_functions";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "app"."token_functions" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('app', 'token_functions');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."tokens";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "gateway"."tokens" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'tokens');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."screener_rows";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "gateway"."screener_rows" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'screener_rows');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."screener_windows";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "gateway"."screener_windows" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'screener_windows');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."screener_streams";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "gateway"."screener_streams" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'screener_streams');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."screener_unmatched";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "gateway"."screener_unmatched" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'screener_unmatched');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."screener_insights";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "gateway"."screener_insights" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'screener_insights');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."token_pages";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "gateway"."token_pages" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'token_pages');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."token_sections";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "gateway"."token_sections" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'token_sections');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."trend_points";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "gateway"."trend_points" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'trend_points');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."charts";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "gateway"."charts" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'charts');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."chart_timeframes";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "gateway"."chart_timeframes" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'chart_timeframes');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."chart_series";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "gateway"."chart_series" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'chart_series');
--> statement-breakpoint
DROP TRIGGER IF EXISTS "keep_version" ON "gateway"."chart_points";
--> statement-breakpoint
CREATE TRIGGER "keep_version" AFTER UPDATE OR DELETE ON "gateway"."chart_points" FOR EACH ROW EXECUTE FUNCTION "sync"."keep_version"();
--> statement-breakpoint
SELECT "sync"."create_as_of"('gateway', 'chart_points');
