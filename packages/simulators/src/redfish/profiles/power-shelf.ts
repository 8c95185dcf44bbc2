import type { SimulatedBmc } from '../bmc.js';
import { worst, type ActiveFault, type DeviceParts, type Health } from '../tray-health.js';
import { addChassis, addManager, addServiceBasics, faultConditions, ref, resetAction, Tree } from './common.js';
import { addEnvironment, type SensorSpec } from './environment.js';
import { addAccountService } from './accounts.js';
import { addEventLog, addEventService } from './logs.js';
import type { Body, FirmwareSpec, PowerControl, Profile } from './types.js';

/**
 * An NVL72 power shelf controller (PMC) with six PSUs, shaped after DMTF's public-power-shelf
 * mockup (PowerSubsystem → PowerSupplies) and docs/reference/rms-behaviours.md#power-shelves (chassis `powershelf`,
 * Manager.Reset reboots the PMC). The shelf's output follows Chassis.Reset.
 */
export interface PowerShelfData {
  id: string;
  label: string;
  vendor: string;
  shelfModel: string;
  shelfPartNumber: string;
  psuModel: string;
  psuPartNumber: string;
  psuCapacityW: number;
  /** PLDM device UUIDs: the PMC package and the PSU package. */
  devices: { pmc: string; psu: string };
  versions: { pmc: string; psu: string };
  stamp: number;
  /**
   * The shelf still serves the deprecated Chassis `Power` resource next to PowerSubsystem: LITE-ON PMC firmware does
   * (RMS reads its PSU units at Chassis/powershelf/Power/Oem/LiteOn/PowerUnits, ../shared/reference/rms.md §4.3).
   */
  legacyPower: boolean;
}

const PSUS = [0, 1, 2, 3, 4, 5];
const SHELF = '/redfish/v1/Chassis/powershelf';
const psuPath = (i: number) => `${SHELF}/PowerSubsystem/PowerSupplies/PSU_${i}`;
const psuFault = (bmc: SimulatedBmc, i: number): ActiveFault | undefined =>
  bmc.hasPartFaults ? bmc.health().psu(i) : undefined;
/** A PSU with a Critical fault has failed: it delivers nothing. */
const psuFailed = (bmc: SimulatedBmc, i: number) => psuFault(bmc, i)?.health === 'Critical';
const psuHealth = (bmc: SimulatedBmc, i: number): Health => psuFault(bmc, i)?.health ?? 'OK';
const outputOn = (bmc: SimulatedBmc) => bmc.powerState === 'On';

/** PSU temperatures and output power, on the shelf chassis; simulator values. */
const sensors: SensorSpec[] = PSUS.flatMap((i): SensorSpec[] => [
  {
    id: `PSU_${i}_Temp_0`,
    name: `PSU ${i} Temp 0`,
    type: 'Temperature',
    context: 'PowerSupply',
    related: psuPath(i),
    reading: (bmc) => (outputOn(bmc) && !psuFailed(bmc, i) ? 38 + i / 2 : 26),
    thresholds: { UpperCaution: 70, UpperCritical: 80 },
  },
  {
    id: `PSU_${i}_OutputPower_0`,
    name: `PSU ${i} Output Power 0`,
    type: 'Power',
    context: 'PowerSupply',
    related: psuPath(i),
    reading: (bmc) => (outputOn(bmc) && !psuFailed(bmc, i) ? 2100 : 0),
  },
]);

/** What the admin API may fault on a shelf: its PSUs and their temperature sensors. */
const shelfParts: DeviceParts = {
  faults: ['psu', 'thermal'],
  swaps: false,
  cpus: 0,
  gpus: 0,
  nvlinksPerGpu: 0,
  memory: [],
  psus: PSUS.length,
  leakDetectors: 0,
  temperatureSensors: sensors.filter((s) => s.type === 'Temperature').map((s) => s.id),
  gpuMemory: () => [],
  locate: (key) => {
    const [kind, part] = key.split('/') as [string, string];
    if (kind === 'thermal') return { name: part, origin: `${SHELF}/Sensors/${part}`, log: 'manager' };
    return { name: `PSU_${part}`, origin: psuPath(Number(part)), log: 'manager' };
  },
};

/** A PSU's Status: its health and, while faulted, a Condition naming the fault. */
function psuStatus(bmc: SimulatedBmc, i: number): Body {
  return {
    State: outputOn(bmc) ? 'Enabled' : 'StandbyOffline',
    Health: psuHealth(bmc, i),
    Conditions: faultConditions(`PSU_${i}`, psuFault(bmc, i)),
  };
}

/** N+1: one failed PSU leaves the shelf without redundancy (Warning), two leave it short of power (Critical). */
function redundancyHealth(bmc: SimulatedBmc): Health {
  const failed = PSUS.filter((i) => psuFailed(bmc, i)).length;
  return failed === 0 ? 'OK' : failed === 1 ? 'Warning' : 'Critical';
}

export function powerShelf(d: PowerShelfData): Profile {
  const firmware: FirmwareSpec[] = [
    {
      id: 'FW_PMC_0',
      related: '/redfish/v1/Managers/BMC_0',
      description: 'Power management controller image',
      version: d.versions.pmc,
      stamp: d.stamp,
      componentId: 0x0100,
      device: d.devices.pmc,
      softwareId: '0x0100',
    },
    ...PSUS.map((i) => ({
      id: `FW_PSU_${i}`,
      related: psuPath(i),
      description: 'PSU image',
      version: d.versions.psu,
      stamp: d.stamp,
      componentId: 0x0110 + i,
      device: d.devices.psu,
      softwareId: '0x0110',
    })),
  ];
  const power: PowerControl = {
    resource: SHELF,
    action: `${SHELF}/Actions/Chassis.Reset`,
    actionName: 'Chassis.Reset',
    resetTypes: ['On', 'ForceOff', 'PowerCycle'],
  };
  const BMC = '/redfish/v1/Managers/BMC_0';
  const tree = new Tree();
  addServiceBasics(
    tree,
    { product: d.shelfModel, vendor: d.vendor, systems: false, managerProvidingService: BMC },
    firmware,
    67_108_864,
  );

  const eventLogs = { manager: addEventLog(tree, BMC, 'Power Shelf Event Log Service') };
  addEventService(tree);
  addAccountService(tree);
  const env = addEnvironment(tree, SHELF, sensors);
  const psusHealth = (bmc: SimulatedBmc) => worst(...PSUS.map((i) => psuHealth(bmc, i)));
  const reset = resetAction(tree, power, SHELF);
  addChassis(tree, {
    id: 'powershelf',
    name: 'Power Shelf',
    type: 'Shelf',
    manufacturer: d.vendor,
    model: d.shelfModel,
    partNumber: d.shelfPartNumber,
    // The shelf chassis is the device: its serial is the shelf's, and it carries the asset tag (as DMTF's mockup).
    serial: (bmc) => bmc.serialNumber,
    assetTag: true,
    managedBy: BMC,
    powered: true,
    rollup: (bmc) => worst(psusHealth(bmc), redundancyHealth(bmc), env.health(bmc)),
    extra: (bmc) => ({
      PowerSubsystem: ref(`${SHELF}/PowerSubsystem`),
      ...(d.legacyPower ? { Power: ref(`${SHELF}/Power`) } : {}),
      ...env.links,
      Actions: { '#Chassis.Reset': reset(bmc) },
    }),
  });
  tree.collection('/redfish/v1/Chassis', 'ChassisCollection', 'Chassis Collection', [SHELF]);
  tree.add(`${SHELF}/PowerSubsystem`, (bmc) => ({
    '@odata.id': `${SHELF}/PowerSubsystem`,
    '@odata.type': '#PowerSubsystem.v1_1_0.PowerSubsystem',
    Id: 'PowerSubsystem',
    Name: 'Power Subsystem',
    CapacityWatts: d.psuCapacityW * PSUS.length,
    Status: {
      State: bmc.powerState === 'On' ? 'Enabled' : 'StandbyOffline',
      Health: redundancyHealth(bmc),
      HealthRollup: worst(psusHealth(bmc), redundancyHealth(bmc)),
    },
    PowerSupplyRedundancy: [
      {
        RedundancyType: 'NPlusM',
        MaxSupportedInGroup: PSUS.length,
        MinNeededInGroup: PSUS.length - 1,
        RedundancyGroup: PSUS.map((i) => ref(psuPath(i))),
        Status: { State: 'Enabled', Health: redundancyHealth(bmc) },
      },
    ],
    PowerSupplies: ref(`${SHELF}/PowerSubsystem/PowerSupplies`),
  }));
  tree.collection(
    `${SHELF}/PowerSubsystem/PowerSupplies`,
    'PowerSupplyCollection',
    'Power Supply Collection',
    PSUS.map(psuPath),
  );
  for (const i of PSUS) {
    const image = firmware[i + 1]!;
    tree.add(psuPath(i), (bmc) => ({
      '@odata.id': psuPath(i),
      '@odata.type': '#PowerSupply.v1_5_0.PowerSupply',
      Id: `PSU_${i}`,
      Name: `Power Supply ${i}`,
      Manufacturer: d.vendor,
      Model: d.psuModel,
      PartNumber: d.psuPartNumber,
      SerialNumber: `${bmc.serialNumber}-PSU${i}`,
      FirmwareVersion: bmc.firmware(image).version,
      PowerCapacityWatts: d.psuCapacityW,
      HotPluggable: true,
      LineInputStatus: 'Normal',
      Location: { PartLocation: { ServiceLabel: `PSU ${i}`, LocationType: 'Bay', LocationOrdinalValue: i } },
      Status: psuStatus(bmc, i),
    }));
  }
  if (d.legacyPower) addLegacyPower(tree, d, (i) => firmware[i + 1]!);
  tree.collection('/redfish/v1/Managers', 'ManagerCollection', 'Manager Collection', [BMC]);
  addManager(
    tree,
    {
      id: 'BMC_0',
      name: 'Power Shelf Controller',
      description: 'Power management controller',
      model: `${d.shelfModel} PMC`,
      image: 'FW_PMC_0',
      forChassis: [SHELF],
      forServers: [],
      inChassis: SHELF,
      logs: true,
    },
    firmware,
  );

  return {
    id: d.id,
    label: d.label,
    kind: 'power_shelf',
    initialPower: 'On',
    resources: tree.resources,
    writable: tree.writable,
    firmware,
    targetGroups: new Map([[SHELF, firmware.filter((f) => f.id.startsWith('FW_PSU_')).map((f) => f.id)]]),
    power,
    maxImageBytes: 67_108_864,
    managers: [BMC],
    eventLogs,
    parts: shelfParts,
  };
}

/** Chassis/powershelf/Power (Power v1_6): the same PSUs, their health and output, in the pre-2020 shape. */
function addLegacyPower(tree: Tree, d: PowerShelfData, image: (i: number) => FirmwareSpec): void {
  const path = `${SHELF}/Power`;
  tree.add(path, (bmc) => ({
    '@odata.id': path,
    '@odata.type': '#Power.v1_6_0.Power',
    Id: 'Power',
    Name: 'Power',
    PowerSupplies: PSUS.map((i) => ({
      '@odata.id': `${path}#/PowerSupplies/${i}`,
      MemberId: String(i),
      Name: `Power Supply ${i}`,
      Manufacturer: d.vendor,
      Model: d.psuModel,
      PartNumber: d.psuPartNumber,
      SerialNumber: `${bmc.serialNumber}-PSU${i}`,
      FirmwareVersion: bmc.firmware(image(i)).version,
      PowerCapacityWatts: d.psuCapacityW,
      LineInputVoltage: 240,
      LastPowerOutputWatts: outputOn(bmc) && !psuFailed(bmc, i) ? 2100 : 0,
      Status: psuStatus(bmc, i),
    })),
  }));
}
