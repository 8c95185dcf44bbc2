ALTER TABLE "jobs" ADD COLUMN "rack_id" uuid;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "timeline" jsonb;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_rack_id_racks_id_fk" FOREIGN KEY ("rack_id") REFERENCES "public"."racks"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_one_active_rack_sequence" ON "jobs" USING btree ("rack_id") WHERE "jobs"."rack_id" is not null and "jobs"."kind" in ('rack.power', 'rack.cold_reboot') and "jobs"."state" in ('queued', 'running', 'cancelling');--> statement-breakpoint
CREATE INDEX "jobs_rack_id_idx" ON "jobs" USING btree ("rack_id");