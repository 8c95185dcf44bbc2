-- Health observation (docs/day2.md): the last reading each site's observer delivered per device, and the Healthy
-- condition of the health axis (written by the satellite, as BMCReachable and CredentialsVerified are).
CREATE TABLE "device_health" (
	"device_id" uuid PRIMARY KEY NOT NULL,
	"reachable" boolean NOT NULL,
	"credentials_ok" boolean,
	"power_state" text,
	"faults" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"observed_at" timestamp (3) with time zone NOT NULL,
	"changed_at" timestamp (3) with time zone NOT NULL,
	"observations" integer DEFAULT 1 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "device_conditions" DROP CONSTRAINT "device_conditions_type_check";--> statement-breakpoint
ALTER TABLE "device_transitions" DROP CONSTRAINT "device_transitions_condition_type_check";--> statement-breakpoint
ALTER TABLE "device_health" ADD CONSTRAINT "device_health_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "device_health_faulty_idx" ON "device_health" USING btree ("changed_at") WHERE jsonb_array_length("device_health"."faults") > 0;--> statement-breakpoint
ALTER TABLE "device_conditions" ADD CONSTRAINT "device_conditions_type_check" CHECK ("device_conditions"."type" in ('BMCReachable', 'CredentialsVerified', 'InventoryMatchesProfile', 'FirmwareCompliant', 'BurnInPassed', 'Schedulable', 'Healthy'));--> statement-breakpoint
ALTER TABLE "device_transitions" ADD CONSTRAINT "device_transitions_condition_type_check" CHECK ("device_transitions"."condition_type" is null or "device_transitions"."condition_type" in ('BMCReachable', 'CredentialsVerified', 'InventoryMatchesProfile', 'FirmwareCompliant', 'BurnInPassed', 'Schedulable', 'Healthy'));