import { z } from 'zod';
import type { ActivityTimeouts, BmcTarget } from './contracts.js';
import { nvosHelloLimits } from './nvos-hello.js';
import type { NvosTarget } from './switch.js';

export const rackPowerOps = ['on', 'off', 'cycle'] as const;
export const RackPowerOp = z.enum(rackPowerOps);
export type RackPowerOp = z.infer<typeof RackPowerOp>;

/** A rack's devices by power class, in the order power comes up: shelves, switches, compute. */
export interface RackTargets {
  shelves: BmcTarget[];
  switches: BmcTarget[];
  compute: BmcTarget[];
  /** The NVOS side of the switch trays the inventory gives an NVOS endpoint (cold reboot's verify_nvos_ready). */
  switchNvos?: NvosTarget[];
}

export interface RackPowerInput {
  jobId: string;
  rackId: string;
  op: RackPowerOp;
  targets: RackTargets;
  settleTimeoutS: number;
  activity: ActivityTimeouts;
}

/**
 * ExecuteColdReboot timings (docs/reference/rms-behaviours.md#cold-reboot), in seconds. Every one can be overridden per
 * request; 0 or absent means the default.
 */
export const coldRebootDefaults = {
  prestageShutdownFloorS: 0,
  prestageShutdownPollMaxS: 300,
  dischargeFloorS: 180,
  dischargePollMaxS: 600,
  bmcUpFloorS: 120,
  bmcUpPollMaxS: 600,
  /**
   * verify_nvos_ready: NVUE hello on every switch tray, `nvosHelloAttempts` tries `nvosHelloBackoffS`·2^n apart (30,
   * 60, 120, 240: at most 450 s), each wait capped (nvosHelloWaits).
   */
  nvosHelloBackoffS: 30,
  nvosHelloAttempts: 5,
  computeBootWaitS: 300,
  pollIntervalS: 15,
} as const;
export type ColdRebootTimings = { -readonly [K in keyof typeof coldRebootDefaults]: number };

const seconds = z.number().min(0).max(86_400, 'at most 86400 s (a day)');

/**
 * Per-request timing overrides, each within its own bounds: a wait up to a day; verify_nvos_ready's backoff up to
 * its cap and its attempts a whole number from 1 to 10 (nvosHelloLimits), so its doubling stays a finite timer.
 */
export const ColdRebootOverrides = z
  .object({
    ...(Object.fromEntries(Object.keys(coldRebootDefaults).map((k) => [k, seconds.optional()])) as Record<
      keyof ColdRebootTimings,
      z.ZodOptional<z.ZodNumber>
    >),
    nvosHelloBackoffS: z
      .number()
      .min(0)
      .max(nvosHelloLimits.maxBackoffS, `at most ${nvosHelloLimits.maxBackoffS} s between two NVUE hellos`)
      .optional(),
    nvosHelloAttempts: z
      .number()
      .int('a whole number of attempts')
      .min(1, 'at least 1 attempt')
      .max(nvosHelloLimits.maxAttempts, `at most ${nvosHelloLimits.maxAttempts} attempts`)
      .optional(),
  })
  .strict();

export function coldRebootTimings(overrides: Partial<ColdRebootTimings> = {}): ColdRebootTimings {
  const out = { ...coldRebootDefaults } as ColdRebootTimings;
  for (const [k, v] of Object.entries(overrides) as [keyof ColdRebootTimings, number | undefined][]) if (v) out[k] = v;
  return out;
}

export interface ColdRebootInput {
  jobId: string;
  rackId: string;
  targets: RackTargets;
  timings: ColdRebootTimings;
  settleTimeoutS: number;
  activity: ActivityTimeouts;
}

export { coldRebootStages } from './workflow-safe.js';
