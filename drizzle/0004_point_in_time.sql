CREATE TABLE "app"."chart_points_history" (
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
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."charts_history" (
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
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway"."chart_points_history" (
	"token_slug" text NOT NULL,
	"chart_key" text NOT NULL,
	"timeframe" text NOT NULL,
	"ts" timestamp with time zone NOT NULL,
	"series_key" text NOT NULL,
	"value" numeric,
	"payload" jsonb,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway"."chart_series_history" (
	"token_slug" text NOT NULL,
	"chart_key" text NOT NULL,
	"series_key" text NOT NULL,
	"label" text,
	"render" text,
	"declared" boolean NOT NULL,
	"payload" jsonb,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway"."chart_timeframes_history" (
	"token_slug" text NOT NULL,
	"chart_key" text NOT NULL,
	"timeframe" text NOT NULL,
	"type" text,
	"current_timeframe" text,
	"title" text,
	"data_from" timestamp with time zone,
	"data_through" timestamp with time zone,
	"row_count" integer,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway"."charts_history" (
	"token_slug" text NOT NULL,
	"chart_key" text NOT NULL,
	"title" text,
	"timeframes" text[],
	"mirrored_timeframes" text[],
	"timeframe_substitutions" jsonb,
	"data_path" text,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway"."screener_insights_history" (
	"id" text NOT NULL,
	"type" text,
	"title" text,
	"token_slug" text,
	"value" numeric,
	"window" text,
	"generated_at" timestamp with time zone,
	"first_seen_at" timestamp with time zone NOT NULL,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway"."screener_rows_history" (
	"token_slug" text NOT NULL,
	"symbol" text,
	"name" text,
	"matched_by" text,
	"price_usd" numeric,
	"mcap" numeric,
	"eff_mcap" numeric,
	"eff_ratio" numeric,
	"rev_annualized" numeric,
	"mult_annualized" numeric,
	"fcf_momentum" numeric,
	"data_freshness" text,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway"."screener_streams_history" (
	"token_slug" text NOT NULL,
	"stream_key" text NOT NULL,
	"label" text,
	"rev" numeric,
	"share_pct" numeric,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway"."screener_unmatched_history" (
	"row_key" text NOT NULL,
	"symbol" text,
	"name" text,
	"reason" text NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway"."screener_windows_history" (
	"token_slug" text NOT NULL,
	"window" text NOT NULL,
	"rev" numeric,
	"mult" numeric,
	"payload" jsonb,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway"."token_pages_history" (
	"token_slug" text NOT NULL,
	"token_id" bigint,
	"symbol" text,
	"name" text,
	"chain" text,
	"protocol_type" text,
	"price_usd" numeric,
	"image_url" text,
	"combined_annualized" numeric,
	"combined_all_time" numeric,
	"combined_delta_pct" numeric,
	"combined_delta_abs" numeric,
	"kpis" jsonb,
	"revenue_functions" jsonb,
	"fundamentals" jsonb,
	"methodology" jsonb,
	"verification" jsonb,
	"chart_defs" jsonb,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway"."token_sections_history" (
	"token_slug" text NOT NULL,
	"section" text NOT NULL,
	"supported" boolean,
	"state" text,
	"reason" text,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway"."tokens_history" (
	"slug" text NOT NULL,
	"symbol" text,
	"name" text,
	"href" text,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"delisted_at" timestamp with time zone,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gateway"."trend_points_history" (
	"token_slug" text NOT NULL,
	"period" text NOT NULL,
	"series_key" text NOT NULL,
	"ts" timestamp with time zone NOT NULL,
	"value" numeric,
	"payload" jsonb,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."metric_history_history" (
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
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."metric_values_history" (
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
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."metrics_history" (
	"slug" text NOT NULL,
	"unit" text,
	"kind" text,
	"group" text,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."research_bundles_history" (
	"token_slug" text NOT NULL,
	"missing_scope" text,
	"summary" text,
	"problem_code" text,
	"payload" jsonb,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."screener_rows_history" (
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
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."token_functions_history" (
	"token_slug" text NOT NULL,
	"function_id" text NOT NULL,
	"type" text,
	"description" text,
	"parent_id" text,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."token_snapshots_history" (
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
	"generated_at" timestamp with time zone,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."token_streams_history" (
	"token_slug" text NOT NULL,
	"stream_key" text NOT NULL,
	"label" text,
	"mix_percent_label" text,
	"annualized_revenue" numeric,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."tokens_history" (
	"slug" text NOT NULL,
	"display_name" text,
	"symbol" text,
	"image_url" text,
	"coverage_screener" boolean NOT NULL,
	"coverage_snapshot" boolean NOT NULL,
	"coverage_metric_history" boolean NOT NULL,
	"coverage_trend" boolean NOT NULL,
	"coverage_charts" boolean NOT NULL,
	"coverage_backtests" boolean NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"delisted_at" timestamp with time zone,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."value_driver_edges_history" (
	"token_slug" text NOT NULL,
	"from_driver_id" text NOT NULL,
	"to_driver_id" text NOT NULL,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "app"."value_drivers_history" (
	"token_slug" text NOT NULL,
	"driver_id" text NOT NULL,
	"type" text,
	"description" text,
	"formula" text,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text NOT NULL,
	"run_id" uuid,
	"known_from" timestamp with time zone NOT NULL,
	"known_to" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "chart_points_history_key_idx" ON "app"."chart_points_history" USING btree ("token_slug","chart_key","x","series","known_from");--> statement-breakpoint
CREATE INDEX "charts_history_key_idx" ON "app"."charts_history" USING btree ("token_slug","chart_key","known_from");--> statement-breakpoint
CREATE INDEX "chart_points_history_key_idx" ON "gateway"."chart_points_history" USING btree ("token_slug","chart_key","timeframe","ts","series_key","known_from");--> statement-breakpoint
CREATE INDEX "chart_series_history_key_idx" ON "gateway"."chart_series_history" USING btree ("token_slug","chart_key","series_key","known_from");--> statement-breakpoint
CREATE INDEX "chart_timeframes_history_key_idx" ON "gateway"."chart_timeframes_history" USING btree ("token_slug","chart_key","timeframe","known_from");--> statement-breakpoint
CREATE INDEX "charts_history_key_idx" ON "gateway"."charts_history" USING btree ("token_slug","chart_key","known_from");--> statement-breakpoint
CREATE INDEX "screener_insights_history_key_idx" ON "gateway"."screener_insights_history" USING btree ("id","known_from");--> statement-breakpoint
CREATE INDEX "screener_rows_history_key_idx" ON "gateway"."screener_rows_history" USING btree ("token_slug","known_from");--> statement-breakpoint
CREATE INDEX "screener_streams_history_key_idx" ON "gateway"."screener_streams_history" USING btree ("token_slug","stream_key","known_from");--> statement-breakpoint
CREATE INDEX "screener_unmatched_history_key_idx" ON "gateway"."screener_unmatched_history" USING btree ("row_key","known_from");--> statement-breakpoint
CREATE INDEX "screener_windows_history_key_idx" ON "gateway"."screener_windows_history" USING btree ("token_slug","window","known_from");--> statement-breakpoint
CREATE INDEX "token_pages_history_key_idx" ON "gateway"."token_pages_history" USING btree ("token_slug","known_from");--> statement-breakpoint
CREATE INDEX "token_sections_history_key_idx" ON "gateway"."token_sections_history" USING btree ("token_slug","section","known_from");--> statement-breakpoint
CREATE INDEX "tokens_history_key_idx" ON "gateway"."tokens_history" USING btree ("slug","known_from");--> statement-breakpoint
CREATE INDEX "trend_points_history_key_idx" ON "gateway"."trend_points_history" USING btree ("token_slug","period","series_key","ts","known_from");--> statement-breakpoint
CREATE INDEX "metric_history_history_key_idx" ON "app"."metric_history_history" USING btree ("token_slug","stream","metric","ts","known_from");--> statement-breakpoint
CREATE INDEX "metric_values_history_key_idx" ON "app"."metric_values_history" USING btree ("token_slug","surface","path","known_from");--> statement-breakpoint
CREATE INDEX "metrics_history_key_idx" ON "app"."metrics_history" USING btree ("slug","known_from");--> statement-breakpoint
CREATE INDEX "research_bundles_history_key_idx" ON "app"."research_bundles_history" USING btree ("token_slug","known_from");--> statement-breakpoint
CREATE INDEX "screener_rows_history_key_idx" ON "app"."screener_rows_history" USING btree ("token_slug","known_from");--> statement-breakpoint
CREATE INDEX "token_functions_history_key_idx" ON "app"."token_functions_history" USING btree ("token_slug","function_id","known_from");--> statement-breakpoint
CREATE INDEX "token_snapshots_history_key_idx" ON "app"."token_snapshots_history" USING btree ("token_slug","known_from");--> statement-breakpoint
CREATE INDEX "token_streams_history_key_idx" ON "app"."token_streams_history" USING btree ("token_slug","stream_key","known_from");--> statement-breakpoint
CREATE INDEX "tokens_history_key_idx" ON "app"."tokens_history" USING btree ("slug","known_from");--> statement-breakpoint
CREATE INDEX "value_driver_edges_history_key_idx" ON "app"."value_driver_edges_history" USING btree ("token_slug","from_driver_id","to_driver_id","known_from");--> statement-breakpoint
CREATE INDEX "value_drivers_history_key_idx" ON "app"."value_drivers_history" USING btree ("token_slug","driver_id","known_from");