CREATE TABLE "campaigns" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"site_id" text NOT NULL,
	"policy" jsonb NOT NULL,
	"plan" jsonb NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "device_firmware" (
	"device_id" uuid NOT NULL,
	"component_id" text NOT NULL,
	"version" text NOT NULL,
	"observed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"job_id" uuid,
	CONSTRAINT "device_firmware_device_id_component_id_pk" PRIMARY KEY("device_id","component_id")
);
--> statement-breakpoint
CREATE TABLE "firmware_manifests" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"hardware_type" text NOT NULL,
	"steps" jsonb NOT NULL,
	"is_default" boolean DEFAULT false NOT NULL,
	"revision" integer DEFAULT 1 NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "firmware_packages" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"digest" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"file_name" text NOT NULL,
	"format" text NOT NULL,
	"package_version" text NOT NULL,
	"metadata" jsonb NOT NULL,
	"uploaded_by" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "maintenance_windows" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"site_id" text NOT NULL,
	"weekdays" jsonb NOT NULL,
	"start_minute" integer NOT NULL,
	"duration_minutes" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "intents" ADD COLUMN "payload" jsonb;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_id_jobs_id_fk" FOREIGN KEY ("id") REFERENCES "public"."jobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_firmware" ADD CONSTRAINT "device_firmware_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "maintenance_windows" ADD CONSTRAINT "maintenance_windows_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "campaigns_site_id_idx" ON "campaigns" USING btree ("site_id");--> statement-breakpoint
CREATE INDEX "campaigns_created_at_id_idx" ON "campaigns" USING btree ("created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "firmware_manifests_name_unique" ON "firmware_manifests" USING btree ("name");--> statement-breakpoint
CREATE UNIQUE INDEX "firmware_manifests_one_default_per_type" ON "firmware_manifests" USING btree ("hardware_type") WHERE "firmware_manifests"."is_default";--> statement-breakpoint
CREATE UNIQUE INDEX "firmware_packages_digest_unique" ON "firmware_packages" USING btree ("digest");--> statement-breakpoint
CREATE INDEX "maintenance_windows_site_id_idx" ON "maintenance_windows" USING btree ("site_id");