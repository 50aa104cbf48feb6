CREATE TABLE "sync"."rate_budgets" (
	"prefix" text NOT NULL,
	"bucket" text NOT NULL,
	"record" jsonb NOT NULL,
	"version" bigint NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"written_by" text NOT NULL,
	CONSTRAINT "rate_budgets_prefix_bucket_pk" PRIMARY KEY("prefix","bucket")
);
