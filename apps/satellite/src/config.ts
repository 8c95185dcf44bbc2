import { z } from 'zod';
import { LogConfig, MetricsConfig, TemporalConfig } from '@fleet/config';

const SecretsConfig = z.discriminatedUnion('provider', [
  z.object({ provider: z.literal('file'), path: z.string().min(1) }).strict(),
  z
    .object({
      provider: z.literal('env'),
      prefix: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'must be an upper-case env prefix'),
    })
    .strict(),
]);

/** How a device's certificate is checked: the system store unless a site CA, a pin or `insecure` says otherwise. */
const TlsPolicy = z
  .object({
    caFile: z.string().min(1).optional(),
    pinnedSha256: z
      .string()
      .regex(/^([0-9a-fA-F]{2}:?){32}$/, 'must be a SHA-256 fingerprint')
      .optional(),
    insecure: z.boolean().default(false),
  })
  .strict()
  .default({ insecure: false });

export const SatelliteConfig = z
  .object({
    siteId: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be a lower-case slug'),
    log: LogConfig,
    metrics: MetricsConfig,
    temporal: TemporalConfig,
    secrets: SecretsConfig,
    /** The hub that serves firmware packages (GET /v1/firmware/blobs/{digest}). */
    hub: z
      .object({
        url: z.string().url(),
        /**
         * Reference, in this site's secret store, to the hub API token (a viewer token is enough):
         * its password is the token. Never the token itself.
         */
        tokenRef: z.string().min(1),
      })
      .strict()
      .optional(),
    /** State the satellite keeps across restarts: NVOS host keys trusted on first use (nvos-known-hosts.json). */
    dataDir: z.string().min(1).default('/var/lib/fleet/satellite'),
    /** The site's firmware package cache. */
    artifacts: z
      .object({
        dir: z.string().min(1).default('/var/cache/fleet/artifacts'),
        /** Complete packages kept; least recently used ones go first. */
        maxBytes: z
          .number()
          .int()
          .min(1)
          .default(100 * 1024 ** 3),
      })
      .strict()
      .default({ dir: '/var/cache/fleet/artifacts', maxBytes: 100 * 1024 ** 3 }),
    worker: z
      .object({
        maxConcurrentActivities: z.number().int().min(1).max(10_000).default(200),
        /** Seconds running activities get to finish on SIGTERM before they are handed back. */
        shutdownGraceTimeS: z.number().min(0).max(3600).default(30),
        /** A prebuilt workflow bundle (production); without it the worker bundles at start. */
        workflowBundlePath: z.string().optional(),
      })
      .strict()
      .default({ maxConcurrentActivities: 200, shutdownGraceTimeS: 30 }),
    redfish: z
      .object({
        connectTimeoutMs: z.number().int().min(100).default(10_000),
        requestTimeoutMs: z.number().int().min(100).default(30_000),
        uploadTimeoutMs: z.number().int().min(1000).default(600_000),
        /** How often a settling device is polled. */
        pollIntervalMs: z.number().int().min(10).default(2_000),
        /**
         * basic: credentials on each call (one client per activity, so no session to
         * manage); session: one SessionService session per client.
         */
        auth: z.enum(['basic', 'session']).default('basic'),
        /** In-flight Redfish requests across all of this site's BMCs. */
        siteConcurrency: z.number().int().min(1).max(10_000).default(256),
        tls: TlsPolicy,
      })
      .strict()
      .default({
        connectTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        uploadTimeoutMs: 600_000,
        pollIntervalMs: 2_000,
        auth: 'basic',
        siteConcurrency: 256,
        tls: { insecure: false },
      }),
    /** Switch trays' NVOS: NVUE REST and SSH/SFTP (docs/reference/rms-behaviours.md, #nvue and #nvos-image-install). */
    nvos: z
      .object({
        connectTimeoutMs: z.number().int().min(100).default(10_000),
        requestTimeoutMs: z.number().int().min(100).default(30_000),
        /** An SFTP upload with no acknowledged progress for this long fails (RMS sftp_step_timeout_seconds). */
        sftpStepTimeoutS: z.number().min(0.1).max(3600).default(30),
        /** A whole SFTP upload (RMS sftp_upload_timeout_seconds). */
        sftpUploadTimeoutS: z.number().min(1).max(86_400).default(3600),
        tls: TlsPolicy,
        /** How often switch operations poll NVUE (actions, revisions, reboots). */
        pollIntervalMs: z.number().int().min(10).max(60_000).default(1_000),
        /** Per-domain switch mTLS material to install (ca.pem, cert.pem, key.pem), like RMS switch_cert_root. */
        switchCertRoot: z.string().min(1).default('/etc/fleet/switch-certs'),
        /** Per-domain client identity the satellite presents to switches that require mTLS. */
        clientTlsRoot: z.string().min(1).default('/etc/fleet/client-tls'),
        /**
         * The domain whose client identity (`<clientTlsRoot>/<domain>/client.{pem,key}`) every NVUE call
         * presents, as RMS's default_switch_domain: needed once switches' APIs require mTLS.
         */
        defaultSwitchDomain: z
          .string()
          .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'must be a certificate domain name')
          .optional(),
      })
      .strict()
      .refine((n) => n.sftpStepTimeoutS <= n.sftpUploadTimeoutS, {
        message: 'sftpStepTimeoutS must not exceed sftpUploadTimeoutS',
        path: ['sftpStepTimeoutS'],
      })
      .default({
        connectTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        sftpStepTimeoutS: 30,
        sftpUploadTimeoutS: 3600,
        tls: { insecure: false },
        pollIntervalMs: 1_000,
        switchCertRoot: '/etc/fleet/switch-certs',
        clientTlsRoot: '/etc/fleet/client-tls',
      }),
  })
  .strict();
export type SatelliteConfig = z.infer<typeof SatelliteConfig>;
