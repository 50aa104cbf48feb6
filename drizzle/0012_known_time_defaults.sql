ALTER TABLE "app"."chart_points" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."charts" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."metric_history" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."metric_values" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."metrics" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."research_bundles" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."screener_daily" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."screener_rows" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."token_functions" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."token_snapshots" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."token_snapshots_daily" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."token_streams" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."tokens" ALTER COLUMN "first_seen_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."tokens" ALTER COLUMN "last_seen_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."tokens" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."value_driver_edges" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."value_drivers" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."chart_points" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."chart_series" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."chart_timeframes" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."charts" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."screener_daily" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."screener_insights" ALTER COLUMN "first_seen_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."screener_insights" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."screener_rows" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."screener_streams" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."screener_unmatched" ALTER COLUMN "first_seen_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."screener_unmatched" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."screener_windows" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."token_pages" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."token_sections" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."tokens" ALTER COLUMN "first_seen_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."tokens" ALTER COLUMN "last_seen_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."tokens" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "gateway"."trend_points" ALTER COLUMN "fetched_at" SET DEFAULT "sync"."known_at"();--> statement-breakpoint
ALTER TABLE "app"."chart_points_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "app"."charts_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway"."chart_points_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway"."chart_series_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway"."chart_timeframes_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway"."charts_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway"."screener_insights_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway"."screener_rows_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway"."screener_streams_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway"."screener_unmatched_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway"."screener_windows_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway"."token_pages_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway"."token_sections_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway"."tokens_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "gateway"."trend_points_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "app"."metric_history_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "app"."metric_values_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "app"."metrics_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "app"."research_bundles_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "app"."screener_rows_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "app"."token_functions_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "app"."token_snapshots_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "app"."token_streams_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "app"."tokens_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "app"."value_driver_edges_history" ADD COLUMN "closing_raw_response_id" bigint;--> statement-breakpoint
ALTER TABLE "app"."value_drivers_history" ADD COLUMN "closing_raw_response_id" bigint;