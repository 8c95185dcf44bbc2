import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * The health of a device's parts, switched at run time through the admin API: on a compute tray faults on a GPU (also
 * one fallen off the bus), a memory device, one NVLink of a GPU or a leak detector, and part swaps; on a power shelf
 * faults on a PSU; on either, a temperature sensor of the device's own chassis past its threshold. Redfish shows a
 * fault in the Status.Health of that part (and the HealthRollup above it), the BMC logs it and sends it to its event
 * subscribers (announce.ts); the admin health report turns the same state into a burn-in verdict.
 */
export type Health = 'OK' | 'Warning' | 'Critical';

const severity = z.enum(['Warning', 'Critical']).default('Critical');
const reason = z.string().min(1).max(200).optional();
/**
 * What alone ends the fault (a remediation playbook's steps are told apart by it): `ac_loss`, the tray losing AC (its
 * shelves off, then on; a BMC or host reset does not), as a GPU wedged until its power rails drop; `reflash`, a
 * firmware image activating on the tray, as a corrupt image does. Absent: only clearing or a swap ends it.
 */
export const clearEvents = ['ac_loss', 'reflash'] as const;
export type ClearEvent = (typeof clearEvents)[number];
const clearsOn = z.enum(clearEvents).optional();

export const PartFault = z.discriminatedUnion('part', [
  /** `offBus`: the GPU fell off the bus; it stays listed with State Absent (always Critical). */
  z
    .object({
      part: z.literal('gpu'),
      gpu: z.number().int().min(0),
      offBus: z.boolean().optional(),
      health: severity,
      reason,
      clearsOn,
    })
    .strict(),
  /** A memory device by its Redfish id, e.g. GPU_1_DRAM_0 (HBM) or ProcessorModule_0_Memory_0 (LPDDR5X). */
  z.object({ part: z.literal('memory'), memory: z.string().min(1), health: severity, reason }).strict(),
  /** One NVLink of a GPU; Critical takes the link down, Warning leaves it up but degraded. */
  z
    .object({
      part: z.literal('nvlink'),
      gpu: z.number().int().min(0),
      port: z.number().int().min(0),
      health: severity,
      reason,
    })
    .strict(),
  /** One PSU of a power shelf; a Critical PSU delivers no power. */
  z.object({ part: z.literal('psu'), psu: z.number().int().min(0), health: severity, reason }).strict(),
  /** A leak detector of a compute tray trips: its DetectorState becomes the fault's health. */
  z.object({ part: z.literal('leak'), detector: z.number().int().min(0), health: severity, reason }).strict(),
  /** A temperature sensor (by its Sensor Id) reads past its UpperCaution (Warning) or UpperCritical (Critical). */
  z.object({ part: z.literal('thermal'), sensor: z.string().min(1), health: severity, reason }).strict(),
]);
export type PartFault = z.infer<typeof PartFault>;

export const PartFaults = z.object({ faults: z.array(PartFault) }).strict();

/** A part taken out and replaced by a new one: it gets a new serial number and none of the old one's faults. */
export const PartSwap = z.discriminatedUnion('part', [
  z.object({ part: z.literal('gpu'), gpu: z.number().int().min(0) }).strict(),
  z.object({ part: z.literal('cpu'), cpu: z.number().int().min(0) }).strict(),
  z.object({ part: z.literal('memory'), memory: z.string().min(1) }).strict(),
]);
export type PartSwap = z.infer<typeof PartSwap>;

export interface ActiveFault {
  health: Exclude<Health, 'OK'>;
  reason: string;
  since: string;
  /** A GPU that fell off the bus. */
  offBus?: boolean;
  clearsOn?: ClearEvent;
}

/** What a device is made of, for checking that a fault or swap names a part it has. */
export interface DeviceParts {
  /** The fault kinds the device takes (a power shelf only PSU faults). */
  faults: readonly PartFault['part'][];
  /** Whether parts can be swapped (compute trays). */
  swaps: boolean;
  cpus: number;
  gpus: number;
  nvlinksPerGpu: number;
  memory: readonly string[];
  psus: number;
  leakDetectors: number;
  /** The temperature sensors (Sensor Ids) of the device's own chassis, which take thermal faults. */
  temperatureSensors: readonly string[];
  /** The memory devices inside a GPU package (its HBM): they go with the GPU when it is swapped. */
  gpuMemory(gpu: number): readonly string[];
  /** How the BMC names the part a fault key sits on, the resource that shows it and the log that records it. */
  locate(key: string): PartLocation;
}

export interface PartLocation {
  /** The part's Redfish name, e.g. GPU_2, PSU_3, LeakDetector_0, "GPU_0 NVLink_5". */
  name: string;
  /** The resource that shows the fault (OriginOfCondition of its log entries and events). */
  origin: string;
  /** The event log the BMC records it in. */
  log: LogScope;
}

/** The BMC's event logs: the host system's, the HGX baseboard's (GPUs) and the manager's own. */
export type LogScope = 'system' | 'gpu' | 'manager';

export const faultKey = (f: PartFault): string => {
  switch (f.part) {
    case 'gpu':
      return `gpu/${f.gpu}`;
    case 'memory':
      return `memory/${f.memory}`;
    case 'nvlink':
      return `nvlink/${f.gpu}/${f.port}`;
    case 'psu':
      return `psu/${f.psu}`;
    case 'leak':
      return `leak/${f.detector}`;
    case 'thermal':
      return `thermal/${f.sensor}`;
  }
};

/** Why a fault or swap does not fit the device, or undefined when it does. */
export function partProblem(parts: DeviceParts, p: PartFault | PartSwap): string | undefined {
  if ('gpu' in p && p.gpu >= parts.gpus) return `no GPU ${p.gpu}: the tray has ${parts.gpus}`;
  if ('cpu' in p && p.cpu >= parts.cpus) return `no CPU ${p.cpu}: the tray has ${parts.cpus}`;
  if ('port' in p && p.port >= parts.nvlinksPerGpu) return `no NVLink ${p.port}: a GPU has ${parts.nvlinksPerGpu}`;
  if ('memory' in p && !parts.memory.includes(p.memory))
    return `no memory ${p.memory}: the tray has ${parts.memory.join(', ')}`;
  if ('psu' in p && p.psu >= parts.psus) return `no PSU ${p.psu}: the shelf has ${parts.psus}`;
  if ('detector' in p && p.detector >= parts.leakDetectors)
    return `no leak detector ${p.detector}: the tray has ${parts.leakDetectors}`;
  if ('sensor' in p && !parts.temperatureSensors.includes(p.sensor))
    return `no temperature sensor ${p.sensor}: the device has ${parts.temperatureSensors.join(', ')}`;
  if ('offBus' in p && p.offBus && p.health === 'Warning') return 'a GPU off the bus is Critical, not Warning';
  return undefined;
}

export class TrayHealth {
  private readonly faults = new Map<string, ActiveFault>();
  /** Swap generation per part key; absent means the part the tray shipped with. */
  private readonly swaps = new Map<string, number>();

  /** Sets (or replaces) a fault; answers its key and the fault. */
  inject(f: PartFault): [string, ActiveFault] {
    const offBus = f.part === 'gpu' && f.offBus === true;
    const fault: ActiveFault = {
      health: f.health,
      reason: f.reason ?? (offBus ? 'fell off the bus' : `injected ${f.health.toLowerCase()} fault`),
      since: new Date().toISOString(),
      ...(offBus ? { offBus } : {}),
      ...('clearsOn' in f && f.clearsOn ? { clearsOn: f.clearsOn } : {}),
    };
    this.faults.set(faultKey(f), fault);
    return [faultKey(f), fault];
  }

  /** Clears every fault; answers the cleared ones. */
  clear(): [string, ActiveFault][] {
    const cleared = [...this.faults];
    this.faults.clear();
    return cleared;
  }

  /** Ends the faults that `event` clears; answers them. */
  clearOn(event: ClearEvent): [string, ActiveFault][] {
    const cleared = [...this.faults].filter(([, f]) => f.clearsOn === event);
    for (const [key] of cleared) this.faults.delete(key);
    return cleared;
  }

  get faultCount(): number {
    return this.faults.size;
  }

  gpu(gpu: number): ActiveFault | undefined {
    return this.faults.get(`gpu/${gpu}`);
  }

  memory(id: string): ActiveFault | undefined {
    return this.faults.get(`memory/${id}`);
  }

  nvlink(gpu: number, port: number): ActiveFault | undefined {
    return this.faults.get(`nvlink/${gpu}/${port}`);
  }

  psu(psu: number): ActiveFault | undefined {
    return this.faults.get(`psu/${psu}`);
  }

  leak(detector: number): ActiveFault | undefined {
    return this.faults.get(`leak/${detector}`);
  }

  thermal(sensor: string): ActiveFault | undefined {
    return this.faults.get(`thermal/${sensor}`);
  }

  /** Every active fault with the part it sits on, in injection order. */
  list(): ({ part: string } & ActiveFault)[] {
    return [...this.faults].map(([part, f]) => ({ part, ...f }));
  }

  /**
   * Replaces a part: a new serial, and the faults of the part (and of the memory inside a GPU) are gone. Answers the
   * faults it took away.
   */
  swap(s: PartSwap, parts: DeviceParts): [string, ActiveFault][] {
    const keys =
      s.part === 'gpu'
        ? [`gpu/${s.gpu}`, ...parts.gpuMemory(s.gpu).map((m) => `memory/${m}`)]
        : s.part === 'cpu'
          ? [`cpu/${s.cpu}`]
          : [`memory/${s.memory}`];
    const removed: [string, ActiveFault][] = [];
    for (const k of keys) {
      this.swaps.set(k, (this.swaps.get(k) ?? 0) + 1);
      const fault = this.faults.get(k);
      if (fault) removed.push([k, fault]);
      this.faults.delete(k);
    }
    return removed;
  }

  generation(partKey: string): number {
    return this.swaps.get(partKey) ?? 0;
  }
}

export const partKey = {
  gpu: (i: number) => `gpu/${i}`,
  cpu: (i: number) => `cpu/${i}`,
  memory: (id: string) => `memory/${id}`,
};

/**
 * A part's serial number: 13 digits like NVIDIA's, derived from the device id, the part and how often the part was
 * swapped, so every run of the simulator shows the same serials and a swapped part a new one.
 */
export function partSerial(deviceId: string, partKey: string, generation: number): string {
  const digest = createHash('sha256').update(`${deviceId}|${partKey}|${generation}`).digest();
  return `1${(digest.readBigUInt64BE(0) % 10n ** 12n).toString().padStart(12, '0')}`;
}

const rank: Record<Health, number> = { OK: 0, Warning: 1, Critical: 2 };

/** The worst of some healths (OK when there are none). */
export function worst(...healths: Health[]): Health {
  return healths.reduce<Health>((a, b) => (rank[b] > rank[a] ? b : a), 'OK');
}
