CREATE TABLE "device_conditions" (
	"device_id" uuid NOT NULL,
	"type" text NOT NULL,
	"status" text NOT NULL,
	"reason" text NOT NULL,
	"message" text DEFAULT '' NOT NULL,
	"last_transition_time" timestamp (3) with time zone NOT NULL,
	"observed_generation" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "device_conditions_device_id_type_pk" PRIMARY KEY("device_id","type"),
	CONSTRAINT "device_conditions_type_check" CHECK ("device_conditions"."type" in ('BMCReachable', 'CredentialsVerified', 'InventoryMatchesProfile', 'FirmwareCompliant', 'BurnInPassed', 'Schedulable')),
	CONSTRAINT "device_conditions_status_check" CHECK ("device_conditions"."status" in ('True', 'False', 'Unknown')),
	CONSTRAINT "device_conditions_reason_check" CHECK ("device_conditions"."reason" ~ '^[A-Z][A-Za-z0-9]*$')
);
--> statement-breakpoint
CREATE TABLE "device_transitions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"device_id" uuid NOT NULL,
	"axis" text NOT NULL,
	"condition_type" text,
	"from_state" text,
	"to_state" text NOT NULL,
	"writer" text NOT NULL,
	"job_id" uuid,
	"reason" text NOT NULL,
	"message" text,
	"at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "device_transitions_axis_writer_check" CHECK (("device_transitions"."axis", "device_transitions"."writer") in (('inventory', 'netbox-agent'), ('power', 'satellite'), ('health', 'satellite'), ('firmware', 'firmware-refresh'), ('burnin', 'burn-in-workflow'), ('lifecycle', 'lifecycle-workflow'))),
	CONSTRAINT "device_transitions_condition_type_check" CHECK ("device_transitions"."condition_type" is null or "device_transitions"."condition_type" in ('BMCReachable', 'CredentialsVerified', 'InventoryMatchesProfile', 'FirmwareCompliant', 'BurnInPassed', 'Schedulable')),
	CONSTRAINT "device_transitions_reason_check" CHECK ("device_transitions"."reason" ~ '^[A-Z][A-Za-z0-9]*$')
);
--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "fleet_lifecycle" text DEFAULT 'discovered' NOT NULL;--> statement-breakpoint
ALTER TABLE "device_conditions" ADD CONSTRAINT "device_conditions_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_transitions" ADD CONSTRAINT "device_transitions_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "device_transitions_device_id_id_idx" ON "device_transitions" USING btree ("device_id","id");--> statement-breakpoint
CREATE INDEX "device_transitions_job_id_idx" ON "device_transitions" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "devices_fleet_lifecycle_idx" ON "devices" USING btree ("fleet_lifecycle");--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_fleet_lifecycle_check" CHECK ("devices"."fleet_lifecycle" in ('discovered', 'enrolling', 'enrolled', 'burning_in', 'certified', 'in_service', 'failed', 'quarantined', 'remediating', 'rma', 'decommissioned'));