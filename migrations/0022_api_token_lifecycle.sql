ALTER TABLE "api_tokens" ADD COLUMN "sites" text[];--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "created_by" text;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "last_used_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "revoked_by" text;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "revoke_reason" text;--> statement-breakpoint
CREATE INDEX "api_tokens_created_at_id_idx" ON "api_tokens" USING btree ("created_at","id");