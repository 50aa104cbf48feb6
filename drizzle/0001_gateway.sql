CREATE TABLE "gateway"."chart_points" (
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
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "chart_points_token_slug_chart_key_timeframe_ts_series_key_pk" PRIMARY KEY("token_slug","chart_key","timeframe","ts","series_key")
);
--> statement-breakpoint
CREATE TABLE "gateway"."chart_series" (
	"token_slug" text NOT NULL,
	"chart_key" text NOT NULL,
	"series_key" text NOT NULL,
	"label" text,
	"render" text,
	"declared" boolean DEFAULT true NOT NULL,
	"payload" jsonb,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "chart_series_token_slug_chart_key_series_key_pk" PRIMARY KEY("token_slug","chart_key","series_key")
);
--> statement-breakpoint
CREATE TABLE "gateway"."chart_timeframes" (
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
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "chart_timeframes_token_slug_chart_key_timeframe_pk" PRIMARY KEY("token_slug","chart_key","timeframe")
);
--> statement-breakpoint
CREATE TABLE "gateway"."charts" (
	"token_slug" text NOT NULL,
	"chart_key" text NOT NULL,
	"title" text,
	"timeframes" text[],
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
CREATE TABLE "gateway"."screener_daily" (
	"snapshot_date" date NOT NULL,
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
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "screener_daily_snapshot_date_token_slug_pk" PRIMARY KEY("snapshot_date","token_slug")
);
--> statement-breakpoint
CREATE TABLE "gateway"."screener_insights" (
	"id" text PRIMARY KEY NOT NULL,
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
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid
);
--> statement-breakpoint
CREATE TABLE "gateway"."screener_rows" (
	"token_slug" text PRIMARY KEY NOT NULL,
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
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid
);
--> statement-breakpoint
CREATE TABLE "gateway"."screener_streams" (
	"token_slug" text NOT NULL,
	"stream_key" text NOT NULL,
	"label" text,
	"rev" numeric,
	"share_pct" numeric,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "screener_streams_token_slug_stream_key_pk" PRIMARY KEY("token_slug","stream_key")
);
--> statement-breakpoint
CREATE TABLE "gateway"."screener_unmatched" (
	"row_key" text PRIMARY KEY NOT NULL,
	"symbol" text,
	"name" text,
	"reason" text NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid
);
--> statement-breakpoint
CREATE TABLE "gateway"."screener_windows" (
	"token_slug" text NOT NULL,
	"window" text NOT NULL,
	"rev" numeric,
	"mult" numeric,
	"payload" jsonb,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "screener_windows_token_slug_window_pk" PRIMARY KEY("token_slug","window")
);
--> statement-breakpoint
CREATE TABLE "gateway"."token_pages" (
	"token_slug" text PRIMARY KEY NOT NULL,
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
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid
);
--> statement-breakpoint
CREATE TABLE "gateway"."token_sections" (
	"token_slug" text NOT NULL,
	"section" text NOT NULL,
	"supported" boolean,
	"state" text,
	"reason" text,
	"payload" jsonb NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "token_sections_token_slug_section_pk" PRIMARY KEY("token_slug","section")
);
--> statement-breakpoint
CREATE TABLE "gateway"."tokens" (
	"slug" text PRIMARY KEY NOT NULL,
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
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid
);
--> statement-breakpoint
CREATE TABLE "gateway"."trend_points" (
	"token_slug" text NOT NULL,
	"period" text NOT NULL,
	"series_key" text NOT NULL,
	"ts" timestamp with time zone NOT NULL,
	"value" numeric,
	"payload" jsonb,
	"fetched_at" timestamp with time zone NOT NULL,
	"as_of" timestamp with time zone,
	"freshness" text,
	"status" text DEFAULT 'ok' NOT NULL,
	"run_id" uuid,
	CONSTRAINT "trend_points_token_slug_period_series_key_ts_pk" PRIMARY KEY("token_slug","period","series_key","ts")
);
--> statement-breakpoint
CREATE INDEX "screener_insights_token_slug_idx" ON "gateway"."screener_insights" USING btree ("token_slug");