ALTER TABLE "devices" ADD COLUMN "nvos_url" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "nvos_ssh" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "nvos_credential_ref" text;--> statement-breakpoint
ALTER TABLE "devices" ADD COLUMN "nvos_host_key" text;