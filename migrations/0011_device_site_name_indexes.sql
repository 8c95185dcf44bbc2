DROP INDEX "devices_site_id_idx";--> statement-breakpoint
CREATE INDEX "devices_site_id_name_id_idx" ON "devices" USING btree ("site_id","name","id");--> statement-breakpoint
CREATE INDEX "devices_site_id_role_name_id_idx" ON "devices" USING btree ("site_id","role","name","id");