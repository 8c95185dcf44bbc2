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

const sha256Fingerprint = z.string().regex(/^([0-9a-fA-F]{2}:?){32}$/, 'must be a SHA-256 fingerprint');

/** How a device's certificate is checked: the system store unless a site CA, a pin or `insecure` says otherwise. */
const tlsPolicyFields = {
  /** The site CA bundle (PEM) its devices' certificates chain to. */
  caFile: z.string().min(1).optional(),
  /** One leaf pin for every device of the kind: only where they all present the same certificate. */
  pinnedSha256: sha256Fingerprint.optional(),
  insecure: z.boolean().default(false),
};
const TlsPolicy = z.object(tlsPolicyFields).strict().default({ insecure: false });

/** BMCs' TLS: as other devices', plus a pin per BMC, as each BMC has a certificate of its own. */
const BmcTlsPolicy = z
  .object({
    ...tlsPolicyFields,
    /** Leaf pins by the host of the BMC URL (with its port when not the default), e.g. "10.0.0.5": fingerprint. */
    pins: z.record(z.string().regex(/^[^/\s]+$/, 'must be the host[:port] of a BMC URL'), sha256Fingerprint).optional(),
  })
  .strict()
  .default({ insecure: false });

/** A per-test SLURM time limit in minutes (SLURM ends the job, state TIMEOUT). */
const minutes = (dflt: number) => z.int().min(1).max(10_080).default(dflt);

/**
 * Burn-in over the site's SLURM (docs/burn-in.md): where slurmrestd is, where jobs write their output, how long each
 * test may take, and which site's job scripts to render. Without this section the satellite runs no burn-in.
 */
const BurnInConfig = z
  .object({
    slurm: z
      .object({
        /** slurmrestd, e.g. http://slurm-rest.site:6820 (openapi/v0.0.38). */
        url: z.string().url(),
        /** The user the token was issued for (X-SLURM-USER-NAME). */
        user: z.string().min(1).default('root'),
        /** A file holding the JWT (`scontrol token`), read before each request so a renewed token is picked up. */
        tokenFile: z.string().min(1),
        partition: z.string().min(1),
        requestTimeoutMs: z.number().int().min(100).default(30_000),
      })
      .strict(),
    /** Where jobs write their output, as the SLURM nodes see it: a filesystem this satellite reads too. */
    outputDir: z.string().startsWith('/', 'must be an absolute path'),
    /** The same folder as this satellite sees it, when it is mounted elsewhere here. Default: outputDir. */
    localOutputDir: z.string().startsWith('/', 'must be an absolute path').optional(),
    /** PATH of every job (slurmrestd gives a job no other environment). */
    jobPath: z.string().min(1).default('/usr/local/bin:/usr/bin:/bin'),
    timeLimitsMin: z
      .object({ gpu_stress: minutes(60), memory: minutes(60), nvlink_allreduce: minutes(30) })
      .strict()
      .default({ gpu_stress: 60, memory: 60, nvlink_allreduce: 30 }),
    /** A job still PENDING this long after its submission fails (NeverStarted, with SLURM's reason); cancelled. */
    startDeadlineS: z.number().min(1).max(604_800).default(1800),
    /** A job still running this long past its time limit (SLURM should have ended it) fails as TimedOut. */
    overrunGraceS: z.number().min(0).max(86_400).default(300),
    pollIntervalMs: z.number().int().min(50).max(300_000).default(5_000),
    /** Whose job scripts to render: the simulated site asks the BMC simulator's tray health model. */
    site: z.discriminatedUnion('kind', [
      z
        .object({
          kind: z.literal('simulated'),
          /** The BMC simulator's admin API (GET /bmcs/:id/health), as the SLURM nodes reach it. */
          simulatorUrl: z.string().url(),
        })
        .strict(),
    ]),
  })
  .strict();
export type BurnInConfig = z.infer<typeof BurnInConfig>;

/**
 * Redfish push events for health observation (docs/day2.md, "Event subscriptions"): the endpoint BMCs POST events to.
 * Without this section the observer only polls.
 */
const EventsConfig = z
  .object({
    listen: z
      .object({
        host: z.string().min(1).default('0.0.0.0'),
        /** 0 picks a free port (tests). */
        port: z.number().int().min(0).max(65535),
      })
      .strict(),
    /** The URL BMCs are told to POST to (subscription Destination): the listener as the BMC network reaches it. */
    publicUrl: z.string().url(),
    /** PEM certificate and key files: HTTPS, so the push token does not cross the network in clear. */
    tls: z
      .object({ certFile: z.string().min(1), keyFile: z.string().min(1) })
      .strict()
      .optional(),
    maxBodyBytes: z
      .number()
      .int()
      .min(1024)
      .max(1024 ** 2)
      .default(64 * 1024),
    /** Events for one device within this long give one read. */
    debounceMs: z.number().int().min(0).max(60_000).default(500),
    /** How often a device's subscription (or the BMC's lack of an event service) is checked again. */
    recheckS: z.number().min(10).max(86_400).default(900),
  })
  .strict();
export type EventsConfig = z.infer<typeof EventsConfig>;

export const SatelliteConfig = z
  .object({
    siteId: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be a lower-case slug'),
    log: LogConfig,
    metrics: MetricsConfig,
    temporal: TemporalConfig.extend({
      /**
       * Temporal payload encryption (docs/security.md): `keyRingRef` is a reference in this site's secret store whose
       * password is the key ring document. Absent: payloads go to Temporal in clear.
       */
      payloadEncryption: z
        .object({ keyRingRef: z.string().min(1) })
        .strict()
        .optional(),
    }),
    secrets: SecretsConfig,
    /**
     * The hub that serves firmware packages (GET /v1/firmware/blobs/{digest}) and keeps the Redfish documents of
     * hardware inventory reads (PUT /v1/hardware-documents/{digest}).
     */
    hub: z
      .object({
        url: z.string().url(),
        /**
         * Reference, in this site's secret store, to the hub API token (a satellite token of this site: it fetches
         * the packages its site's jobs push, stores inventory documents and delivers health readings;
         * docs/security.md): its password is the token. Never the token itself.
         */
        tokenRef: z.string().min(1),
        /** CA bundle (PEM) the hub's HTTPS certificate chains to, when not a publicly trusted one. */
        caFile: z.string().min(1).optional(),
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
        /**
         * A prebuilt workflow bundle; without it the built satellite (`pnpm build`) loads the one built beside it, and
         * the sources bundle theirs at start.
         */
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
         * The first poll after a power on or off waits this fraction of the quickest recent settle of the same node
         * type and action, at most half the settle timeout (activities/settle-times.ts); 0 polls from the start.
         */
        settleWaitFraction: z.number().min(0).max(0.9).default(0.8),
        /**
         * basic: credentials on each call (one client per activity, so no session to
         * manage); session: one SessionService session per client.
         */
        auth: z.enum(['basic', 'session']).default('basic'),
        /** In-flight Redfish requests across all of this site's BMCs. */
        siteConcurrency: z.number().int().min(1).max(10_000).default(256),
        tls: BmcTlsPolicy,
      })
      .strict()
      .default({
        connectTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        uploadTimeoutMs: 600_000,
        pollIntervalMs: 2_000,
        settleWaitFraction: 0.8,
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
    burnIn: BurnInConfig.optional(),
    events: EventsConfig.optional(),
  })
  .strict();
export type SatelliteConfig = z.infer<typeof SatelliteConfig>;

/**
 * Seconds the satellite takes at most to stop on SIGTERM: running activities get shutdownGraceTimeS (then are handed
 * back); closing the connection and the cache takes moments. deploy/k8s sets the pod's grace above it.
 */
export function satelliteShutdownGraceS(config: SatelliteConfig): number {
  return config.worker.shutdownGraceTimeS + 5;
}
