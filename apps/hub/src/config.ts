import { z } from 'zod';
import { DatabaseConfig, LogConfig, MetricsConfig, PayloadKeyRingConfig, repositoryPath } from '@fleet/config';
import {
  computeOnlySteps,
  defaultBlastRadius,
  defaultQuarantineRules,
  faultClasses,
  kindOfNodeType,
  nodeTypes,
  playbookSteps,
} from '@fleet/domain';

/**
 * The repository's built web console, found from the hub's source or bundle; when it is not built, the folder it would
 * be built in, relative to the working directory (the hub then serves the API only).
 */
const defaultWebRoot = repositoryPath(import.meta.url, 'apps/web/dist') ?? 'apps/web/dist';

const Playbook = z.object({ steps: z.array(z.enum(playbookSteps)).max(10) }).strict();

/** Quarantine rules, the blast radius of automatic remediation, and playbooks per node type (docs/day2.md). */
const RemediationConfig = z
  .object({
    rules: z
      .array(
        z
          .object({
            name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lower-case letters, digits and dashes'),
            faultClasses: z.array(z.enum(faultClasses)).min(1),
            observations: z.number().int().min(1).max(100),
            withinS: z.number().int().min(1).max(86_400),
            remediate: z.boolean(),
          })
          .strict(),
      )
      .default(defaultQuarantineRules),
    blastRadius: z
      .object({
        maxDevices: z.number().int().min(0).max(100_000),
        maxRacks: z.number().int().min(0).max(10_000),
        windowS: z
          .number()
          .int()
          .min(1)
          .max(7 * 86_400),
      })
      .strict()
      .default(defaultBlastRadius),
    /** Per node type, per fault class: replaces the role's default playbook for that class. */
    playbooks: z
      .partialRecord(z.enum(nodeTypes), z.partialRecord(z.enum(faultClasses), Playbook))
      .superRefine((byType, ctx) => {
        // A burn-in runs SLURM tests on a compute tray's host: a switch or a shelf has none to run them on.
        for (const [type, byClass] of Object.entries(byType)) {
          const kind = kindOfNodeType(type);
          if (kind === 'compute') continue;
          for (const [faultClass, playbook] of Object.entries(byClass ?? {}))
            playbook?.steps.forEach((step, i) => {
              if (computeOnlySteps.includes(step))
                ctx.addIssue({
                  code: 'custom',
                  path: [type, faultClass, 'steps', i],
                  message: `${step} needs a compute tray's host; ${type} is a ${kind}`,
                });
            });
        }
      })
      .default({}),
  })
  .strict()
  .default({ rules: defaultQuarantineRules, blastRadius: defaultBlastRadius, playbooks: {} });
export type RemediationConfig = z.infer<typeof RemediationConfig>;

/** The retention reaper (docs/security.md, "Retention"): what it deletes past which age, how much and how often. */
const RetentionConfig = z
  .object({
    /** Finished top-level jobs (with their children, intents and campaign rows), by when they finished. */
    jobsDays: z.number().int().min(1).max(36_500).default(90),
    /** Stored answers of Idempotency-Key creates: at least a day, the time a key is honoured (replayed). */
    idempotencyKeysDays: z.number().int().min(1).max(365).default(2),
    everyS: z.number().int().min(10).max(86_400).default(3600),
    /** Jobs (top-level, with their children) or keys deleted per transaction. */
    batch: z.number().int().min(1).max(10_000).default(100),
  })
  .strict()
  .default({ jobsDays: 90, idempotencyKeysDays: 2, everyS: 3600, batch: 100 });
export type RetentionConfig = z.infer<typeof RetentionConfig>;

/** The actions two-person rules cover (docs/security.md, "Two-person rules"). */
export const twoPersonRules = [
  'campaign.approve',
  'switch.factory_reset',
  'rack.power_off',
  'rack.cold_reboot',
  'batch.power_off',
  'device.release',
] as const;
export type TwoPersonRule = (typeof twoPersonRules)[number];

const twoPersonDefaults = Object.fromEntries(twoPersonRules.map((r) => [r, true])) as Record<TwoPersonRule, boolean>;

/** Which actions need a second person, and how long a held request waits for one. */
const TwoPersonConfig = z
  .object({
    rules: z
      .object(
        Object.fromEntries(twoPersonRules.map((r) => [r, z.boolean().default(true)])) as Record<
          TwoPersonRule,
          z.ZodDefault<z.ZodBoolean>
        >,
      )
      .strict()
      .default(twoPersonDefaults),
    approvalTtlS: z
      .number()
      .int()
      .min(60)
      .max(30 * 86_400)
      .default(86_400),
  })
  .strict()
  .default({ rules: twoPersonDefaults, approvalTtlS: 86_400 });
export type TwoPersonConfig = z.infer<typeof TwoPersonConfig>;

/** People's roles an OIDC group may grant; the machines' roles come only with API tokens. */
const oidcRoles = ['viewer', 'operator', 'admin'] as const;

/** OIDC sign-in beside API tokens (docs/security.md, "OIDC sign-in"): whose JWTs the hub accepts, and as what role. */
export const OidcConfig = z
  .object({
    /** The issuer exactly as its tokens' `iss` and its discovery document name it. */
    issuer: z.string().url(),
    /** The `aud` the hub's tokens carry (the API's resource identifier at the issuer). */
    audience: z.string().min(1),
    /** The claim listing the person's groups (an array of strings). */
    groupsClaim: z.string().min(1).default('groups'),
    /** The claim naming the person in the audit log (`sub` when the token lacks it); unique and not user-editable. */
    nameClaim: z.string().min(1).default('preferred_username'),
    /** Group → role, and sites (absent: every site). The highest role wins; see the docs for sites. */
    roleMapping: z
      .record(
        z.string().min(1),
        z.object({ role: z.enum(oidcRoles), sites: z.array(z.string().min(1)).min(1).optional() }).strict(),
      )
      .refine((m) => Object.keys(m).length > 0, 'map at least one group to a role'),
    /** Leeway for `exp` and `nbf` against clock skew. */
    clockToleranceS: z.number().int().min(0).max(300).default(30),
    /** The key set's URL; absent: the discovery document's `jwks_uri`. */
    jwksUri: z.string().url().optional(),
    /** Least time between two fetches of the key set for a key id it lacks (a rotated signing key). */
    jwksCooldownS: z.number().min(0).max(3600).default(30),
    /**
     * The web console's client at the issuer: public (no secret), authorization code with PKCE, redirect URI
     * `<hub origin>/auth/callback`. Absent: the console offers API-token sign-in only.
     */
    webClientId: z.string().min(1).optional(),
    /** The scopes the console asks for (space-free OAuth scope tokens); `openid` is needed for the ID token. */
    webScopes: z
      .array(z.string().regex(/^[!#-[\]-~]+$/, 'an OAuth scope is printable ASCII without spaces, quotes or \\'))
      .min(1)
      .refine((s) => s.includes('openid'), 'include openid')
      .default(['openid']),
    /**
     * Whether the console names `audience` as the resource it wants a token for (RFC 8707 `resource`), which makes
     * providers that support resource indicators issue a token for the hub. Turn off for one that refuses the
     * parameter; its access token must still carry the hub's `aud`.
     */
    webResourceIndicator: z.boolean().default(true),
  })
  .strict();
export type OidcConfig = z.infer<typeof OidcConfig>;

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
        /**
         * HTTPS (TLS 1.2 or later). The files are checked every `reloadCheckS` and re-read when they change, so a
         * renewed certificate (a mounted Kubernetes secret, certbot) needs no restart.
         */
        tls: z
          .object({
            certFile: z.string().min(1),
            keyFile: z.string().min(1),
            reloadCheckS: z.number().min(0.1).max(3600).default(30),
          })
          .strict()
          .optional(),
        /** Plain HTTP, for a dev stack on loopback only: the hub logs a warning at start. */
        allowPlainHttp: z.boolean().default(false),
      })
      .strict()
      .superRefine((http, ctx) => {
        if (!http.tls && !http.allowPlainHttp)
          ctx.addIssue({
            code: 'custom',
            path: ['tls'],
            message: 'required: the hub serves HTTPS (certFile, keyFile); allowPlainHttp: true is for a dev stack',
          });
        if (http.tls && http.allowPlainHttp)
          ctx.addIssue({ code: 'custom', path: ['allowPlainHttp'], message: 'cannot be set together with tls' });
      }),
    /** Base URL of the Temporal UI, for the workflow link on each job. */
    temporalUiUrl: z.string().url().optional(),
    temporalNamespace: z.string().default('default'),
    /**
     * The Temporal payload key rings the workflow agent and satellites hold (one for every site, or one per site), for
     * the codec endpoint the Temporal UI decodes payloads with (docs/security.md); without them that endpoint refuses.
     */
    temporalPayloadEncryption: PayloadKeyRingConfig({
      /**
       * Origins of the Temporal UI (e.g. `https://temporal.example.com`) whose browser pages may call the codec
       * endpoint (CORS), with the signed-in person's bearer token; none: only same-origin pages and the CLI.
       */
      uiOrigins: z
        .array(
          z
            .string()
            .url()
            .refine((u) => new URL(u).origin === u, 'must be an origin: scheme, host and port only'),
        )
        .default([]),
    }).optional(),
    firmware: z
      .object({
        /** Where package blobs live (content-addressed); made on the first upload. */
        blobDir: z.string().min(1).default('/var/lib/fleet/blobs'),
        /** Largest package an upload may carry; uploads are streamed, so this bounds disk, not memory. */
        maxPackageBytes: z
          .number()
          .int()
          .min(1024)
          .default(8 * 1024 ** 3),
      })
      .strict()
      .default({ blobDir: '/var/lib/fleet/blobs', maxPackageBytes: 8 * 1024 ** 3 }),
    campaigns: z
      .object({
        /**
         * Time to update one device, by role, for campaign estimates. Perf anchors: compute = BMC tray 10:41 +
         * compute tray 9:46 + AC cycle and BMC back 5:00; power shelf 34:10; switch tray 30:00.
         */
        deviceDurationS: z
          .object({
            compute: z.number().int().min(1).max(86_400).default(1527),
            switch: z.number().int().min(1).max(86_400).default(1800),
            power_shelf: z.number().int().min(1).max(86_400).default(2050),
          })
          .strict()
          .default({ compute: 1527, switch: 1800, power_shelf: 2050 }),
      })
      .strict()
      .default({ deviceDurationS: { compute: 1527, switch: 1800, power_shelf: 2050 } }),
    web: z
      .object({
        /** The built web console served at `/`; when the folder has no index.html the hub serves the API only. */
        root: z.string().min(1).default(defaultWebRoot),
      })
      .strict()
      .default({ root: defaultWebRoot }),
    remediation: RemediationConfig,
    /** Per bearer token (else per address), in each hub process; `enabled: false` for benches (docs/security.md). */
    rateLimit: z
      .object({
        enabled: z.boolean().default(true),
        perSecond: z.number().min(0.1).max(100_000).default(100),
        burst: z.number().int().min(1).max(1_000_000).default(400),
      })
      .strict()
      .default({ enabled: true, perSecond: 100, burst: 400 }),
    retention: RetentionConfig,
    twoPerson: TwoPersonConfig,
    oidc: OidcConfig.optional(),
  })
  .strict();
export type HubConfig = z.infer<typeof HubConfig>;
