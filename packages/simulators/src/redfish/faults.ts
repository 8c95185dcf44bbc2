import { z } from 'zod';

/**
 * Faults one BMC can be told to show, switched at run time through the admin API.
 * Rates are probabilities per request (1 = every request).
 */
export const Faults = z
  .object({
    /** Extra milliseconds before each answer (not scaled by timeScale: it models the network and BMC CPU). */
    latencyMs: z.number().int().min(0).max(600_000).optional(),
    /** Share of requests answered with `errorStatus` (default 500) instead of being served. */
    errorRate: z.number().min(0).max(1).optional(),
    errorStatus: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)]).optional(),
    /** Share of requests whose TCP connection is reset without an answer. */
    resetRate: z.number().min(0).max(1).optional(),
    /** Requests are accepted but never answered until the fault is cleared (they block the BMC's queue). */
    hang: z.boolean().optional(),
    /** The BMC reboots itself part-way through the next firmware update; the task ends Interrupted. */
    rebootDuringUpdate: z.boolean().optional(),
    /**
     * The BMC reboots half-way through receiving the next firmware upload (one-shot): the client never gets an answer.
     */
    rebootDuringUpload: z.boolean().optional(),
    /** Firmware update tasks end in Exception with Update ApplyFailed. */
    taskFailure: z.boolean().optional(),
    /** Resource paths that answer 404 until the client re-reads the service root (re-discovery). */
    staleLinks: z.array(z.string().startsWith('/redfish/v1/')).optional(),
    /** Session creation fails with SessionLimitExceeded regardless of the real count. */
    sessionExhaustion: z.boolean().optional(),
    /**
     * A PATCH of an account's Password answers 200 but the BMC keeps the old password, so a login with the new one is
     * refused (a BMC whose password store did not take the change): the fault a rotation's verify step must catch.
     */
    refuseNewPassword: z.boolean().optional(),
  })
  .strict();
export type Faults = z.infer<typeof Faults>;

export const chance = (rate: number | undefined): boolean => rate !== undefined && rate > 0 && Math.random() < rate;
