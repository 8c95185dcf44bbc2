-- RMA cases (docs/day2.md, "RMA"): a device's failed part at its vendor, opened by a remediation that ran out of
-- steps or by an operator, closed by the device's revalidation with the serials before and after and the swap.
CREATE TABLE "rma_cases" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"device_id" uuid NOT NULL,
	"site_id" text NOT NULL,
	"state" text DEFAULT 'open' NOT NULL,
	"failed_part" text NOT NULL,
	"fault_class" text,
	"reason" text NOT NULL,
	"vendor_case_id" text,
	"opened_by" text NOT NULL,
	"job_id" uuid,
	"old_serials" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"new_serials" jsonb,
	"swap" jsonb,
	"history" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp (3) with time zone,
	CONSTRAINT "rma_cases_state_check" CHECK ("rma_cases"."state" in ('open', 'shipped', 'replaced', 'revalidating', 'closed')),
	CONSTRAINT "rma_cases_closed_at_check" CHECK (("rma_cases"."state" = 'closed') = ("rma_cases"."closed_at" is not null))
);
--> statement-breakpoint
ALTER TABLE "rma_cases" ADD CONSTRAINT "rma_cases_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "rma_cases_one_open_per_device" ON "rma_cases" USING btree ("device_id") WHERE "rma_cases"."state" <> 'closed';--> statement-breakpoint
CREATE UNIQUE INDEX "rma_cases_job_id_unique" ON "rma_cases" USING btree ("job_id") WHERE "rma_cases"."job_id" is not null;--> statement-breakpoint
CREATE INDEX "rma_cases_created_at_id_idx" ON "rma_cases" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "rma_cases_device_id_idx" ON "rma_cases" USING btree ("device_id");