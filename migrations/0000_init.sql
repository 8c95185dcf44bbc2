CREATE TABLE "devices" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"site_id" text NOT NULL,
	"node_type" text NOT NULL,
	"bmc_url" text NOT NULL,
	"credential_ref" text NOT NULL,
	"power_state" text DEFAULT 'Unknown' NOT NULL,
	"power_state_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "devices_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "sites" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "intents" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"dispatched_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"kind" text NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"site_id" text,
	"device_id" uuid,
	"parent_id" uuid,
	"params" jsonb NOT NULL,
	"progress" jsonb,
	"result" jsonb,
	"error" jsonb,
	"created_by" text NOT NULL,
	"idempotency_key" text,
	"request_fingerprint" text,
	"run_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_tokens_name_unique" UNIQUE("name"),
	CONSTRAINT "api_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor" text NOT NULL,
	"role" text,
	"action" text NOT NULL,
	"target" text,
	"request_id" text NOT NULL,
	"outcome" text NOT NULL,
	"status_code" integer NOT NULL,
	"job_id" uuid,
	"details" jsonb
);
--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "intents" ADD CONSTRAINT "intents_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "devices_site_id_idx" ON "devices" USING btree ("site_id");--> statement-breakpoint
CREATE INDEX "intents_job_id_idx" ON "intents" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "intents_pending_idx" ON "intents" USING btree ("next_attempt_at","id") WHERE "intents"."status" = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_created_by_idempotency_key_unique" ON "jobs" USING btree ("created_by","idempotency_key") WHERE "jobs"."idempotency_key" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_one_active_per_device" ON "jobs" USING btree ("device_id") WHERE "jobs"."device_id" is not null and "jobs"."state" in ('queued', 'running', 'cancelling');--> statement-breakpoint
CREATE INDEX "jobs_device_id_idx" ON "jobs" USING btree ("device_id");--> statement-breakpoint
CREATE INDEX "jobs_site_id_idx" ON "jobs" USING btree ("site_id");--> statement-breakpoint
CREATE INDEX "jobs_parent_id_idx" ON "jobs" USING btree ("parent_id");--> statement-breakpoint
CREATE INDEX "jobs_created_at_id_idx" ON "jobs" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "jobs_open_idx" ON "jobs" USING btree ("id") WHERE "jobs"."state" in ('queued', 'running', 'cancelling');--> statement-breakpoint
CREATE INDEX "audit_log_at_idx" ON "audit_log" USING btree ("at");--> statement-breakpoint
CREATE INDEX "audit_log_job_id_idx" ON "audit_log" USING btree ("job_id");