CREATE TABLE "sync"."upstream_binding_log" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "sync"."upstream_binding_log_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"source" text NOT NULL,
	"event" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"from_upstream" text,
	"to_upstream" text NOT NULL,
	"command" text NOT NULL,
	"host" text
);
--> statement-breakpoint
CREATE TABLE "sync"."upstream_bindings" (
	"source" text PRIMARY KEY NOT NULL,
	"upstream" text NOT NULL,
	"scheme" text,
	"host" text,
	"port" integer,
	"path" text,
	"bound_at" timestamp with time zone DEFAULT now() NOT NULL,
	"event" text NOT NULL,
	"command" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "upstream_binding_log_source_at_idx" ON "sync"."upstream_binding_log" USING btree ("source","at");