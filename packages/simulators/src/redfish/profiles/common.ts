import { createHash } from 'node:crypto';
import { isRunning } from '../tasks.js';
import type { SimulatedBmc } from '../bmc.js';
import { message } from '../messages.js';
import { worst, type ActiveFault, type Health } from '../tray-health.js';
import { expandQueryFeatures } from '../expand.js';
import { allowedResetTypes, extraSystemPaths, SYSTEMS } from '../quirks.js';
import type { Body, Builder, FirmwareSpec, PowerControl } from './types.js';

/**
 * Shared resource builders for every profile. A profile assembles a tree of path → builder once
 * (module load); each BMC only carries the state the builders read.
 */
export class Tree {
  readonly resources = new Map<string, Builder>();
  readonly writable = new Map<string, readonly string[]>();

  add(path: string, build: Builder, writable?: readonly string[]): this {
    this.resources.set(path, build);
    if (writable) this.writable.set(path, writable);
    return this;
  }

  /** A fixed collection; members are resource paths. */
  collection(path: string, type: string, name: string, members: readonly string[]): this {
    return this.add(path, () => collectionBody(path, type, name, members));
  }
}

export function collectionBody(path: string, type: string, name: string, members: readonly string[]): Body {
  return {
    '@odata.id': path,
    '@odata.type': `#${type}.${type}`,
    Name: name,
    'Members@odata.count': members.length,
    Members: members.map((m) => ({ '@odata.id': m })),
  };
}

export const ref = (path: string) => ({ '@odata.id': path });
export const refs = (paths: readonly string[]) => paths.map(ref);
const status = { State: 'Enabled', Health: 'OK' } as const;

/** Resource.Status of a part: its own health and the worst health of what it contains. */
export function statusOf(state: string, health: Health, rollup: Health = health): Body {
  return { State: state, Health: health, HealthRollup: rollup };
}

/** Status.Conditions of a part: the fault on it, as NVIDIA's BMC lists one (ResourceErrorsDetected with the reason). */
export function faultConditions(part: string, fault: ActiveFault | undefined): Body[] {
  if (!fault) return [];
  const m = message('ResourceEvent', 'ResourceErrorsDetected', [part, fault.reason]);
  return [
    {
      MessageId: m.MessageId,
      Message: m.Message,
      MessageArgs: m.MessageArgs,
      Severity: fault.health,
      Timestamp: fault.since,
    },
  ];
}

export function uuidFor(seed: string): string {
  const hex = Buffer.from(seed).toString('hex').padEnd(32, '0').slice(0, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export interface RootOptions {
  product: string;
  vendor: string;
  systems: boolean;
  /** The service root links a Fabrics collection (the switch tray's NVLink fabric). */
  fabrics?: boolean;
  managerProvidingService: string;
}

/** Service root, sessions, tasks and the update service: the part every NVIDIA-managed BMC shares. */
export function addServiceBasics(
  tree: Tree,
  root: RootOptions,
  firmware: readonly FirmwareSpec[],
  maxImageBytes: number,
): void {
  tree.add('/redfish/v1', (bmc) => ({
    '@odata.id': '/redfish/v1',
    '@odata.type': '#ServiceRoot.v1_15_0.ServiceRoot',
    Id: 'RootService',
    Name: 'Root Service',
    RedfishVersion: '1.17.0',
    UUID: uuidFor(bmc.spec.id),
    Product: root.product,
    Vendor: root.vendor,
    ...(root.systems ? { Systems: ref('/redfish/v1/Systems') } : {}),
    ...(root.fabrics ? { Fabrics: ref('/redfish/v1/Fabrics') } : {}),
    Chassis: ref('/redfish/v1/Chassis'),
    Managers: ref('/redfish/v1/Managers'),
    UpdateService: ref('/redfish/v1/UpdateService'),
    Tasks: ref('/redfish/v1/TaskService'),
    SessionService: ref('/redfish/v1/SessionService'),
    // Every profile adds it with addEventService (profiles/logs.ts); a quirk leaves it unlinked.
    ...(bmc.spec.quirks?.noEventService ? {} : { EventService: ref('/redfish/v1/EventService') }),
    // Every profile adds it with addAccountService (profiles/accounts.ts).
    AccountService: ref('/redfish/v1/AccountService'),
    Links: {
      Sessions: ref('/redfish/v1/SessionService/Sessions'),
      ManagerProvidingService: ref(root.managerProvidingService),
    },
    ProtocolFeaturesSupported: {
      ExpandQuery: expandQueryFeatures(!bmc.spec.quirks?.noExpandQuery),
      FilterQuery: false,
      SelectQuery: false,
      ExcerptQuery: false,
      OnlyMemberQuery: false,
    },
  }));

  tree.add(
    '/redfish/v1/SessionService',
    (bmc) => ({
      '@odata.id': '/redfish/v1/SessionService',
      '@odata.type': '#SessionService.v1_1_8.SessionService',
      Id: 'SessionService',
      Name: 'Session Service',
      Description: 'Session Service',
      ServiceEnabled: true,
      SessionTimeout: bmc.sessions().timeoutS,
      Status: status,
      Sessions: ref('/redfish/v1/SessionService/Sessions'),
    }),
    ['SessionTimeout'],
  );
  tree.add('/redfish/v1/SessionService/Sessions', (bmc) =>
    collectionBody(
      '/redfish/v1/SessionService/Sessions',
      'SessionCollection',
      'Session Collection',
      [...bmc.sessions().byId.keys()].map((id) => `/redfish/v1/SessionService/Sessions/${id}`),
    ),
  );

  tree.add('/redfish/v1/TaskService', () => ({
    '@odata.id': '/redfish/v1/TaskService',
    '@odata.type': '#TaskService.v1_1_4.TaskService',
    Id: 'TaskService',
    Name: 'Task Service',
    CompletedTaskOverWritePolicy: 'Oldest',
    LifeCycleEventOnTaskStateChange: true,
    ServiceEnabled: true,
    Status: status,
    Tasks: ref('/redfish/v1/TaskService/Tasks'),
  }));
  tree.add('/redfish/v1/TaskService/Tasks', (bmc) =>
    collectionBody(
      '/redfish/v1/TaskService/Tasks',
      'TaskCollection',
      'Task Collection',
      [...bmc.tasks().byId.keys()].map((id) => `/redfish/v1/TaskService/Tasks/${id}`),
    ),
  );

  tree.add('/redfish/v1/UpdateService', (bmc) => ({
    '@odata.id': '/redfish/v1/UpdateService',
    '@odata.type': '#UpdateService.v1_8_0.UpdateService',
    Id: 'UpdateService',
    Name: 'Update Service',
    Description: 'Service for Software Update',
    ServiceEnabled: true,
    Status: { ...status, State: [...bmc.tasks().byId.values()].some(isRunning) ? 'Updating' : 'Enabled' },
    MaxImageSizeBytes: maxImageBytes,
    MultipartHttpPushUri: MULTIPART_PUSH_URI,
    'MultipartHttpPushUri@Redfish.OperationApplyTimeSupport': {
      '@odata.type': '#Settings.v1_3_3.OperationApplyTimeSupport',
      SupportedValues: ['Immediate'],
    },
    FirmwareInventory: ref('/redfish/v1/UpdateService/FirmwareInventory'),
    // No SimpleUpdate (NVIDIA BMCs take pushes only), but clients such as sushy require the property.
    Actions: {},
  }));
  tree.collection(
    '/redfish/v1/UpdateService/FirmwareInventory',
    'SoftwareInventoryCollection',
    'Software Inventory Collection',
    firmware.map((f) => `/redfish/v1/UpdateService/FirmwareInventory/${f.id}`),
  );
  for (const f of firmware) {
    const path = `/redfish/v1/UpdateService/FirmwareInventory/${f.id}`;
    tree.add(path, (bmc) => ({
      '@odata.id': path,
      '@odata.type': '#SoftwareInventory.v1_4_0.SoftwareInventory',
      Id: f.id,
      Name: 'Software Inventory',
      Description: f.description,
      Manufacturer: 'NVIDIA',
      RelatedItem: [ref(f.related)],
      'RelatedItem@odata.count': 1,
      SoftwareId: f.softwareId,
      Status: { ...status, HealthRollup: 'OK' },
      // Components without a PLDM identifier (InfoROM) are read-only, as on the real BMC.
      Updateable: f.componentId !== undefined,
      Version: bmc.firmware(f).version,
      WriteProtected: false,
    }));
  }
}

export const MULTIPART_PUSH_URI = '/redfish/v1/UpdateService/update-multipart';

export interface ManagerOptions {
  id: string;
  name: string;
  description: string;
  model: string;
  /** FirmwareInventory member of this manager's own image. */
  image: string;
  forChassis: readonly string[];
  forServers: readonly string[];
  inChassis: string;
  /**
   * Its network: `management` is the BMC's own port (eth0, the address the simulator answers on), `internal` the
   * HMC's USB link to the BMC (usb0), as in the GH200 capture.
   */
  network?: 'management' | 'internal';
  /** It has LogServices (the profile adds its EventLog with addEventLog). */
  logs?: boolean;
}

export function addManager(tree: Tree, m: ManagerOptions, firmware: readonly FirmwareSpec[]): string {
  const path = `/redfish/v1/Managers/${m.id}`;
  const image = firmware.find((f) => f.id === m.image)!;
  tree.add(
    path,
    (bmc) => ({
      '@odata.id': path,
      '@odata.type': '#Manager.v1_14_0.Manager',
      Id: m.id,
      Name: m.name,
      Description: m.description,
      ManagerType: 'BMC',
      Model: m.model,
      FirmwareVersion: bmc.firmware(image).version,
      UUID: uuidFor(`${bmc.spec.id}/${m.id}`),
      ServiceEntryPointUUID: uuidFor(bmc.spec.id),
      PowerState: 'On',
      Status: { ...status, HealthRollup: 'OK' },
      DateTimeLocalOffset: '+00:00',
      NetworkProtocol: ref(`${path}/NetworkProtocol`),
      EthernetInterfaces: ref(`${path}/EthernetInterfaces`),
      ...(m.logs ? { LogServices: ref(`${path}/LogServices`) } : {}),
      Actions: {
        '#Manager.Reset': {
          target: `${path}/Actions/Manager.Reset`,
          'ResetType@Redfish.AllowableValues': ['GracefulRestart', 'ForceRestart'],
        },
      },
      Links: {
        ActiveSoftwareImage: ref(`/redfish/v1/UpdateService/FirmwareInventory/${m.image}`),
        SoftwareImages: [ref(`/redfish/v1/UpdateService/FirmwareInventory/${m.image}`)],
        'SoftwareImages@odata.count': 1,
        ManagerForChassis: refs(m.forChassis),
        'ManagerForChassis@odata.count': m.forChassis.length,
        ManagerForServers: refs(m.forServers),
        'ManagerForServers@odata.count': m.forServers.length,
        ManagerInChassis: ref(m.inChassis),
      },
    }),
    ['DateTimeLocalOffset'],
  );
  addManagerNetwork(tree, path, m.id, m.network ?? 'management');
  return path;
}

/** A locally administered MAC address derived from a seed (02:xx:…), for BMCs configured without one. */
export function macFor(seed: string): string {
  const bytes = createHash('sha256').update(seed).digest().subarray(0, 5);
  return ['02', ...[...bytes].map((b) => b.toString(16).padStart(2, '0'))].join(':');
}

/** Manager NetworkProtocol and EthernetInterfaces, shaped after the GH200 capture's BMC_0 and HGX_BMC_0. */
function addManagerNetwork(tree: Tree, manager: string, id: string, network: 'management' | 'internal'): void {
  const hostName = (bmc: SimulatedBmc) => `${bmc.spec.id.toLowerCase()}-${network === 'internal' ? 'hmc' : 'bmc'}`;
  const protocol = `${manager}/NetworkProtocol`;
  tree.add(
    protocol,
    (bmc) => ({
      '@odata.id': protocol,
      '@odata.type': '#ManagerNetworkProtocol.v1_5_0.ManagerNetworkProtocol',
      Id: 'NetworkProtocol',
      Name: 'Manager Network Protocol',
      Description: 'Manager Network Service',
      HostName: hostName(bmc),
      FQDN: hostName(bmc),
      // What the simulator really serves: plain HTTP on the configured port (real BMCs: HTTPS on 443 only).
      HTTP: { Port: network === 'internal' ? 80 : bmc.spec.port, ProtocolEnabled: true },
      HTTPS: { Port: 443, ProtocolEnabled: false },
      SSH: { Port: 22, ProtocolEnabled: true },
      ...(network === 'management'
        ? { IPMI: { Port: 623, ProtocolEnabled: true }, NTP: { NTPServers: [], ProtocolEnabled: true } }
        : {}),
      Status: { ...status, HealthRollup: 'OK' },
    }),
    network === 'management' ? ['NTP'] : undefined,
  );
  const nic = network === 'internal' ? 'usb0' : 'eth0';
  const interfaces = `${manager}/EthernetInterfaces`;
  tree.collection(interfaces, 'EthernetInterfaceCollection', 'Ethernet Network Interface Collection', [
    `${interfaces}/${nic}`,
  ]);
  tree.add(`${interfaces}/${nic}`, (bmc) => {
    const mac =
      network === 'management' && bmc.spec.macAddress ? bmc.spec.macAddress : macFor(`${bmc.spec.id}/${id}/${nic}`);
    const ipv4 =
      network === 'management'
        ? { Address: bmc.spec.address, AddressOrigin: 'Static', Gateway: '0.0.0.0', SubnetMask: '255.0.0.0' }
        : { Address: '172.31.13.251', AddressOrigin: 'DHCP', Gateway: '0.0.0.0', SubnetMask: '255.255.255.0' };
    return {
      '@odata.id': `${interfaces}/${nic}`,
      '@odata.type': '#EthernetInterface.v1_6_0.EthernetInterface',
      Id: nic,
      Name: 'Manager Ethernet Interface',
      Description: 'Management Network Interface',
      HostName: hostName(bmc),
      FQDN: hostName(bmc),
      InterfaceEnabled: true,
      LinkStatus: 'LinkUp',
      MACAddress: mac,
      PermanentMACAddress: mac,
      MTUSize: 1500,
      SpeedMbps: network === 'management' ? 1000 : 0,
      DHCPv4: { DHCPEnabled: network === 'internal' },
      IPv4Addresses: [ipv4],
      IPv4StaticAddresses: network === 'management' ? [ipv4] : [],
      NameServers: [],
      StaticNameServers: [],
      Status: { ...status, HealthRollup: 'OK' },
    };
  });
}

export interface ChassisOptions {
  id: string;
  name: string;
  type: 'Component' | 'Module' | 'Zone' | 'Shelf' | 'Enclosure' | 'RackMount';
  model?: string;
  partNumber?: string;
  manufacturer?: string;
  managedBy: string;
  /** Follows the host/shelf power state machine when true. */
  powered?: boolean;
  contains?: readonly string[];
  systems?: readonly string[];
  /** Serial number; `<tray serial>-<id>` when absent. */
  serial?: (bmc: SimulatedBmc) => string;
  /** Health of the part the chassis is (and of what it holds); OK when absent. */
  health?: (bmc: SimulatedBmc) => Health;
  /** Health of what it holds besides itself (sensors, leak detectors, PSUs): part of its HealthRollup only. */
  rollup?: (bmc: SimulatedBmc) => Health;
  /** Status.State when it is not simply Enabled (a GPU off the bus is Absent). */
  state?: (bmc: SimulatedBmc) => string;
  /** The chassis carries an AssetTag a client may PATCH (the device's own chassis). */
  assetTag?: boolean;
  extra?: (bmc: SimulatedBmc) => Body;
}

export function addChassis(tree: Tree, c: ChassisOptions): string {
  const path = `/redfish/v1/Chassis/${c.id}`;
  tree.add(
    path,
    (bmc) => ({
      '@odata.id': path,
      '@odata.type': '#Chassis.v1_21_0.Chassis',
      Id: c.id,
      Name: c.name,
      ChassisType: c.type,
      Manufacturer: c.manufacturer ?? 'NVIDIA',
      ...(c.model ? { Model: c.model } : {}),
      ...(c.partNumber ? { PartNumber: c.partNumber } : {}),
      SerialNumber: c.serial ? c.serial(bmc) : `${bmc.serialNumber}-${c.id}`,
      ...(c.assetTag ? { AssetTag: '' } : {}),
      ...(c.powered ? { PowerState: bmc.powerState } : {}),
      LocationIndicatorActive: false,
      Status: statusOf(
        c.state?.(bmc) ?? 'Enabled',
        c.health?.(bmc) ?? 'OK',
        worst(c.health?.(bmc) ?? 'OK', c.rollup?.(bmc) ?? 'OK'),
      ),
      Links: {
        ManagedBy: [ref(c.managedBy)],
        ...(c.contains?.length ? { Contains: refs(c.contains) } : {}),
        ...(c.systems?.length ? { ComputerSystems: refs(c.systems) } : {}),
      },
      ...c.extra?.(bmc),
    }),
    c.assetTag ? ['AssetTag', 'LocationIndicatorActive'] : ['LocationIndicatorActive'],
  );
  return path;
}

/**
 * The reset action (a builder, as a BMC's quirks shape it): its target, its ActionInfo resource
 * and, unless the BMC names them only there, the same `ResetType@Redfish.AllowableValues` inline.
 */
export function resetAction(tree: Tree, power: PowerControl, owner: string): Builder {
  const infoPath = `${owner}/ResetActionInfo`;
  tree.add(infoPath, (bmc) => ({
    '@odata.id': infoPath,
    '@odata.type': '#ActionInfo.v1_3_0.ActionInfo',
    Id: 'ResetActionInfo',
    Name: 'Reset Action Info',
    Parameters: [{ Name: 'ResetType', Required: true, DataType: 'String', AllowableValues: allowedResetTypes(bmc) }],
  }));
  return (bmc) => ({
    target: power.action,
    '@Redfish.ActionInfo': infoPath,
    ...(bmc.spec.quirks?.resetTypesInActionInfoOnly
      ? {}
      : { 'ResetType@Redfish.AllowableValues': allowedResetTypes(bmc) }),
  });
}

/** The Systems collection: the profile's systems, then any a bladed-enclosure quirk adds. */
export function addSystems(tree: Tree, systems: readonly string[]): void {
  tree.add(SYSTEMS, (bmc) =>
    collectionBody(SYSTEMS, 'ComputerSystemCollection', 'Computer System Collection', [
      ...systems,
      ...extraSystemPaths(bmc),
    ]),
  );
}
