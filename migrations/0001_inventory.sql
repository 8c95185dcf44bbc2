CREATE TABLE "interfaces" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"device_id" uuid NOT NULL,
	"name" text NOT NULL,
	"type" text,
	"mac_address" text,
	"mgmt_only" boolean DEFAULT false NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"netbox_id" integer,
	"netbox_last_updated" timestamp with time zone,
	"last_synced_at" timestamp with time zone,
	CONSTRAINT "interfaces_netbox_id_unique" UNIQUE("netbox_id")
);
--> statement-breakpoint
CREATE TABLE "inventory_issues" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"object_type" text NOT NULL,
	"netbox_id" integer NOT NULL,
	"device_id" uuid,
	"code" text NOT NULL,
	"message" text NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "ip_addresses" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"address" text NOT NULL,
	"status" text,
	"dns_name" text,
	"interface_id" uuid,
	"device_id" uuid,
	"netbox_id" integer,
	"netbox_last_updated" timestamp with time zone,
	"last_synced_at" timestamp with time zone,
	CONSTRAINT "ip_addresses_netbox_id_unique" UNIQUE("netbox_id")
);
--> statement-breakpoint
CREATE TABLE "racks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"site_id" text NOT NULL,
	"name" text NOT NULL,
	"rack_type" text,
	"status" text,
	"u_height" integer DEFAULT 48 NOT NULL,
	"serial" text,
	"netbox_id" integer,
	"netbox_last_updated" timestamp with time zone,
	"last_synced_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "racks_netbox_id_unique" UNIQUE("netbox_id")
);
--> statement-breakpoint
CREATE TABLE "sync_state" (
	"scope" text PRIMARY KEY NOT NULL,
	"watermark" timestamp with time zone,
	"change_watermark" timestamp with time zone,
	"last_full_sync_at" timestamp with time zone,
	"last_success_at" timestamp with time zone,
	"last_attempt_at" timestamp with time zone,
	"last_error" text,
	"stale" boolean DEFAULT true NOT NULL,
	"source_url" text,
	"counts" jsonb
);
--> statement-breakpoint
ALTER TABLE "devices" DROP CONSTRAINT "devices_name_unique";--> statement-breakpoint
ALTER TABLE "devices" ALTER COLUMN "node_type" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "devices" ALTER COLUMN "bmc_url" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "devices" ALTER COLUMN "credential_ref" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "rack_id" uuid;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "position" numeric;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "face" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "u_height" numeric;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "role" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "vendor" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "model" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "platform" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "serial" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "lifecycle_state" text DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "management_profile" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "firmware_version" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "oob_ip_netbox_id" integer;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "netbox_id" integer;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "netbox_last_updated" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "last_synced_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "deleted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "status" text;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "netbox_id" integer;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "netbox_last_updated" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "last_synced_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "deleted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "interfaces" ADD CONSTRAINT "interfaces_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "inventory_issues" ADD CONSTRAINT "inventory_issues_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ip_addresses" ADD CONSTRAINT "ip_addresses_interface_id_interfaces_id_fk" FOREIGN KEY ("interface_id") REFERENCES "public"."interfaces"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ip_addresses" ADD CONSTRAINT "ip_addresses_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "racks" ADD CONSTRAINT "racks_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "interfaces_device_id_idx" ON "interfaces" USING btree ("device_id");--> statement-breakpoint
CREATE UNIQUE INDEX "inventory_issues_open_unique" ON "inventory_issues" USING btree ("object_type","netbox_id","code") WHERE "inventory_issues"."resolved_at" is null;--> statement-breakpoint
CREATE INDEX "inventory_issues_device_id_idx" ON "inventory_issues" USING btree ("device_id");--> statement-breakpoint
CREATE INDEX "ip_addresses_interface_id_idx" ON "ip_addresses" USING btree ("interface_id");--> statement-breakpoint
CREATE INDEX "ip_addresses_device_id_idx" ON "ip_addresses" USING btree ("device_id");--> statement-breakpoint
CREATE INDEX "ip_addresses_address_idx" ON "ip_addresses" USING btree ("address");--> statement-breakpoint
CREATE INDEX "racks_site_id_idx" ON "racks" USING btree ("site_id");--> statement-breakpoint
CREATE UNIQUE INDEX "racks_site_id_name_unique" ON "racks" USING btree ("site_id","name");--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_rack_id_racks_id_fk" FOREIGN KEY ("rack_id") REFERENCES "public"."racks"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "devices_site_id_name_unique" ON "devices" USING btree ("site_id","name");--> statement-breakpoint
CREATE INDEX "devices_rack_id_idx" ON "devices" USING btree ("rack_id");--> statement-breakpoint
CREATE INDEX "devices_role_idx" ON "devices" USING btree ("role");--> statement-breakpoint
CREATE INDEX "devices_vendor_idx" ON "devices" USING btree ("vendor");--> statement-breakpoint
CREATE INDEX "devices_model_idx" ON "devices" USING btree ("model");--> statement-breakpoint
CREATE INDEX "devices_node_type_idx" ON "devices" USING btree ("node_type");--> statement-breakpoint
CREATE INDEX "devices_lifecycle_state_idx" ON "devices" USING btree ("lifecycle_state");--> statement-breakpoint
CREATE INDEX "devices_power_state_idx" ON "devices" USING btree ("power_state");--> statement-breakpoint
CREATE INDEX "devices_firmware_version_idx" ON "devices" USING btree ("firmware_version");--> statement-breakpoint
CREATE INDEX "devices_created_at_id_idx" ON "devices" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "devices_name_id_idx" ON "devices" USING btree ("name","id");--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_netbox_id_unique" UNIQUE("netbox_id");--> statement-breakpoint
ALTER TABLE "sites" ADD CONSTRAINT "sites_netbox_id_unique" UNIQUE("netbox_id");