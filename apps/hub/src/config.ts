import { z } from 'zod';
import { DatabaseConfig, LogConfig, MetricsConfig } from '@fleet/config';

export const HubConfig = z
  .object({
    log: LogConfig,
    metrics: MetricsConfig,
    database: DatabaseConfig,
    http: z
      .object({
        host: z.string().default('127.0.0.1'),
        port: z.number().int().min(0).max(65535),
        /** Seconds in-flight requests get to finish on SIGTERM. */
        shutdownGraceS: z.number().min(0).max(600).default(10),
      })
      .strict(),
    /** Base URL of the Temporal UI, for the workflow link on each job. */
    temporalUiUrl: z.string().url().optional(),
    temporalNamespace: z.string().default('default'),
  })
  .strict();
export type HubConfig = z.infer<typeof HubConfig>;
