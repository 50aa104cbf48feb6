CREATE TABLE "sync"."writes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "sync"."writes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"known_at" timestamp with time zone NOT NULL,
	"run_id" uuid,
	"source" text NOT NULL,
	"resource" text NOT NULL,
	"job" text NOT NULL,
	"payload" jsonb NOT NULL,
	"how" text NOT NULL,
	"bodies" bigint[] DEFAULT '{}'::bigint[] NOT NULL
);
--> statement-breakpoint
CREATE INDEX "writes_known_at_idx" ON "sync"."writes" USING btree ("known_at");