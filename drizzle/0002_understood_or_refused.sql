CREATE TABLE "sync"."resource_fields" (
	"source" text NOT NULL,
	"kind" text NOT NULL,
	"field" text NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"first_run_id" uuid NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"last_seen_run_id" uuid NOT NULL,
	"removed_at" timestamp with time zone,
	CONSTRAINT "resource_fields_source_kind_field_pk" PRIMARY KEY("source","kind","field")
);
--> statement-breakpoint
CREATE TABLE "sync"."resource_kinds" (
	"source" text NOT NULL,
	"kind" text NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"baseline_run_id" uuid NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"recent_run_ids" uuid[] NOT NULL,
	CONSTRAINT "resource_kinds_source_kind_pk" PRIMARY KEY("source","kind")
);
--> statement-breakpoint
ALTER TABLE "sync"."contract_changes" ALTER COLUMN "path" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "sync"."contract_changes" ALTER COLUMN "sha256" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "sync"."contract_changes" ADD COLUMN "change" text DEFAULT 'openapi' NOT NULL;--> statement-breakpoint
ALTER TABLE "sync"."contract_changes" ADD COLUMN "kind" text;--> statement-breakpoint
ALTER TABLE "sync"."contract_changes" ADD COLUMN "added_fields" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "sync"."contract_changes" ADD COLUMN "removed_fields" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "app"."token_snapshots" ADD COLUMN "generated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "app"."token_snapshots_daily" ADD COLUMN "generated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "gateway"."charts" ADD COLUMN "mirrored_timeframes" text[];--> statement-breakpoint
ALTER TABLE "gateway"."charts" ADD COLUMN "timeframe_substitutions" jsonb;--> statement-breakpoint
CREATE INDEX "contract_changes_kind_idx" ON "sync"."contract_changes" USING btree ("source","kind");