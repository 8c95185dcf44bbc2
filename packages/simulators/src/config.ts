import { z } from 'zod';
import { LogConfig } from '@fleet/config';
import { profileIds } from './redfish/profiles/index.js';

const ipv4 = z.string().regex(/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/, 'must be a loopback IPv4 address (127.x.y.z)');

/** What each simulated BMC pretends to be; `gb200-compute` when absent. */
const Profile = z.enum(profileIds).optional();
const SessionLimit = z.number().int().min(1).max(1024).optional();
/** Shapes of real BMCs a profile does not show by default (redfish/quirks.ts), those a file can choose. */
const Quirks = z
  .object({
    noExpandQuery: z.boolean().optional(),
    noEventService: z.boolean().optional(),
    resetTypesInActionInfoOnly: z.boolean().optional(),
  })
  .strict()
  .optional();

const Bmc = z
  .object({
    id: z.string().min(1),
    address: ipv4,
    port: z.number().int().min(1).max(65535),
    username: z.string().min(1),
    password: z.string().min(1),
    powerState: z.enum(['On', 'Off']).optional(),
    profile: Profile,
    sessionLimit: SessionLimit,
    quirks: Quirks,
    /** Rack power domain: its power shelves feed its other BMCs. */
    powerDomain: z.string().min(1).optional(),
    /** The rack whose NVLink fabric its trays share; the power domain when absent. */
    rack: z.string().min(1).optional(),
    /** Tray serial number (e.g. the one NetBox holds); derived from the id when absent. */
    serialNumber: z.string().min(1).max(64).optional(),
    /** MAC address of the BMC's eth0; derived from the id when absent. */
    macAddress: z
      .string()
      .regex(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i, 'must be a MAC address such as 02:fe:00:00:00:01')
      .optional(),
  })
  .strict();

/** A block of BMCs on consecutive loopback addresses, for demo sites and benchmarks. */
const Generated = z
  .object({
    count: z.number().int().min(1).max(65_000),
    idPrefix: z.string().min(1),
    firstAddress: ipv4,
    port: z.number().int().min(1).max(65535),
    username: z.string().min(1),
    password: z.string().min(1),
    profile: Profile,
    sessionLimit: SessionLimit,
    quirks: Quirks,
  })
  .strict();

/** An NVLink switch's NVOS side: NVUE REST and SSH/SFTP on one loopback address (see SwitchSpec in nvos/switch.ts). */
const Switch = z
  .object({
    id: z.string().min(1),
    address: ipv4,
    nvuePort: z.number().int().min(1).max(65535),
    sshPort: z.number().int().min(1).max(65535),
    username: z.string().min(1),
    password: z.string().min(1),
    nvosVersion: z.string().regex(/^\d+\.\d+\.\d+$/, 'must be a build id such as 25.02.4282'),
    imageShape: z.enum(['string', 'object']).optional(),
    hostKeySeed: z.string().min(1).optional(),
  })
  .strict();

/** Simulated NVOS durations in seconds (before timeScale); see NvosTimings in nvos/switch.ts. */
const NvosTimings = z
  .object({
    applyS: z.number().positive(),
    actionS: z.number().positive(),
    installS: z.number().positive(),
    firmwareInstallS: z.number().positive(),
    handoffS: z.number().positive(),
    rebootS: z.number().positive(),
  })
  .partial()
  .strict();

/** Simulated durations in seconds (before timeScale); see Timings in redfish/bmc.ts. */
const Timings = z
  .object({
    powerOnS: z.number().positive(),
    gracefulShutdownS: z.number().positive(),
    cycleOffS: z.number().positive(),
    firmwareUpdateS: z.number().positive(),
    bmcRebootS: z.number().positive(),
  })
  .partial()
  .strict();

export const SimulatorConfig = z
  .object({
    log: LogConfig,
    timeScale: z.number().positive().max(100).default(1),
    timings: Timings.optional(),
    admin: z.object({ host: z.string().default('127.0.0.1'), port: z.number().int().min(0).max(65535) }).strict(),
    bmcs: z.array(Bmc).default([]),
    generate: z.array(Generated).default([]),
    switches: z.array(Switch).default([]),
    nvosTimings: NvosTimings.optional(),
    /**
     * BMCs serve HTTPS, each with its own certificate (its loopback address as IP SAN) issued at start from this site
     * CA (PEM files): what a site's BMC CA bundle or pins are checked against. Plain HTTP when absent.
     */
    bmcTls: z
      .object({ caCertFile: z.string().min(1), caKeyFile: z.string().min(1) })
      .strict()
      .optional(),
  })
  .strict()
  .refine((c) => c.bmcs.length + c.generate.length + c.switches.length > 0, {
    message: 'configure at least one BMC (bmcs or generate) or switch',
  });
export type SimulatorConfig = z.infer<typeof SimulatorConfig>;

/** Expands `generate` blocks into BMC specs. */
export function expandBmcs(c: SimulatorConfig): z.infer<typeof Bmc>[] {
  return [...c.bmcs, ...c.generate.flatMap(generatedBmcs)];
}

/** One `generate` block's BMC specs: ids `<idPrefix>0001` on, on 127.a.b.c counting up from firstAddress. */
export function generatedBmcs(g: z.infer<typeof Generated>): z.infer<typeof Bmc>[] {
  const base = g.firstAddress
    .split('.')
    .map(Number)
    .reduce((acc, o) => acc * 256 + o, 0);
  return Array.from({ length: g.count }, (_, i) => {
    const n = base + i;
    return {
      id: `${g.idPrefix}${String(i + 1).padStart(4, '0')}`,
      address: [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'),
      port: g.port,
      username: g.username,
      password: g.password,
      ...(g.profile ? { profile: g.profile } : {}),
      ...(g.sessionLimit ? { sessionLimit: g.sessionLimit } : {}),
      ...(g.quirks ? { quirks: g.quirks } : {}),
    };
  });
}
