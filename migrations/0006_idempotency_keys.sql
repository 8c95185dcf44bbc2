CREATE TABLE "idempotency_keys" (
	"actor" text NOT NULL,
	"key" text NOT NULL,
	"action" text NOT NULL,
	"request_fingerprint" text NOT NULL,
	"status_code" integer NOT NULL,
	"headers" jsonb NOT NULL,
	"response" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_actor_key_pk" PRIMARY KEY("actor","key")
);
--> statement-breakpoint
CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys" USING btree ("created_at");