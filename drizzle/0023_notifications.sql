CREATE TABLE "sync"."alert_states" (
	"subject" text PRIMARY KEY NOT NULL,
	"state" text NOT NULL,
	"since" timestamp with time zone NOT NULL,
	"seen_at" timestamp with time zone NOT NULL,
	"figures" jsonb
);
--> statement-breakpoint
CREATE TABLE "sync"."notification_deliveries" (
	"endpoint" text NOT NULL,
	"notification_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"lease_until" timestamp with time zone,
	"last_attempt_at" timestamp with time zone,
	"delivered_at" timestamp with time zone,
	"last_http_status" integer,
	"last_error" text,
	"log" jsonb DEFAULT '[]'::jsonb NOT NULL,
	CONSTRAINT "notification_deliveries_endpoint_notification_id_pk" PRIMARY KEY("endpoint","notification_id")
);
--> statement-breakpoint
CREATE TABLE "sync"."notifications" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "sync"."notifications_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"type" text NOT NULL,
	"subject" text NOT NULL,
	"occurred_at" timestamp with time zone DEFAULT "sync"."server_clock"() NOT NULL,
	"source" text,
	"group" text,
	"run_id" uuid,
	"figures" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE INDEX "notification_deliveries_endpoint_seq_idx" ON "sync"."notification_deliveries" USING btree ("endpoint","status","seq");--> statement-breakpoint
CREATE INDEX "notifications_occurred_at_idx" ON "sync"."notifications" USING btree ("occurred_at");