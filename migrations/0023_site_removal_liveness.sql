CREATE TABLE "site_satellites" (
	"site_id" text PRIMARY KEY NOT NULL,
	"pollers" integer NOT NULL,
	"last_seen_at" timestamp with time zone,
	"checked_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "draining_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "drained_by" text;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "removed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "site_satellites" ADD CONSTRAINT "site_satellites_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE no action ON UPDATE no action;