import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * The health of a compute tray's parts, switched at run time through the admin API: faults on a GPU, a memory
 * device or one NVLink of a GPU, and part swaps. Redfish shows a fault in the Status.Health of that part (and the
 * HealthRollup above it); the admin health report turns the same state into a burn-in verdict.
 */
export type Health = 'OK' | 'Warning' | 'Critical';

const severity = z.enum(['Warning', 'Critical']).default('Critical');
const reason = z.string().min(1).max(200).optional();

export const PartFault = z.discriminatedUnion('part', [
  z.object({ part: z.literal('gpu'), gpu: z.number().int().min(0), health: severity, reason }).strict(),
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
}

/** What a compute tray is made of, for checking that a fault or swap names a part the tray has. */
export interface TrayParts {
  cpus: number;
  gpus: number;
  nvlinksPerGpu: number;
  memory: readonly string[];
  /** The memory devices inside a GPU package (its HBM): they go with the GPU when it is swapped. */
  gpuMemory(gpu: number): readonly string[];
}

const faultKey = (f: { part: string; gpu?: number; memory?: string; port?: number }): string =>
  f.part === 'memory' ? `memory/${f.memory}` : f.part === 'gpu' ? `gpu/${f.gpu}` : `nvlink/${f.gpu}/${f.port}`;

/** Why a fault or swap does not fit the tray, or undefined when it does. */
export function partProblem(parts: TrayParts, p: PartFault | PartSwap): string | undefined {
  if ('gpu' in p && p.gpu >= parts.gpus) return `no GPU ${p.gpu}: the tray has ${parts.gpus}`;
  if ('cpu' in p && p.cpu >= parts.cpus) return `no CPU ${p.cpu}: the tray has ${parts.cpus}`;
  if ('port' in p && p.port >= parts.nvlinksPerGpu) return `no NVLink ${p.port}: a GPU has ${parts.nvlinksPerGpu}`;
  if ('memory' in p && !parts.memory.includes(p.memory))
    return `no memory ${p.memory}: the tray has ${parts.memory.join(', ')}`;
  return undefined;
}

export class TrayHealth {
  private readonly faults = new Map<string, ActiveFault>();
  /** Swap generation per part key; absent means the part the tray shipped with. */
  private readonly swaps = new Map<string, number>();

  /** Sets (or replaces) a fault. */
  inject(f: PartFault): void {
    this.faults.set(faultKey(f), {
      health: f.health,
      reason: f.reason ?? `injected ${f.health.toLowerCase()} fault`,
      since: new Date().toISOString(),
    });
  }

  clear(): void {
    this.faults.clear();
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

  /** Every active fault with the part it sits on, in injection order. */
  list(): ({ part: string } & ActiveFault)[] {
    return [...this.faults].map(([part, f]) => ({ part, ...f }));
  }

  /** Replaces a part: a new serial, and the faults of the part (and of the memory inside a GPU) are gone. */
  swap(s: PartSwap, parts: TrayParts): void {
    const keys =
      s.part === 'gpu'
        ? [`gpu/${s.gpu}`, ...parts.gpuMemory(s.gpu).map((m) => `memory/${m}`)]
        : s.part === 'cpu'
          ? [`cpu/${s.cpu}`]
          : [`memory/${s.memory}`];
    for (const k of keys) {
      this.swaps.set(k, (this.swaps.get(k) ?? 0) + 1);
      this.faults.delete(k);
    }
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
