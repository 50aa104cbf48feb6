ALTER TABLE "sync"."resource_state" ADD COLUMN "error_type" text;--> statement-breakpoint
ALTER TABLE "sync"."resource_state" ADD COLUMN "error_code" text;--> statement-breakpoint
ALTER TABLE "sync"."resource_state" ADD COLUMN "http_status" integer;--> statement-breakpoint
ALTER TABLE "sync"."resource_state" ADD COLUMN "bucket" text;