import { z } from 'zod';

export const LogConfig = z
  .object({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .strict()
  .default({ level: 'info' });

export const MetricsConfig = z
  .object({
    host: z.string().default('127.0.0.1'),
    /** 0 picks a free port (tests). */
    port: z.number().int().min(0).max(65535),
  })
  .strict();

export const DatabaseConfig = z
  .object({
    url: z
      .string()
      .url()
      .refine((u) => u.startsWith('postgres://') || u.startsWith('postgresql://'), {
        message: 'must be a postgres:// URL',
      }),
    poolSize: z.number().int().min(1).max(200).default(10),
  })
  .strict();

/**
 * mTLS to Temporal (docs/security.md "TLS"): the CA the frontend's certificate chains to, and this process's client
 * certificate and key (PEM), read once at start.
 */
export const TemporalTlsConfig = z
  .object({
    caFile: z.string().min(1),
    certFile: z.string().min(1),
    keyFile: z.string().min(1),
    /** The name the frontend's certificate is checked against, when not the host of `address`. */
    serverName: z.string().min(1).optional(),
  })
  .strict();
export type TemporalTlsConfig = z.infer<typeof TemporalTlsConfig>;

export const TemporalConfig = z
  .object({
    address: z.string().regex(/^[^:]+:\d+$/, 'must be host:port'),
    namespace: z.string().min(1).default('default'),
    /** Absent: plain gRPC (a dev server on loopback). */
    tls: TemporalTlsConfig.optional(),
  })
  .strict();
