CREATE SCHEMA "sync";
--> statement-breakpoint
CREATE SCHEMA "app";
--> statement-breakpoint
CREATE SCHEMA "gateway";
--> statement-breakpoint
CREATE TABLE "sync"."contract_changes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "sync"."contract_changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"run_id" uuid,
	"source" text NOT NULL,
	"path" text NOT NULL,
	"detected_at" timestamp with time zone NOT NULL,
	"previous_sha256" text,
	"sha256" text NOT NULL,
	"added_paths" text[] DEFAULT '{}'::text[] NOT NULL,
	"removed_paths" text[] DEFAULT '{}'::text[] NOT NULL,
	"details" jsonb
);
--> statement-breakpoint
CREATE TABLE "sync"."raw_responses" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "sync"."raw_responses_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"run_id" uuid,
	"source" text NOT NULL,
	"path" text NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"http_status" integer NOT NULL,
	"content_type" text,
	"sha256" text NOT NULL,
	"body" jsonb,
	"body_text" text,
	"status" text DEFAULT 'ok' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sync"."requests" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "sync"."requests_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"run_id" uuid,
	"source" text NOT NULL,
	"bucket" text,
	"method" text DEFAULT 'GET' NOT NULL,
	"path" text NOT NULL,
	"http_status" integer,
	"attempt" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"bytes" integer,
	"rate_limit_remaining" integer,
	"rate_limit_limit" integer,
	"retry_after_ms" integer,
	"problem_code" text,
	"request_id" text,
	"error" text
);
--> statement-breakpoint
CREATE TABLE "sync"."resource_state" (
	"source" text NOT NULL,
	"resource" text NOT NULL,
	"kind" text,
	"last_attempt_at" timestamp with time zone,
	"last_success_at" timestamp with time zone,
	"verified_at" timestamp with time zone,
	"status" text NOT NULL,
	"last_error" text,
	"last_run_id" uuid,
	"freshness" text,
	"as_of" timestamp with time zone,
	"hash" text,
	"etag" text,
	"row_count" integer,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"details" jsonb,
	"active" boolean DEFAULT true NOT NULL,
	CONSTRAINT "resource_state_source_resource_pk" PRIMARY KEY("source","resource")
);
--> statement-breakpoint
CREATE TABLE "sync"."runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"status" text DEFAULT 'running' NOT NULL,
	"trigger" text NOT NULL,
	"sources" text[] DEFAULT '{}'::text[] NOT NULL,
	"options" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"stats" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"error" text
);
--> statement-breakpoint
CREATE TABLE "app"."chart_points" (
	"token_slug" text NOT NULL,
	"chart_key" text NOT NULL,
	"x" text NOT NULL,
	"series" text NOT NULL,
	"ts" timestamp with time zone,
	"value" numeric,
	"unit" text,
	"kind" text,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "chart_points_token_slug_chart_key_x_series_pk" PRIMARY KEY("token_slug","chart_key","x","series")
);
--> statement-breakpoint
CREATE TABLE "app"."charts" (
	"token_slug" text NOT NULL,
	"chart_key" text NOT NULL,
	"title" text,
	"section" text,
	"row_count" integer,
	"data_path" text,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "charts_token_slug_chart_key_pk" PRIMARY KEY("token_slug","chart_key")
);
--> statement-breakpoint
CREATE TABLE "app"."metric_history" (
	"token_slug" text NOT NULL,
	"stream" text NOT NULL,
	"metric" text NOT NULL,
	"ts" timestamp with time zone NOT NULL,
	"interval" text,
	"value" numeric,
	"unit" text,
	"kind" text,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "metric_history_token_slug_stream_metric_ts_pk" PRIMARY KEY("token_slug","stream","metric","ts")
);
--> statement-breakpoint
CREATE TABLE "app"."metric_values" (
	"token_slug" text NOT NULL,
	"surface" text NOT NULL,
	"path" text NOT NULL,
	"metric" text,
	"value" numeric,
	"unit" text,
	"kind" text,
	"reason" text,
	"payload" jsonb,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "metric_values_token_slug_surface_path_pk" PRIMARY KEY("token_slug","surface","path")
);
--> statement-breakpoint
CREATE TABLE "app"."metrics" (
	"slug" text PRIMARY KEY NOT NULL,
	"unit" text,
	"kind" text,
	"group" text,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid
);
--> statement-breakpoint
CREATE TABLE "app"."research_bundles" (
	"token_slug" text PRIMARY KEY NOT NULL,
	"missing_scope" text,
	"summary" text,
	"problem_code" text,
	"payload" jsonb,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid
);
--> statement-breakpoint
CREATE TABLE "app"."screener_daily" (
	"snapshot_date" date NOT NULL,
	"token_slug" text NOT NULL,
	"effective_market_cap" numeric,
	"effective_ratio" numeric,
	"annualized_revenue" numeric,
	"multiple_7d" numeric,
	"multiple_30d" numeric,
	"multiple_90d" numeric,
	"multiple_180d" numeric,
	"multiple_365d" numeric,
	"display_name" text,
	"symbol" text,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "screener_daily_snapshot_date_token_slug_pk" PRIMARY KEY("snapshot_date","token_slug")
);
--> statement-breakpoint
CREATE TABLE "app"."screener_rows" (
	"token_slug" text PRIMARY KEY NOT NULL,
	"effective_market_cap" numeric,
	"effective_ratio" numeric,
	"annualized_revenue" numeric,
	"multiple_7d" numeric,
	"multiple_30d" numeric,
	"multiple_90d" numeric,
	"multiple_180d" numeric,
	"multiple_365d" numeric,
	"display_name" text,
	"symbol" text,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid
);
--> statement-breakpoint
CREATE TABLE "app"."token_functions" (
	"token_slug" text NOT NULL,
	"function_id" text NOT NULL,
	"type" text,
	"description" text,
	"parent_id" text,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "token_functions_token_slug_function_id_pk" PRIMARY KEY("token_slug","function_id")
);
--> statement-breakpoint
CREATE TABLE "app"."token_snapshots" (
	"token_slug" text PRIMARY KEY NOT NULL,
	"display_name" text,
	"symbol" text,
	"effective_market_cap" numeric,
	"annualized_revenue" numeric,
	"combined_revenue_annualized" numeric,
	"fdv_to_revenue" numeric,
	"multiple_30d" numeric,
	"multiple_365d" numeric,
	"sections" jsonb,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid
);
--> statement-breakpoint
CREATE TABLE "app"."token_snapshots_daily" (
	"snapshot_date" date NOT NULL,
	"token_slug" text NOT NULL,
	"display_name" text,
	"symbol" text,
	"effective_market_cap" numeric,
	"annualized_revenue" numeric,
	"combined_revenue_annualized" numeric,
	"fdv_to_revenue" numeric,
	"multiple_30d" numeric,
	"multiple_365d" numeric,
	"sections" jsonb,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "token_snapshots_daily_snapshot_date_token_slug_pk" PRIMARY KEY("snapshot_date","token_slug")
);
--> statement-breakpoint
CREATE TABLE "app"."token_streams" (
	"token_slug" text NOT NULL,
	"stream_key" text NOT NULL,
	"label" text,
	"mix_percent_label" text,
	"annualized_revenue" numeric,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "token_streams_token_slug_stream_key_pk" PRIMARY KEY("token_slug","stream_key")
);
--> statement-breakpoint
CREATE TABLE "app"."tokens" (
	"slug" text PRIMARY KEY NOT NULL,
	"display_name" text,
	"symbol" text,
	"image_url" text,
	"coverage_screener" boolean DEFAULT false NOT NULL,
	"coverage_snapshot" boolean DEFAULT false NOT NULL,
	"coverage_metric_history" boolean DEFAULT false NOT NULL,
	"coverage_trend" boolean DEFAULT false NOT NULL,
	"coverage_charts" boolean DEFAULT false NOT NULL,
	"coverage_backtests" boolean DEFAULT false NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"delisted_at" timestamp with time zone,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid
);
--> statement-breakpoint
CREATE TABLE "app"."value_driver_edges" (
	"token_slug" text NOT NULL,
	"from_driver_id" text NOT NULL,
	"to_driver_id" text NOT NULL,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "value_driver_edges_token_slug_from_driver_id_to_driver_id_pk" PRIMARY KEY("token_slug","from_driver_id","to_driver_id")
);
--> statement-breakpoint
CREATE TABLE "app"."value_drivers" (
	"token_slug" text NOT NULL,
	"driver_id" text NOT NULL,
	"type" text,
	"description" text,
	"formula" text,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "value_drivers_token_slug_driver_id_pk" PRIMARY KEY("token_slug","driver_id")
);
--> statement-breakpoint
CREATE INDEX "contract_changes_detected_at_idx" ON "sync"."contract_changes" USING btree ("detected_at");--> statement-breakpoint
CREATE UNIQUE INDEX "raw_responses_source_path_sha256_key" ON "sync"."raw_responses" USING btree ("source","path","sha256");--> statement-breakpoint
CREATE INDEX "raw_responses_fetched_at_idx" ON "sync"."raw_responses" USING btree ("fetched_at");--> statement-breakpoint
CREATE INDEX "requests_run_id_idx" ON "sync"."requests" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "requests_started_at_idx" ON "sync"."requests" USING btree ("started_at");--> statement-breakpoint
CREATE INDEX "runs_started_at_idx" ON "sync"."runs" USING btree ("started_at");--> statement-breakpoint
CREATE INDEX "metric_values_metric_idx" ON "app"."metric_values" USING btree ("metric");