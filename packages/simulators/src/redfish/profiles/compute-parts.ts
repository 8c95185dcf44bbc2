import type { SimulatedBmc } from '../bmc.js';
import {
  gpuId,
  nvl72,
  nvlinkId,
  nvlinksPerGpu,
  nvswitchId,
  positionOf,
  remotePortId,
  slotNumberOf,
  switchPortOf,
} from '../rack.js';
import { partKey, worst, type ActiveFault, type DeviceParts, type Health, type PartLocation } from '../tray-health.js';
import { faultConditions, ref, statusOf, type Tree } from './common.js';
import type { Body, FirmwareSpec } from './types.js';

/**
 * The parts of a compute tray as its BMC shows them, shaped after the GH200 capture: System_0 with the Grace CPUs and
 * their LPDDR5X, HGX_Baseboard_0 with the GPUs, their HBM and each GPU's NVLink ports (Processors/GPU_n/Ports). Every
 * part's Status follows the tray's injected faults (tray-health.ts); serial numbers follow its part swaps.
 */
export interface PartData {
  cpuModel: string;
  cpuCores: number;
  cpuPartNumber: string;
  gpuModel: string;
  gpuPartNumber: string;
  /** LPDDR5X per Grace CPU. */
  cpuMemoryMiB: number;
  /** HBM per GPU. */
  gpuMemoryMiB: number;
  gpuMemoryPartNumber: string;
  /** NVLink signalling rate per link and direction. */
  nvlinkGbps: number;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
export const CPUS = range(nvl72.cpusPerComputeTray);
export const GPUS = range(nvl72.gpusPerComputeTray);
const LINKS = range(nvlinksPerGpu);

export const SYSTEM = '/redfish/v1/Systems/System_0';
export const HGX = '/redfish/v1/Systems/HGX_Baseboard_0';
export const cpuPath = (i: number) => `${SYSTEM}/Processors/CPU_${i}`;
export const gpuPath = (i: number) => `${HGX}/Processors/${gpuId(i)}`;
export const portsPath = (gpu: number) => `${gpuPath(gpu)}/Ports`;
export const portPath = (gpu: number, link: number) => `${portsPath(gpu)}/${nvlinkId(link)}`;
export const cpuMemoryId = (i: number) => `ProcessorModule_${i}_Memory_0`;
export const gpuMemoryId = (i: number) => `GPU_${i}_DRAM_0`;
const cpuMemoryPath = (i: number) => `${SYSTEM}/Memory/${cpuMemoryId(i)}`;
const gpuMemoryPath = (i: number) => `${HGX}/Memory/${gpuMemoryId(i)}`;

/** The tray's leak detectors (on its own chassis, BMC_0): one on the CPU and one on the GPU cold-plate loop. */
export const LEAK_DETECTORS = [
  { id: 'LeakDetector_0', name: 'CPU Cold Plate Leak Detector', context: 'CPUSubsystem' },
  { id: 'LeakDetector_1', name: 'GPU Cold Plate Leak Detector', context: 'GPUSubsystem' },
] as const;
export const leakDetectorPath = (d: number) =>
  `/redfish/v1/Chassis/BMC_0/ThermalSubsystem/LeakDetection/LeakDetectors/${LEAK_DETECTORS[d]!.id}`;

/** Where a fault key of a compute tray shows, and which log records it (the HGX baseboard's for GPU-side parts). */
function locate(key: string): PartLocation {
  const [kind, a, b] = key.split('/') as [string, string, string?];
  const n = Number(a);
  switch (kind) {
    case 'gpu':
      return { name: gpuId(n), origin: gpuPath(n), log: 'gpu' };
    case 'nvlink':
      return { name: `${gpuId(n)} ${nvlinkId(Number(b))}`, origin: portPath(n, Number(b)), log: 'gpu' };
    case 'leak':
      return { name: LEAK_DETECTORS[n]!.id, origin: leakDetectorPath(n), log: 'system' };
    case 'thermal':
      return { name: a, origin: `/redfish/v1/Chassis/BMC_0/Sensors/${a}`, log: 'system' };
    case 'memory': {
      const cpu = CPUS.find((c) => cpuMemoryId(c) === a);
      return cpu === undefined
        ? { name: a, origin: `${HGX}/Memory/${a}`, log: 'gpu' }
        : { name: a, origin: cpuMemoryPath(cpu), log: 'system' };
    }
    default:
      return { name: key, origin: SYSTEM, log: 'system' };
  }
}

/** What the admin API may fault or swap on a compute tray; its temperature sensors are compute-sensors.ts's. */
export const computeParts: Omit<DeviceParts, 'temperatureSensors'> = {
  faults: ['gpu', 'memory', 'nvlink', 'leak', 'thermal'],
  swaps: true,
  cpus: CPUS.length,
  gpus: GPUS.length,
  nvlinksPerGpu,
  memory: [...CPUS.map(cpuMemoryId), ...GPUS.map(gpuMemoryId)],
  psus: 0,
  leakDetectors: LEAK_DETECTORS.length,
  gpuMemory: (gpu) => [gpuMemoryId(gpu)],
  locate,
};

// ---- health ------------------------------------------------------------------------------------

const faultOf = {
  gpu: (bmc: SimulatedBmc, g: number) => (bmc.hasPartFaults ? bmc.health().gpu(g) : undefined),
  memory: (bmc: SimulatedBmc, id: string) => (bmc.hasPartFaults ? bmc.health().memory(id) : undefined),
  nvlink: (bmc: SimulatedBmc, g: number, l: number) => (bmc.hasPartFaults ? bmc.health().nvlink(g, l) : undefined),
  leak: (bmc: SimulatedBmc, d: number) => (bmc.hasPartFaults ? bmc.health().leak(d) : undefined),
};

/**
 * False for a GPU that fell off the bus. Like bmcweb, the BMC keeps its inventory entry (the Processor stays in the
 * collection, its URI stable) with State Absent, and counts only present processors in ProcessorSummary.Count.
 */
export const gpuPresent = (bmc: SimulatedBmc, g: number): boolean => faultOf.gpu(bmc, g)?.offBus !== true;

/** A leak detector's DetectorState: the health of the leak injected on it. */
export const leakState = (bmc: SimulatedBmc, d: number): Health => faultOf.leak(bmc, d)?.health ?? 'OK';

const healthOf = (f: ActiveFault | undefined): Health => f?.health ?? 'OK';

export const gpuRollup = (bmc: SimulatedBmc, g: number): Health =>
  worst(
    healthOf(faultOf.gpu(bmc, g)),
    healthOf(faultOf.memory(bmc, gpuMemoryId(g))),
    ...LINKS.map((l) => healthOf(faultOf.nvlink(bmc, g, l))),
  );
/** A CPU has no faults of its own here; its rollup is its memory's. */
export const cpuRollup = (bmc: SimulatedBmc, c: number): Health => healthOf(faultOf.memory(bmc, cpuMemoryId(c)));

/** A link carries traffic while the host is up, its GPU is on the bus and no Critical fault took it down. */
export const linkUp = (bmc: SimulatedBmc, g: number, l: number): boolean =>
  bmc.powerState === 'On' && gpuPresent(bmc, g) && faultOf.nvlink(bmc, g, l)?.health !== 'Critical';

const partState = (bmc: SimulatedBmc) => (bmc.powerState === 'On' ? 'Enabled' : 'StandbyOffline');
/** A GPU's (and its HBM's) State: Absent once it fell off the bus. */
export const gpuState = (bmc: SimulatedBmc, g: number, state: string) => (gpuPresent(bmc, g) ? state : 'Absent');

/** Status with a Condition naming the fault, as NVIDIA's BMC lists them in Status.Conditions. */
function partStatus(state: string, fault: ActiveFault | undefined, part: string, rollup: Health): Body {
  const own = healthOf(fault);
  return { ...statusOf(state, own, worst(own, rollup)), Conditions: faultConditions(part, fault) };
}

// ---- systems -----------------------------------------------------------------------------------

const BOOT_TARGETS = ['None', 'Pxe', 'Hdd', 'Cd', 'Diags', 'BiosSetup', 'Usb'];

/** What System_0 adds to the common system body: summaries, BIOS, boot override, identity. */
export function hostSystemParts(
  bmc: SimulatedBmc,
  d: PartData & { sku: string; partNumber: string },
  uefi: FirmwareSpec,
): Body {
  const cpus = CPUS.map((c) => cpuRollup(bmc, c));
  return {
    AssetTag: '',
    SKU: d.sku,
    PartNumber: d.partNumber,
    BiosVersion: bmc.firmware(uefi).version,
    ProcessorSummary: {
      Count: CPUS.length,
      CoreCount: CPUS.length * d.cpuCores,
      Model: d.cpuModel,
      Status: statusOf(partState(bmc), 'OK', worst(...cpus)),
    },
    MemorySummary: {
      TotalSystemMemoryGiB: Math.floor((CPUS.length * d.cpuMemoryMiB) / 1024),
      Status: statusOf('Enabled', worst(...cpus)),
    },
    Memory: ref(`${SYSTEM}/Memory`),
    Boot: {
      BootSourceOverrideEnabled: 'Disabled',
      'BootSourceOverrideEnabled@Redfish.AllowableValues': ['Once', 'Continuous', 'Disabled'],
      BootSourceOverrideTarget: 'None',
      'BootSourceOverrideTarget@Redfish.AllowableValues': BOOT_TARGETS,
    },
    Status: statusOf('Enabled', 'OK', worst(...cpus)),
  };
}

/** What HGX_Baseboard_0 adds: the GPUs' summary and their HBM. */
export function gpuSystemParts(bmc: SimulatedBmc, d: PartData, baseboardPartNumber: string): Body {
  const gpus = GPUS.map((g) => gpuRollup(bmc, g));
  const present = GPUS.filter((g) => gpuPresent(bmc, g));
  return {
    PartNumber: baseboardPartNumber,
    ProcessorSummary: {
      Count: present.length,
      Model: d.gpuModel,
      Status: statusOf(partState(bmc), worst(...GPUS.map((g) => healthOf(faultOf.gpu(bmc, g)))), worst(...gpus)),
    },
    MemorySummary: {
      TotalSystemMemoryGiB: Math.floor((present.length * d.gpuMemoryMiB) / 1024),
      Status: statusOf('Enabled', worst(...GPUS.map((g) => healthOf(faultOf.memory(bmc, gpuMemoryId(g)))))),
    },
    Memory: ref(`${HGX}/Memory`),
    Status: statusOf('Enabled', 'OK', worst(...gpus)),
  };
}

// ---- processors, memory, ports -------------------------------------------------------------------

export function addParts(
  tree: Tree,
  d: PartData,
  firmware: (id: string) => FirmwareSpec,
  topology: (bmc: SimulatedBmc) => Body,
): void {
  const chassis = (id: string) => ref(`/redfish/v1/Chassis/${id}`);
  tree.collection(`${SYSTEM}/Processors`, 'ProcessorCollection', 'Processor Collection', CPUS.map(cpuPath));
  tree.collection(`${HGX}/Processors`, 'ProcessorCollection', 'Processor Collection', GPUS.map(gpuPath));
  tree.collection(`${SYSTEM}/Memory`, 'MemoryCollection', 'Memory Module Collection', CPUS.map(cpuMemoryPath));
  tree.collection(`${HGX}/Memory`, 'MemoryCollection', 'Memory Module Collection', GPUS.map(gpuMemoryPath));

  for (const c of CPUS) {
    tree.add(cpuPath(c), (bmc) => ({
      ...processorBase(cpuPath(c), `CPU_${c}`, 'CPU', d.cpuModel, d.cpuPartNumber),
      SerialNumber: bmc.partSerial(partKey.cpu(c)),
      TotalCores: d.cpuCores,
      TotalThreads: d.cpuCores,
      Socket: `G${c + 1}:0.0`,
      FirmwareVersion: bmc.firmware(firmware(`HGX_FW_CPU_${c}`)).version,
      Status: partStatus(partState(bmc), undefined, `CPU_${c}`, cpuRollup(bmc, c)),
      Links: { Chassis: chassis(`HGX_CPU_${c}`), Memory: [ref(cpuMemoryPath(c))] },
    }));
    tree.add(cpuMemoryPath(c), (bmc) =>
      memoryBody(bmc, cpuMemoryPath(c), cpuMemoryId(c), 'Enabled', {
        MemoryDeviceType: 'LPDDR5_SDRAM',
        CapacityMiB: d.cpuMemoryMiB,
        Location: { PartLocation: { ServiceLabel: `LP5x_${c}`, LocationType: 'Embedded' } },
        Links: { Processors: [ref(cpuPath(c))] },
      }),
    );
  }

  for (const g of GPUS) {
    tree.add(gpuPath(g), (bmc) => ({
      ...processorBase(gpuPath(g), gpuId(g), 'GPU', d.gpuModel, d.gpuPartNumber),
      SerialNumber: bmc.partSerial(partKey.gpu(g)),
      FirmwareVersion: bmc.firmware(firmware(`HGX_FW_GPU_${g}`)).version,
      Status: partStatus(gpuState(bmc, g, partState(bmc)), faultOf.gpu(bmc, g), gpuId(g), gpuRollup(bmc, g)),
      Ports: ref(portsPath(g)),
      Links: { Chassis: chassis(`HGX_GPU_${g}`), Memory: [ref(gpuMemoryPath(g))] },
      Oem: { Nvidia: { MNNVLinkTopology: topology(bmc) } },
    }));
    tree.add(gpuMemoryPath(g), (bmc) =>
      memoryBody(bmc, gpuMemoryPath(g), gpuMemoryId(g), gpuState(bmc, g, 'Enabled'), {
        MemoryDeviceType: 'HBM3',
        CapacityMiB: d.gpuMemoryMiB,
        PartNumber: d.gpuMemoryPartNumber,
        Location: { PartLocation: { LocationType: 'Embedded' } },
        Links: { Chassis: chassis(`HGX_GPU_${g}`), Processors: [ref(gpuPath(g))] },
      }),
    );
    tree.collection(
      portsPath(g),
      'PortCollection',
      'NVLink Port Collection',
      LINKS.map((l) => portPath(g, l)),
    );
    for (const l of LINKS) tree.add(portPath(g, l), (bmc) => gpuPortBody(bmc, d, g, l));
  }
}

function processorBase(path: string, id: string, type: 'CPU' | 'GPU', model: string, partNumber: string): Body {
  return {
    '@odata.id': path,
    '@odata.type': '#Processor.v1_13_0.Processor',
    Id: id,
    Name: 'Processor',
    ProcessorType: type,
    Manufacturer: 'NVIDIA',
    Model: model,
    PartNumber: partNumber,
  };
}

function memoryBody(bmc: SimulatedBmc, path: string, id: string, state: string, extra: Body): Body {
  return {
    '@odata.id': path,
    '@odata.type': '#Memory.v1_19_0.Memory',
    Id: id,
    Name: 'DIMM Slot',
    MemoryType: 'DRAM',
    Manufacturer: 'NVIDIA',
    ErrorCorrection: 'SingleBitECC',
    SerialNumber: bmc.partSerial(partKey.memory(id)),
    ...extra,
    Status: partStatus(state, faultOf.memory(bmc, id), id, 'OK'),
  };
}

/** A GPU's NVLink port: its link state, and the switch-tray port it is cabled to (RemotePortId, see rack.ts). */
function gpuPortBody(bmc: SimulatedBmc, d: PartData, g: number, l: number): Body {
  const position = positionOf(bmc, 'compute');
  const peer = switchPortOf({ trayIndex: position.traySlotIndex, gpu: g, link: l });
  const up = linkUp(bmc, g, l);
  return nvlinkPortBody({
    path: portPath(g, l),
    port: l,
    type: 'DownstreamPort',
    up,
    gbps: d.nvlinkGbps,
    remotePortId: remotePortId(
      position.chassisSerialNumber,
      slotNumberOf('switch', peer.switchIndex),
      nvswitchId(peer.nvswitch),
      nvlinkId(peer.port),
    ),
    status: partStatus(gpuState(bmc, g, partState(bmc)), faultOf.nvlink(bmc, g, l), `${gpuId(g)} ${nvlinkId(l)}`, 'OK'),
  });
}

/** One end of an NVLink cable, as the GPU (downstream) or the NVSwitch (upstream) side serves it. */
export function nvlinkPortBody(p: {
  path: string;
  port: number;
  type: 'DownstreamPort' | 'UpstreamPort';
  up: boolean;
  gbps: number;
  remotePortId: string;
  status: Body;
}): Body {
  return {
    '@odata.id': p.path,
    '@odata.type': '#Port.v1_8_0.Port',
    Id: nvlinkId(p.port),
    Name: `${nvlinkId(p.port)} Resource`,
    PortId: nvlinkId(p.port),
    PortProtocol: 'NVLink',
    PortType: p.type,
    LinkState: 'Enabled',
    LinkStatus: p.up ? 'LinkUp' : 'LinkDown',
    CurrentSpeedGbps: p.up ? p.gbps : 0,
    MaxSpeedGbps: p.gbps,
    RemotePortId: p.remotePortId,
    Status: p.status,
  };
}
