CREATE TABLE "sync"."run_counts" (
	"queue_prefix" text NOT NULL,
	"run_id" text NOT NULL,
	"planned" integer DEFAULT 0 NOT NULL,
	"pending" integer DEFAULT 0 NOT NULL,
	"done" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"deduplicated" integer DEFAULT 0 NOT NULL,
	"rows" bigint DEFAULT 0 NOT NULL,
	"by_group" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"failures" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "run_counts_queue_prefix_run_id_pk" PRIMARY KEY("queue_prefix","run_id")
);
--> statement-breakpoint
CREATE TABLE "sync"."run_jobs" (
	"queue_prefix" text NOT NULL,
	"run_id" text NOT NULL,
	"job_id" text NOT NULL,
	"settled" boolean DEFAULT false NOT NULL,
	CONSTRAINT "run_jobs_queue_prefix_run_id_job_id_pk" PRIMARY KEY("queue_prefix","run_id","job_id")
);
--> statement-breakpoint
CREATE INDEX "run_counts_expires_at_idx" ON "sync"."run_counts" USING btree ("expires_at");