DROP INDEX "devices_site_id_name_unique";--> statement-breakpoint
DROP INDEX "racks_site_id_name_unique";--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "redfish_system_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "devices_registered_site_id_name_unique" ON "devices" USING btree ("site_id","name") WHERE "devices"."netbox_id" is null and "devices"."deleted_at" is null;