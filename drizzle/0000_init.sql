CREATE SCHEMA "sync";
--> statement-breakpoint
CREATE SCHEMA "app";
--> statement-breakpoint
CREATE SCHEMA "gateway";
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
CREATE UNIQUE INDEX "raw_responses_source_path_sha256_key" ON "sync"."raw_responses" USING btree ("source","path","sha256");--> statement-breakpoint
CREATE INDEX "raw_responses_fetched_at_idx" ON "sync"."raw_responses" USING btree ("fetched_at");--> statement-breakpoint
CREATE INDEX "requests_run_id_idx" ON "sync"."requests" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "requests_started_at_idx" ON "sync"."requests" USING btree ("started_at");--> statement-breakpoint
CREATE INDEX "runs_started_at_idx" ON "sync"."runs" USING btree ("started_at");