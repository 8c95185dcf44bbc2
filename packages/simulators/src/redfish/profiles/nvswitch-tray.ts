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
import { addEnvironment, hostReads, inletSensor, type SensorSpec } from './environment.js';
import { worst } from '../tray-health.js';
import { addAccountService } from './accounts.js';
import { addEventLog, addEventService } from './logs.js';
import { addSwitchFabric, NVSWITCHES } from './switch-fabric.js';
import type { FirmwareSpec, PowerControl, Profile } from './types.js';

/**
 * The BMC of an NVLink switch tray (RMS switch_gb200_nvidia), Redfish side only: NVOS and the
 * switch ASIC firmware are managed over NVUE, so Redfish shows the tray host (System_0, which the
 * BMC powers), the BMC's own images, the two NVSwitch chassis and the NVLink fabric (switch-fabric.ts).
 */
const MODEL = 'N5400_LD';
const PART_NUMBER = '920-9K36F-00MV-0D0';
const SKU = 'P4978-0001';
const DEVICE = 'd5a1c0de4e2f4b7a9c1d2e3f40516273';
const STAMP = 0x01030200;

const firmware: FirmwareSpec[] = [
  {
    id: 'FW_BMC_0',
    related: '/redfish/v1/Chassis/BMC_0',
    description: 'BMC image',
    version: '88.0002.1300',
    stamp: STAMP,
    componentId: 0x0010,
    device: DEVICE,
    softwareId: '0x0010',
  },
  {
    id: 'FW_ERoT_BMC_0',
    related: '/redfish/v1/Chassis/ERoT_BMC_0',
    description: 'ERoT image',
    version: '01.04.0008.0000_n04',
    stamp: STAMP,
    componentId: 0x0011,
    device: DEVICE,
    softwareId: '0x0011',
  },
  {
    id: 'FW_CPLD_0',
    related: '/redfish/v1/Chassis/BMC_0',
    description: 'CPLD image',
    version: '0.1C',
    stamp: STAMP,
    componentId: 0x0012,
    device: DEVICE,
    softwareId: '0x0012',
  },
  {
    id: 'FW_BIOS_0',
    related: '/redfish/v1/Systems/System_0',
    description: 'Switch host BIOS',
    version: '0ACTV.2.12',
    stamp: STAMP,
    componentId: 0x0013,
    device: DEVICE,
    softwareId: '0x0013',
  },
];

/** The tray's board temperatures (on BMC_0) and each NVSwitch chip's (on NVSwitch_n); simulator values. */
const TRAY_SENSORS: SensorSpec[] = [
  inletSensor,
  {
    id: 'TEMP_BOARD',
    name: 'TEMP BOARD',
    type: 'Temperature',
    context: 'SystemBoard',
    related: '/redfish/v1/Systems/System_0',
    reading: hostReads(26, 36.5),
    thresholds: { UpperCaution: 80, UpperCritical: 85 },
  },
];
const switchSensors = (c: number): SensorSpec[] => [
  {
    id: `NVSwitch_${c}_Temp_0`,
    name: `NVSwitch ${c} Temp 0`,
    type: 'Temperature',
    context: 'ASIC',
    reading: hostReads(27, 51 + c),
    thresholds: { UpperCaution: 95, UpperCritical: 105 },
  },
];

const power: PowerControl = {
  resource: '/redfish/v1/Systems/System_0',
  action: '/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset',
  actionName: 'ComputerSystem.Reset',
  resetTypes: ['On', 'ForceOn', 'ForceOff', 'GracefulShutdown', 'GracefulRestart', 'ForceRestart', 'PowerCycle'],
};

function build(): Profile {
  const BMC = '/redfish/v1/Managers/BMC_0';
  const tree = new Tree();
  addServiceBasics(
    tree,
    { product: 'P4978', vendor: 'NVIDIA', systems: true, fabrics: true, managerProvidingService: BMC },
    firmware,
    209_715_200,
  );
  addSystems(tree, [power.resource]);
  const eventLogs = {
    system: addEventLog(tree, power.resource, 'System Event Log Service'),
    manager: addEventLog(tree, BMC, 'BMC Event Log Service'),
  };
  addEventService(tree);
  addAccountService(tree);
  const reset = resetAction(tree, power, power.resource);
  tree.add(
    power.resource,
    (bmc) => ({
      '@odata.id': power.resource,
      '@odata.type': '#ComputerSystem.v1_22_0.ComputerSystem',
      Id: 'System_0',
      Name: 'System_0',
      SystemType: 'Physical',
      Manufacturer: 'NVIDIA',
      Model: MODEL,
      SKU,
      PartNumber: PART_NUMBER,
      SerialNumber: bmc.serialNumber,
      AssetTag: '',
      BiosVersion: bmc.firmware(firmware.find((f) => f.id === 'FW_BIOS_0')!).version,
      UUID: uuidFor(`${bmc.spec.id}/System_0`),
      PowerState: bmc.powerState,
      Status: { State: 'Enabled', Health: 'OK' },
      LogServices: ref(`${power.resource}/LogServices`),
      Links: { Chassis: refs(['/redfish/v1/Chassis/BMC_0']), ManagedBy: [ref(BMC)] },
      Actions: { '#ComputerSystem.Reset': reset(bmc) },
    }),
    ['AssetTag'],
  );
  const switches = NVSWITCHES.map((i) => `NVSwitch_${i}`);
  const trayEnv = addEnvironment(tree, '/redfish/v1/Chassis/BMC_0', TRAY_SENSORS);
  const switchEnvs = NVSWITCHES.map((c) =>
    addEnvironment(tree, `/redfish/v1/Chassis/${switches[c]!}`, switchSensors(c)),
  );
  const all = [
    addChassis(tree, {
      id: 'BMC_0',
      name: 'BMC_0',
      type: 'Enclosure',
      model: MODEL,
      partNumber: PART_NUMBER,
      serial: (bmc) => bmc.serialNumber,
      managedBy: BMC,
      powered: true,
      systems: [power.resource],
      contains: ['/redfish/v1/Chassis/ERoT_BMC_0', ...switches.map((s) => `/redfish/v1/Chassis/${s}`)],
      // The tray's rollup covers the NVSwitch chassis it contains, so one read of BMC_0 tells whether any is unhealthy.
      rollup: (bmc) => worst(trayEnv.health(bmc), ...switchEnvs.map((e) => e.health(bmc))),
      extra: () => trayEnv.links,
    }),
    addChassis(tree, { id: 'ERoT_BMC_0', name: 'ERoT_BMC_0', type: 'Component', managedBy: BMC }),
    ...NVSWITCHES.map((c) => {
      const env = switchEnvs[c]!;
      return addChassis(tree, {
        id: switches[c]!,
        name: switches[c]!,
        type: 'Component',
        model: 'NVLink Switch',
        managedBy: BMC,
        powered: true,
        serial: (bmc) => bmc.partSerial(`nvswitch/${c}`),
        rollup: env.health,
        extra: () => env.links,
      });
    }),
  ];
  tree.collection('/redfish/v1/Chassis', 'ChassisCollection', 'Chassis Collection', all);
  addSwitchFabric(tree, { model: 'NVLink Switch', partNumber: '900-9X84A-0000-000', nvlinkGbps: 400 });
  tree.collection('/redfish/v1/Managers', 'ManagerCollection', 'Manager Collection', [BMC]);
  addManager(
    tree,
    {
      id: 'BMC_0',
      name: 'OpenBmc Manager',
      description: 'Baseboard Management Controller',
      model: 'OpenBmc',
      image: 'FW_BMC_0',
      forChassis: ['/redfish/v1/Chassis/BMC_0'],
      forServers: [power.resource],
      inChassis: '/redfish/v1/Chassis/BMC_0',
      logs: true,
    },
    firmware,
  );
  return {
    id: 'nvswitch-tray',
    label: 'NVIDIA NVLink switch tray BMC',
    kind: 'switch',
    initialPower: 'Off',
    resources: tree.resources,
    writable: tree.writable,
    firmware,
    targetGroups: new Map(),
    power,
    maxImageBytes: 209_715_200,
    managers: [BMC],
    eventLogs,
  };
}

export const nvswitchTray = build();
