/**
 * A device's hardware inventory as its BMC reports it over Redfish (not NetBox's record of it): identity, parts with
 * their serial and part numbers, NICs, firmware and, on compute and switch trays, where the tray sits in its rack and
 * its NVLink ports. A satellite activity reads it; these parsed fields and a digest of the Redfish documents they came
 * from travel through Temporal, the documents themselves do not. Dependency-free (no zod) so workflow code may use it.
 */
import type { BmcTarget } from './contracts.js';
import type { ComponentVersion } from './firmware.js';
import type { NodeKind } from './hardware.js';

/** Redfish `Status`, with the messages of its `Conditions` (NVIDIA's BMC names a part's fault there). */
export interface InventoryStatus {
  state?: string;
  health?: string;
  healthRollup?: string;
  conditions?: string[];
}

export type InventoryPartKind = 'cpu' | 'gpu' | 'memory' | 'nvswitch' | 'psu';

/** A part the BMC lists: a processor, a memory device, an NVSwitch chip or a power supply. */
export interface InventoryPart {
  /** The Redfish `Id` (GPU_2, CPU_0, GPU_1_DRAM_0, NVSwitch_0, PSU_3). */
  id: string;
  kind: InventoryPartKind;
  uri: string;
  manufacturer?: string;
  model?: string;
  partNumber?: string;
  serialNumber?: string;
  firmwareVersion?: string;
  /** Memory devices: capacity. */
  capacityMiB?: number;
  /** CPUs: cores. */
  cores?: number;
  status?: InventoryStatus;
}

/** A network interface of the device's controllers (BMC eth0, HMC usb0) or of its host. */
export interface InventoryNic {
  /** The manager or system the interface belongs to (BMC_0, HGX_BMC_0, System_0). */
  owner: string;
  id: string;
  uri: string;
  macAddress?: string;
  ipv4Addresses: string[];
  linkStatus?: string;
  speedMbps?: number;
}

/** Where a tray sits in its rack (NVIDIA's `Oem.Nvidia.MNNVLinkTopology`). */
export interface TrayLocation {
  /** The rack's chassis serial number: trays that report the same one share an NVLink domain. */
  chassisSerialNumber?: string;
  slotNumber?: number;
  slotIndex?: number;
  traySerialNumber?: string;
}

/** One NVLink port of a GPU (compute tray) or an NVSwitch chip (switch tray), with the far end it names. */
export interface NvlinkPort {
  /** The GPU or NVSwitch chip (GPU_0, NVSwitch_1). */
  part: string;
  /** The port's Id (NVLink_5). */
  port: string;
  /** `<rack chassis serial>/Slot_<nn>/<GPU_n|NVSwitch_n>/NVLink_<n>`: the far end, on another BMC. */
  remotePortId?: string;
  linkStatus?: string;
  health?: string;
}

/** The device itself: the host system of a tray, the shelf chassis of a power shelf. */
export interface InventoryIdentity {
  uri: string;
  manufacturer?: string;
  model?: string;
  sku?: string;
  partNumber?: string;
  serialNumber?: string;
  assetTag?: string;
  biosVersion?: string;
  status?: InventoryStatus;
}

/** The summaries the BMC gives besides its parts (System ProcessorSummary and MemorySummary). */
export interface InventorySummary {
  cpuCount?: number;
  cpuCores?: number;
  gpuCount?: number;
  /** Host memory. */
  memoryGiB?: number;
  /** GPU memory (HBM) over all GPUs. */
  gpuMemoryGiB?: number;
}

export interface HardwareInventory {
  deviceId: string;
  nodeType: string;
  kind: NodeKind;
  identity: InventoryIdentity;
  summary: InventorySummary;
  cpus: InventoryPart[];
  gpus: InventoryPart[];
  memory: InventoryPart[];
  nvswitches: InventoryPart[];
  powerSupplies: InventoryPart[];
  nics: InventoryNic[];
  firmware: ComponentVersion[];
  location?: TrayLocation;
  nvlinkPorts: NvlinkPort[];
  /** What the BMC listed inconsistently (a member listed twice, a listed member that answers 404). */
  warnings: string[];
}

/** What the read returns to a workflow: the parsed fields and where the Redfish documents are (by digest). */
export interface HardwareInventoryReading {
  deviceId: string;
  inventory: HardwareInventory;
  /**
   * `sha256:<hex>` of the document: every Redfish resource the read used, by URI, as canonical JSON (keys sorted at
   * every level, no whitespace), so the same answers give the same digest.
   */
  document: { digest: string; bytes: number; resources: number };
}

/** The satellite activity that reads it (Temporal activity types, for workflows). */
export interface HardwareInventoryActivities {
  readHardwareInventory(input: { target: BmcTarget }): Promise<HardwareInventoryReading>;
}

/** The serial numbers an inventory reports, by part id, and `tray` for the device: a baseline to pin a profile to. */
export function serialsOf(inventory: HardwareInventory): Record<string, string> {
  const out: Record<string, string> = {};
  if (inventory.identity.serialNumber) out[traySerialKey] = inventory.identity.serialNumber;
  for (const p of partsOf(inventory)) if (p.serialNumber) out[p.id] = p.serialNumber;
  return out;
}

/** The key serialsOf and a profile's `serials` use for the device's own serial number. */
export const traySerialKey = 'tray';

export function partsOf(inventory: HardwareInventory): InventoryPart[] {
  return [
    ...inventory.cpus,
    ...inventory.gpus,
    ...inventory.memory,
    ...inventory.nvswitches,
    ...inventory.powerSupplies,
  ];
}
