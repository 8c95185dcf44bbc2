import { addChassis, addManager, addServiceBasics, ref, resetAction, Tree } from './common.js';
import type { FirmwareSpec, PowerControl, Profile } from './types.js';

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
}

const PSUS = [0, 1, 2, 3, 4, 5];
const SHELF = '/redfish/v1/Chassis/powershelf';

export function powerShelf(d: PowerShelfData): Profile {
  const psuPath = (i: number) => `${SHELF}/PowerSubsystem/PowerSupplies/PSU_${i}`;
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
    extra: (bmc) => ({ PowerSubsystem: ref(`${SHELF}/PowerSubsystem`), Actions: { '#Chassis.Reset': reset(bmc) } }),
  });
  tree.collection('/redfish/v1/Chassis', 'ChassisCollection', 'Chassis Collection', [SHELF]);
  tree.add(`${SHELF}/PowerSubsystem`, (bmc) => ({
    '@odata.id': `${SHELF}/PowerSubsystem`,
    '@odata.type': '#PowerSubsystem.v1_1_0.PowerSubsystem',
    Id: 'PowerSubsystem',
    Name: 'Power Subsystem',
    CapacityWatts: d.psuCapacityW * PSUS.length,
    Status: { State: bmc.powerState === 'On' ? 'Enabled' : 'StandbyOffline', Health: 'OK' },
    PowerSupplyRedundancy: [
      {
        RedundancyType: 'NPlusM',
        MaxSupportedInGroup: PSUS.length,
        MinNeededInGroup: PSUS.length - 1,
        RedundancyGroup: PSUS.map((i) => ref(psuPath(i))),
        Status: { State: 'Enabled', Health: 'OK' },
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
      Status: { State: bmc.powerState === 'On' ? 'Enabled' : 'StandbyOffline', Health: 'OK' },
    }));
  }
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
  };
}
