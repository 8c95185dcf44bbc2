CREATE TABLE "facility_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"source" text NOT NULL,
	"external_id" text NOT NULL,
	"kind" text NOT NULL,
	"severity" text NOT NULL,
	"critical" boolean DEFAULT false NOT NULL,
	"rack_ids" uuid[] NOT NULL,
	"location" text,
	"message" text NOT NULL,
	"occurred_at" timestamp (3) with time zone,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"grading" jsonb NOT NULL,
	"state" text NOT NULL,
	"actions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"job_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL,
	"decision" text,
	"decided_by" text,
	"decided_at" timestamp (3) with time zone,
	"decision_reason" text,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "facility_events_kind_check" CHECK ("facility_events"."kind" in ('leak', 'power_feed', 'cooling', 'smoke', 'other')),
	CONSTRAINT "facility_events_severity_check" CHECK ("facility_events"."severity" in ('info', 'warning', 'critical')),
	CONSTRAINT "facility_events_state_check" CHECK ("facility_events"."state" in ('recorded', 'quarantined', 'awaiting_approval', 'powering_off', 'done', 'failed', 'rejected'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "facility_events_source_external_id_unique" ON "facility_events" USING btree ("source","external_id");--> statement-breakpoint
CREATE INDEX "facility_events_received_at_id_idx" ON "facility_events" USING btree ("received_at","id");--> statement-breakpoint
CREATE INDEX "facility_events_rack_ids_idx" ON "facility_events" USING gin ("rack_ids");--> statement-breakpoint
CREATE INDEX "facility_events_powering_off_idx" ON "facility_events" USING btree ("id") WHERE "facility_events"."state" = 'powering_off';