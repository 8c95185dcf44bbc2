import type { SimulatedBmc } from '../bmc.js';
import { positionOf } from '../rack.js';
import { partKey, worst } from '../tray-health.js';
import {
  addChassis,
  addManager,
  addServiceBasics,
  addSystems,
  ref,
  refs,
  resetAction,
  Tree,
  uuidFor,
} from './common.js';
import {
  addParts,
  computeParts,
  CPUS,
  cpuRollup,
  gpuRollup,
  gpuState,
  gpuSystemParts,
  GPUS,
  hostSystemParts,
  type PartData,
} from './compute-parts.js';
import { addCpuEnvironment, addGpuEnvironment, addTrayEnvironment, trayTemperatureSensors } from './compute-sensors.js';
import { addAccountService } from './accounts.js';
import { addEventLog, addEventService } from './logs.js';
import type { Body, FirmwareSpec, PowerControl, Profile } from './types.js';

/**
 * NVIDIA GB200/GB300 NVL compute tray BMC, shaped after the NVIDIA OpenBMC tree (GH200 capture:
 * the same HGX_* naming) and docs/reference/rms-behaviours.md#redfish-power: System_0 with the two Grace CPUs,
 * HGX_Baseboard_0 with the four GPUs carrying Oem.Nvidia.MNNVLinkTopology, BMC_0 plus the HMC (HGX_BMC_0), the CBC
 * chassis, and a PLDM-updatable firmware inventory split between the BMC tray and the HGX side. Part counts come
 * from the rack layout (rack.ts), part bodies from compute-parts.ts.
 */
export interface ComputeTrayData {
  id: string;
  label: string;
  /** System and CBC model strings, e.g. "GB200 NVL". */
  model: string;
  product: string;
  /** System_0 SKU and PartNumber, and the PartNumber of HGX_Baseboard_0. */
  sku: string;
  partNumber: string;
  baseboardPartNumber: string;
  parts: PartData;
  /** PLDM device UUIDs: the BMC tray package and the compute (HGX) tray package. */
  devices: { bmcTray: string; computeTray: string };
  versions: {
    bmc: string;
    erot: string;
    cpld: string;
    hmc: string;
    cpu: string;
    gpu: string;
    fpga: string;
    uefi: string;
    inforom: string;
  };
  /** Comparison stamp shared by the shipped images; packages below it are downgrades. */
  stamp: number;
}

export function computeTray(d: ComputeTrayData): Profile {
  const fw = (
    id: string,
    related: string,
    description: string,
    version: string,
    componentId: number | undefined,
    device: string | undefined,
    softwareId: string,
  ): FirmwareSpec => ({
    id,
    related,
    description,
    version,
    stamp: d.stamp,
    ...(componentId !== undefined ? { componentId } : {}),
    ...(device !== undefined ? { device } : {}),
    softwareId,
  });
  const { bmcTray, computeTray: hgx } = d.devices;
  const chassis = (id: string) => `/redfish/v1/Chassis/${id}`;
  const firmware: FirmwareSpec[] = [
    fw('FW_BMC_0', chassis('BMC_0'), 'BMC image', d.versions.bmc, 0x0010, bmcTray, '0x0010'),
    fw('FW_ERoT_BMC_0', chassis('ERoT_BMC_0'), 'ERoT image', d.versions.erot, 0x0011, bmcTray, '0x0011'),
    fw('FW_CPLD_0', chassis('CPLD_0'), 'CPLD image', d.versions.cpld, 0x0012, bmcTray, '0x0012'),
    fw('HGX_FW_BMC_0', chassis('HGX_BMC_0'), 'HMC image', d.versions.hmc, 0x0020, hgx, '0x0020'),
    fw('HGX_FW_ERoT_BMC_0', chassis('HGX_ERoT_BMC_0'), 'ERoT image', d.versions.erot, 0x0021, hgx, '0x0021'),
    ...CPUS.map((i) =>
      fw(`HGX_FW_CPU_${i}`, chassis(`HGX_CPU_${i}`), 'CPU image', d.versions.cpu, 0x0030 + i, hgx, '0x0030'),
    ),
    ...CPUS.map((i) =>
      fw(
        `HGX_FW_ERoT_CPU_${i}`,
        chassis(`HGX_ERoT_CPU_${i}`),
        'ERoT image',
        d.versions.erot,
        0x0034 + i,
        hgx,
        '0x0031',
      ),
    ),
    ...GPUS.map((i) =>
      fw(`HGX_FW_GPU_${i}`, chassis(`HGX_GPU_${i}`), 'GPU image', d.versions.gpu, 0x0040 + i, hgx, '0x0040'),
    ),
    ...GPUS.map((i) =>
      fw(
        `HGX_FW_ERoT_GPU_${i}`,
        chassis(`HGX_ERoT_GPU_${i}`),
        'ERoT image',
        d.versions.erot,
        0x0048 + i,
        hgx,
        '0x0041',
      ),
    ),
    fw('HGX_FW_FPGA_0', chassis('HGX_FPGA_0'), 'FPGA image', d.versions.fpga, 0x0050, hgx, '0x0050'),
    ...GPUS.map((i) =>
      fw(
        `HGX_InfoROM_GPU_${i}`,
        chassis(`HGX_GPU_${i}`),
        'InfoROM image',
        d.versions.inforom,
        undefined,
        undefined,
        '0x0042',
      ),
    ),
    fw('UEFI', '/redfish/v1/Systems/System_0', 'Host firmware', d.versions.uefi, 0x0060, hgx, '0x0060'),
  ];

  const tree = new Tree();
  const power: PowerControl = {
    resource: '/redfish/v1/Systems/System_0',
    action: '/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset',
    actionName: 'ComputerSystem.Reset',
    resetTypes: ['On', 'ForceOn', 'ForceOff', 'GracefulShutdown', 'GracefulRestart', 'ForceRestart', 'PowerCycle'],
  };
  const BMC = '/redfish/v1/Managers/BMC_0';
  const HMC = '/redfish/v1/Managers/HGX_BMC_0';
  addServiceBasics(
    tree,
    { product: d.product, vendor: 'NVIDIA', systems: true, managerProvidingService: BMC },
    firmware,
    209_715_200,
  );

  // Systems: the host (System_0, Grace CPUs) and the HGX baseboard (GPUs), as NVIDIA's BMC lays them out.
  const systems = ['/redfish/v1/Systems/System_0', '/redfish/v1/Systems/HGX_Baseboard_0'];
  addSystems(tree, systems);
  const reset = resetAction(tree, power, power.resource);
  const uefi = firmware.find((f) => f.id === 'UEFI')!;
  tree.add(
    power.resource,
    (bmc) => ({
      ...systemBody(bmc, 'System_0', d.model, BMC, [chassis('BMC_0'), chassis('CBC_0')]),
      ...hostSystemParts(bmc, { ...d.parts, sku: d.sku, partNumber: d.partNumber }, uefi),
      Actions: { '#ComputerSystem.Reset': reset(bmc) },
    }),
    ['AssetTag', 'LocationIndicatorActive', 'Boot'],
  );
  tree.add(
    '/redfish/v1/Systems/HGX_Baseboard_0',
    (bmc) => ({
      ...systemBody(bmc, 'HGX_Baseboard_0', `${d.model} HGX`, HMC, [chassis('HGX_Chassis_0')]),
      AssetTag: '',
      ...gpuSystemParts(bmc, d.parts, d.baseboardPartNumber),
    }),
    ['AssetTag'],
  );
  const eventLogs = {
    system: addEventLog(tree, systems[0]!, 'System Event Log Service'),
    gpu: addEventLog(tree, systems[1]!, 'HGX Event Log Service'),
    manager: addEventLog(tree, BMC, 'BMC Event Log Service'),
  };
  addEventService(tree);
  addAccountService(tree);
  const byId = (id: string) => firmware.find((f) => f.id === id)!;
  addParts(tree, d.parts, byId, (bmc) => ({
    ...mnnvlinkTopology(bmc),
    TraySerialNumber: bmc.serialNumber,
  }));

  // Chassis: the tray itself, the CBC, the HGX zone and one chassis per component that firmware lives on.
  const hgxParts = [
    'HGX_BMC_0',
    'HGX_ERoT_BMC_0',
    ...CPUS.flatMap((i) => [`HGX_CPU_${i}`, `HGX_ERoT_CPU_${i}`]),
    ...GPUS.flatMap((i) => [`HGX_GPU_${i}`, `HGX_ERoT_GPU_${i}`]),
    'HGX_FPGA_0',
  ];
  const tray = addTrayEnvironment(tree);
  const parts = hgxParts.map((id) => ({ id, ...partChassis(tree, id) }));
  // The HGX zone's rollup is the worst of its parts; the tray's adds its own sensors and leak detectors, so one read
  // of BMC_0 tells whether anything on the tray is unhealthy (docs/day2.md).
  const hgxHealth = (bmc: SimulatedBmc) =>
    worst(...parts.map((p) => worst(p.health?.(bmc) ?? 'OK', p.rollup?.(bmc) ?? 'OK')));
  const all = [
    addChassis(tree, {
      id: 'BMC_0',
      name: 'BMC_0',
      type: 'Module',
      model: d.model,
      partNumber: d.partNumber,
      managedBy: BMC,
      powered: true,
      systems: [systems[0]!],
      contains: [chassis('ERoT_BMC_0'), chassis('CPLD_0'), chassis('CBC_0'), chassis('HGX_Chassis_0')],
      rollup: (bmc) => worst(tray.health(bmc), hgxHealth(bmc)),
      extra: () => tray.links,
    }),
    addChassis(tree, { id: 'ERoT_BMC_0', name: 'ERoT_BMC_0', type: 'Component', managedBy: BMC }),
    addChassis(tree, { id: 'CPLD_0', name: 'CPLD_0', type: 'Component', managedBy: BMC }),
    addChassis(tree, {
      id: 'CBC_0',
      name: 'CBC_0',
      type: 'Module',
      model: d.model.includes('GB300') ? 'OberonCBC GB300' : 'OberonCBCL',
      managedBy: BMC,
      powered: true,
      systems: [systems[0]!],
    }),
    addChassis(tree, {
      id: 'HGX_Chassis_0',
      name: 'Chassis_0',
      type: 'Zone',
      managedBy: HMC,
      powered: true,
      systems: [systems[1]!],
      contains: hgxParts.map(chassis),
      rollup: hgxHealth,
    }),
    ...parts.map((p) => addChassis(tree, { name: p.id, type: 'Component', managedBy: HMC, ...p })),
  ];
  tree.collection('/redfish/v1/Chassis', 'ChassisCollection', 'Chassis Collection', all);

  const bmcImage = 'FW_BMC_0';
  tree.collection('/redfish/v1/Managers', 'ManagerCollection', 'Manager Collection', [BMC, HMC]);
  addManager(
    tree,
    {
      id: 'BMC_0',
      name: 'OpenBmc Manager',
      description: 'Baseboard Management Controller',
      model: 'OpenBmc',
      image: bmcImage,
      forChassis: [chassis('BMC_0'), chassis('CBC_0')],
      forServers: [systems[0]!],
      inChassis: chassis('BMC_0'),
      logs: true,
    },
    firmware,
  );
  addManager(
    tree,
    {
      id: 'HGX_BMC_0',
      name: 'HGX Manager',
      description: 'HGX Management Controller',
      model: 'OpenBmc',
      image: 'HGX_FW_BMC_0',
      forChassis: [chassis('HGX_Chassis_0')],
      forServers: [systems[1]!],
      inChassis: chassis('HGX_Chassis_0'),
      network: 'internal',
    },
    firmware,
  );

  return {
    id: d.id,
    label: d.label,
    kind: 'compute',
    initialPower: 'Off',
    resources: tree.resources,
    writable: tree.writable,
    firmware,
    // docs/reference/rms-behaviours.md#firmware-push: Targets ["/redfish/v1/Chassis/HGX_Chassis_0"] updates the
    // HMC-managed (HGX_*) side.
    targetGroups: new Map([
      [
        chassis('HGX_Chassis_0'),
        firmware.filter((f) => f.id.startsWith('HGX_') && f.componentId !== undefined).map((f) => f.id),
      ],
    ]),
    power,
    maxImageBytes: 209_715_200,
    managers: [BMC, HMC],
    eventLogs,
    parts: { ...computeParts, temperatureSensors: trayTemperatureSensors },
  };
}

function systemBody(bmc: SimulatedBmc, id: string, model: string, manager: string, chassis: string[]): Body {
  const path = `/redfish/v1/Systems/${id}`;
  return {
    '@odata.id': path,
    '@odata.type': '#ComputerSystem.v1_22_0.ComputerSystem',
    Id: id,
    Name: id,
    SystemType: 'Physical',
    Manufacturer: 'NVIDIA',
    Model: model,
    SerialNumber: bmc.serialNumber,
    UUID: uuidFor(`${bmc.spec.id}/${id}`),
    PowerState: bmc.powerState,
    LocationIndicatorActive: false,
    Status: { State: 'Enabled', Health: 'OK', HealthRollup: 'OK' },
    Processors: ref(`${path}/Processors`),
    LogServices: ref(`${path}/LogServices`),
    Links: { Chassis: refs(chassis), ManagedBy: [ref(manager)] },
  };
}

/**
 * The GPU and CPU component chassis carry their part's serial number, health and state (the same part as the
 * Processor) and its sensors.
 */
function partChassis(
  tree: Tree,
  id: string,
): Pick<Parameters<typeof addChassis>[1], 'serial' | 'health' | 'rollup' | 'state' | 'extra'> {
  const gpu = /^HGX_GPU_(\d+)$/.exec(id);
  if (gpu) {
    const g = Number(gpu[1]);
    const env = addGpuEnvironment(tree, g);
    return {
      serial: (bmc) => bmc.partSerial(partKey.gpu(g)),
      health: (bmc) => gpuRollup(bmc, g),
      rollup: env.health,
      state: (bmc) => gpuState(bmc, g, 'Enabled'),
      extra: () => env.links,
    };
  }
  const cpu = /^HGX_CPU_(\d+)$/.exec(id);
  if (cpu) {
    const c = Number(cpu[1]);
    const env = addCpuEnvironment(tree, c);
    return {
      serial: (bmc) => bmc.partSerial(partKey.cpu(c)),
      health: (bmc) => cpuRollup(bmc, c),
      rollup: env.health,
      extra: () => env.links,
    };
  }
  return {};
}

/**
 * Oem.Nvidia.MNNVLinkTopology: the tray's place in its NVL72 rack (rack.ts), as RMS reads it from the GPUs
 * (docs/reference/rms-behaviours.md#tray-location).
 */
export function mnnvlinkTopology(bmc: SimulatedBmc): {
  ChassisSerialNumber: string;
  TraySlotNumber: number;
  TraySlotIndex: number;
} {
  const p = positionOf(bmc, 'compute');
  return {
    ChassisSerialNumber: p.chassisSerialNumber,
    TraySlotNumber: p.traySlotNumber,
    TraySlotIndex: p.traySlotIndex,
  };
}
