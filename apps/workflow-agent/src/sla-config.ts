import { z } from 'zod';
import { fleetLifecycleStates, JobKind, slaEvents, slaPolicyWith, type SlaPolicy } from '@fleet/domain';

/** Seconds; null stops watching it. */
const Limit = z
  .number()
  .int()
  .min(1)
  .max(366 * 86_400)
  .nullable();

const Webhook = z
  .object({
    /** How deliveries name it (in Postgres, logs and metrics: the URL never is, it can be a secret itself). */
    name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, 'lower-case letters, digits, . _ - (at most 63)'),
    url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
    /** A file holding the HMAC secret (16 characters or more), read at each attempt: a rotation needs no restart. */
    secretFile: z.string().min(1),
    events: z
      .array(z.enum(slaEvents))
      .min(1)
      .default([...slaEvents]),
    /** One attempt's limit, connection to last byte. */
    timeoutS: z.number().min(0.1).max(120).default(10),
  })
  .strict();
export type WebhookConfig = z.infer<typeof Webhook>;

const Delivery = z
  .object({
    /** Attempts before a delivery fails for good (last_error says why). */
    maxAttempts: z.number().int().min(1).max(100).default(12),
    /** Backoff: base × 2^(attempt−1) with jitter, at most retryMaxS; a 429/503 Retry-After waits longer if it asks. */
    retryBaseS: z.number().min(0.1).max(3600).default(10),
    retryMaxS: z.number().min(0.1).max(86_400).default(3600),
    /** A delivery being sent is leased this long: a sender that dies leaves it due again after. */
    leaseS: z.number().int().min(5).max(3600).default(120),
    batchSize: z.number().int().min(1).max(1000).default(50),
    /** Deliveries in flight at once. */
    concurrency: z.number().int().min(1).max(64).default(4),
  })
  .strict();
const deliveryDefaults = Delivery.parse({});

/** Stuck-state SLAs and their escalation (docs/sla.md); the limits override defaultSlaPolicy. */
export const SlaConfig = z
  .object({
    enabled: z.boolean().default(true),
    /** Seconds between two watch passes. */
    intervalS: z.number().int().min(1).max(3600).default(30),
    lifecycle: z.partialRecord(z.enum(fleetLifecycleStates), Limit).default({}),
    jobRunning: z.partialRecord(JobKind, Limit).default({}),
    /** The running limit of kinds neither jobRunning nor the defaults name. */
    jobRunningDefault: Limit.optional(),
    jobQueued: Limit.optional(),
    /** By job kind, then by stage's first word (`wave`, `awaiting_approval`). */
    jobStages: z.partialRecord(JobKind, z.record(z.string().regex(/^\S+$/, 'one word'), Limit)).default({}),
    webhooks: z.array(Webhook).default([]),
    delivery: Delivery.default(deliveryDefaults),
  })
  .strict()
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    c.webhooks.forEach((w, i) => {
      if (seen.has(w.name)) ctx.addIssue({ code: 'custom', path: ['webhooks', i, 'name'], message: 'used twice' });
      seen.add(w.name);
      if (w.timeoutS >= c.delivery.leaseS)
        ctx.addIssue({
          code: 'custom',
          path: ['webhooks', i, 'timeoutS'],
          message: 'must be shorter than delivery.leaseS, or a second sender could send it while it is in flight',
        });
    });
  })
  .default({
    enabled: true,
    intervalS: 30,
    lifecycle: {},
    jobRunning: {},
    jobStages: {},
    webhooks: [],
    delivery: deliveryDefaults,
  });
export type SlaConfig = z.infer<typeof SlaConfig>;

/** The policy the config asks for: the defaults with its limits. */
export function slaPolicyOf(config: SlaConfig): SlaPolicy {
  return slaPolicyWith({
    lifecycle: config.lifecycle,
    jobRunning: config.jobRunning,
    ...(config.jobRunningDefault !== undefined ? { jobRunningDefault: config.jobRunningDefault } : {}),
    ...(config.jobQueued !== undefined ? { jobQueued: config.jobQueued } : {}),
    jobStages: config.jobStages,
  });
}
