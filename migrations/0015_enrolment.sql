-- Enrolment (docs/enrolment.md): the hardware an enrolment read from each BMC, and the rack guard extended to
-- rack enrolments (one rack sequence or enrolment per rack at a time).
CREATE TABLE "device_hardware" (
	"device_id" uuid PRIMARY KEY NOT NULL,
	"job_id" uuid,
	"read_at" timestamp (3) with time zone NOT NULL,
	"digest" text NOT NULL,
	"serial_number" text,
	"record" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "jobs_one_active_rack_sequence";--> statement-breakpoint
ALTER TABLE "device_hardware" ADD CONSTRAINT "device_hardware_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "device_hardware_serial_number_idx" ON "device_hardware" USING btree ("serial_number");--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_one_active_rack_sequence" ON "jobs" USING btree ("rack_id") WHERE "jobs"."rack_id" is not null and "jobs"."kind" in ('rack.power', 'rack.cold_reboot', 'rack.enrol') and "jobs"."state" in ('queued', 'running', 'cancelling');