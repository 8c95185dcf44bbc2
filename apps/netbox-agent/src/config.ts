import { z } from 'zod';
import { DatabaseConfig, LogConfig, MetricsConfig } from '@fleet/config';

export const NetboxAgentConfig = z
  .object({
    log: LogConfig,
    metrics: MetricsConfig,
    database: DatabaseConfig,
    netbox: z
      .object({
        url: z.string().url(),
        /** A file holding the API token (v2 `nbt_...` or a legacy 40-hex token); never inline. */
        tokenFile: z.string().min(1),
        pageSize: z.number().int().min(1).max(1000).default(1000),
        timeoutMs: z.number().int().min(100).default(30_000),
      })
      .strict(),
    sync: z
      .object({
        /** Seconds between incremental syncs. */
        intervalS: z.number().min(0.1).max(3600).default(30),
        /** Seconds between full reconciles (catches deletes the change log no longer has). */
        fullSyncIntervalS: z
          .number()
          .min(1)
          .max(86_400 * 30)
          .default(3600),
        /** Incremental syncs re-read this many seconds before the watermark (clock and commit skew). */
        overlapS: z.number().min(0).max(3600).default(10),
        /** Limit the mirror to these NetBox site slugs; all sites when absent. */
        sites: z.array(z.string().min(1)).optional(),
        /**
         * Where a pass keeps what it read from NetBox until it has applied it (a directory of its own, removed after
         * the pass); the OS temp directory when absent. A full pass of 100,000 devices needed 222 MiB there.
         */
        spoolDir: z.string().min(1).optional(),
      })
      .strict()
      .default({ intervalS: 30, fullSyncIntervalS: 3600, overlapS: 10 }),
  })
  .strict();
export type NetboxAgentConfig = z.infer<typeof NetboxAgentConfig>;

/** Seconds the current sync gets to finish on SIGTERM (deploy/k8s sets the pod's grace above it). */
export const netboxAgentShutdownGraceS = 10;
