import { z } from 'zod';

/**
 * Faults one simulated switch can be told to show, switched at run time through the admin
 * API (the NVUE side mirrors the Redfish BMC faults). Rates are probabilities per request.
 */
export const SwitchFaults = z
  .object({
    /** Extra milliseconds before each NVUE answer (not scaled by timeScale: it models the network). */
    latencyMs: z.number().int().min(0).max(600_000).optional(),
    /** Share of NVUE requests answered with `errorStatus` (default 500) instead of being served. */
    errorRate: z.number().min(0).max(1).optional(),
    errorStatus: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)]).optional(),
    /** NVUE requests are accepted but never answered until the fault is cleared. */
    hang: z.boolean().optional(),
    /** NVUE refuses connections (nothing listens on its port) until the fault is cleared. */
    nvueUnavailable: z.boolean().optional(),
    /** An SFTP upload stops being answered once this many bytes of the file have arrived. */
    sftpStallAfterBytes: z.number().int().min(0).optional(),
    /** The switch reboots half-way through the next image install; the action ends action_failed. */
    rebootDuringInstall: z.boolean().optional(),
    /** Every revision apply ends `failed` with this text as its transition issue. */
    revisionApplyFails: z.string().min(1).optional(),
    /** Image and platform-firmware install actions end action_failed part-way. */
    installFailure: z.boolean().optional(),
  })
  .strict();
export type SwitchFaults = z.infer<typeof SwitchFaults>;
