CREATE TABLE "sync"."archive_days" (
	"archive" text NOT NULL,
	"day" date NOT NULL,
	"rows" bigint NOT NULL,
	"writer" "xid8" NOT NULL,
	CONSTRAINT "archive_days_archive_day_pk" PRIMARY KEY("archive","day")
);
