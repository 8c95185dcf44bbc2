-- Stuck-state SLAs (docs/sla.md): breaches the workflow agent's watch finds (one open per object and key), the stage
-- each watched job shows since when, and the webhook outbox (one delivery per breach, webhook and event).
CREATE TABLE "sla_breaches" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"object_type" text NOT NULL,
	"object_id" uuid NOT NULL,
	"object_name" text,
	"site_id" text,
	"sla_key" text NOT NULL,
	"state" text NOT NULL,
	"job_kind" text,
	"limit_s" integer NOT NULL,
	"since" timestamp (3) with time zone NOT NULL,
	"breached_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp (3) with time zone,
	"resolution" text,
	CONSTRAINT "sla_breaches_object_type_check" CHECK ("sla_breaches"."object_type" in ('device', 'job', 'campaign')),
	CONSTRAINT "sla_breaches_resolution_check" CHECK (("sla_breaches"."resolved_at" is null and "sla_breaches"."resolution" is null) or "sla_breaches"."resolution" in ('cleared', 'unwatched'))
);
--> statement-breakpoint
CREATE TABLE "sla_job_stages" (
	"job_id" uuid PRIMARY KEY NOT NULL,
	"stage" text NOT NULL,
	"since" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"breach_id" uuid NOT NULL,
	"webhook" text NOT NULL,
	"event" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_status" integer,
	"last_error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp (3) with time zone,
	CONSTRAINT "webhook_deliveries_event_check" CHECK ("webhook_deliveries"."event" in ('sla.breached', 'sla.resolved')),
	CONSTRAINT "webhook_deliveries_status_check" CHECK ("webhook_deliveries"."status" in ('pending', 'delivered', 'failed'))
);
--> statement-breakpoint
ALTER TABLE "sla_job_stages" ADD CONSTRAINT "sla_job_stages_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_breach_id_sla_breaches_id_fk" FOREIGN KEY ("breach_id") REFERENCES "public"."sla_breaches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "sla_breaches_open_unique" ON "sla_breaches" USING btree ("object_type","object_id","sla_key") WHERE "sla_breaches"."resolved_at" is null;--> statement-breakpoint
CREATE INDEX "sla_breaches_breached_at_id_idx" ON "sla_breaches" USING btree ("breached_at","id");--> statement-breakpoint
CREATE INDEX "sla_breaches_object_id_idx" ON "sla_breaches" USING btree ("object_id");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_breach_webhook_event_unique" ON "webhook_deliveries" USING btree ("breach_id","webhook","event");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries" USING btree ("next_attempt_at","id") WHERE "webhook_deliveries"."status" = 'pending';