import type { SimulatedBmc } from './bmc.js';

/**
 * The NVL72 rack as the simulator lays it out: the one place tray counts, slot numbers and NVLink cabling come from.
 * 18 compute trays of 2 Grace CPUs and 4 GPUs, 9 NVLink switch trays of 2 NVSwitch chips. Every GPU has one NVLink
 * to every NVSwitch chip (18 links), so every chip has one port per GPU in the rack (72 ports).
 */
export const nvl72 = {
  computeTrays: 18,
  cpusPerComputeTray: 2,
  gpusPerComputeTray: 4,
  switchTrays: 9,
  nvswitchesPerSwitchTray: 2,
  /** Compute trays above the switch trays; the rest sit below them. */
  computeTraysAboveSwitches: 10,
} as const;

export const nvlinksPerGpu = nvl72.switchTrays * nvl72.nvswitchesPerSwitchTray;
export const portsPerNvswitch = nvl72.computeTrays * nvl72.gpusPerComputeTray;

export type RackKind = 'compute' | 'switch';

/** Where a tray sits: the rack's chassis serial number, its slot (1-based, from the top) and its index by kind. */
export interface TrayPosition {
  chassisSerialNumber: string;
  traySlotNumber: number;
  traySlotIndex: number;
}

const traysOf = (kind: RackKind) => (kind === 'compute' ? nvl72.computeTrays : nvl72.switchTrays);

/** The trailing number of a BMC id (`r1-ct07` → 7), 1 when it has none. */
function ordinalOf(id: string): number {
  return Math.max(Number(/(\d+)$/.exec(id)?.[1] ?? '1'), 1);
}

/**
 * The rack a BMC belongs to: its configured rack, else its power domain (a rack's shelves feed the whole rack),
 * else one derived from the id's number so consecutive generated ids fill racks in order.
 */
export function rackKeyOf(bmc: SimulatedBmc, kind: RackKind): string {
  if (bmc.spec.topology) return bmc.spec.topology.chassisSerialNumber;
  const named = bmc.spec.rack ?? bmc.spec.powerDomain;
  if (named) return named;
  return String(Math.floor((ordinalOf(bmc.spec.id) - 1) / traysOf(kind)));
}

function chassisSerialOf(bmc: SimulatedBmc, kind: RackKind): string {
  if (bmc.spec.topology) return bmc.spec.topology.chassisSerialNumber;
  const named = bmc.spec.rack ?? bmc.spec.powerDomain;
  if (named) return `SIMRACK${named.toUpperCase().replace(/[^A-Z0-9]/g, '')}`;
  return `SIMRACK${rackKeyOf(bmc, kind).padStart(5, '0')}`;
}

export function slotNumberOf(kind: RackKind, index: number): number {
  if (kind === 'switch') return nvl72.computeTraysAboveSwitches + 1 + index;
  return index < nvl72.computeTraysAboveSwitches ? index + 1 : index + 1 + nvl72.switchTrays;
}

/**
 * A tray's place in its rack. Real trays read it from the rack's CBC; here it is configured (compute trays), or the
 * id's trailing number counts trays of the kind (`ct01`..`ct18`, `nvsw01`..`nvsw09`).
 */
export function positionOf(bmc: SimulatedBmc, kind: RackKind): TrayPosition {
  const t = bmc.spec.topology;
  if (t)
    return {
      chassisSerialNumber: t.chassisSerialNumber,
      traySlotNumber: t.traySlotNumber,
      traySlotIndex: t.traySlotIndex,
    };
  const index = (ordinalOf(bmc.spec.id) - 1) % traysOf(kind);
  return {
    chassisSerialNumber: chassisSerialOf(bmc, kind),
    traySlotNumber: slotNumberOf(kind, index),
    traySlotIndex: index,
  };
}

// ---- NVLink cabling ----------------------------------------------------------------------------

/** One end of an NVLink: a GPU's link on a compute tray, or an NVSwitch chip's port on a switch tray. */
export interface GpuLink {
  trayIndex: number;
  gpu: number;
  link: number;
}
export interface SwitchPort {
  switchIndex: number;
  nvswitch: number;
  port: number;
}

/** GPU link l goes to chip l mod 2 of switch tray l div 2, on the port numbered by the GPU's place in the rack. */
export function switchPortOf(l: GpuLink): SwitchPort {
  return {
    switchIndex: Math.floor(l.link / nvl72.nvswitchesPerSwitchTray),
    nvswitch: l.link % nvl72.nvswitchesPerSwitchTray,
    port: l.trayIndex * nvl72.gpusPerComputeTray + l.gpu,
  };
}

/** The inverse of switchPortOf. */
export function gpuLinkOf(p: SwitchPort): GpuLink {
  return {
    trayIndex: Math.floor(p.port / nvl72.gpusPerComputeTray),
    gpu: p.port % nvl72.gpusPerComputeTray,
    link: p.switchIndex * nvl72.nvswitchesPerSwitchTray + p.nvswitch,
  };
}

export const gpuId = (gpu: number) => `GPU_${gpu}`;
export const nvswitchId = (chip: number) => `NVSwitch_${chip}`;
export const nvlinkId = (port: number) => `NVLink_${port}`;

/**
 * Port.RemotePortId: `<rack chassis serial>/Slot_<slot>/<GPU_n|NVSwitch_n>/NVLink_<n>`. It names the far end by the
 * rack layout alone, so a reader matches both ends without knowing which BMC serves the other tray.
 */
export function remotePortId(chassisSerialNumber: string, slot: number, part: string, port: string): string {
  return `${chassisSerialNumber}/Slot_${String(slot).padStart(2, '0')}/${part}/${port}`;
}

// ---- rack membership -----------------------------------------------------------------------------

/** The trays of one simulated rack by index, so a switch tray can see the state of the compute tray it links to. */
export interface Rack {
  compute: Map<number, SimulatedBmc>;
  switch: Map<number, SimulatedBmc>;
}

const rackKindOf = (b: SimulatedBmc): RackKind | undefined =>
  b.profile.kind === 'compute' ? 'compute' : b.profile.kind === 'switch' ? 'switch' : undefined;

/** Groups compute and switch trays by rack and hands each its rack. */
export function wireRacks(bmcs: Iterable<SimulatedBmc>): void {
  const racks = new Map<string, Rack>();
  for (const b of bmcs) {
    const kind = rackKindOf(b);
    if (!kind) continue;
    const key = rackKeyOf(b, kind);
    let rack = racks.get(key);
    if (!rack) racks.set(key, (rack = { compute: new Map(), switch: new Map() }));
    rack[kind].set(positionOf(b, kind).traySlotIndex, b);
    b.rack = rack;
  }
}
