import type { SimulatedBmc } from './bmc.js';

/** Resource bodies, shaped after the NVIDIA GB200 compute-tray BMC (rms.md §4.1). */
export function serviceRoot(bmc: SimulatedBmc): unknown {
  return {
    '@odata.id': '/redfish/v1',
    '@odata.type': '#ServiceRoot.v1_15_0.ServiceRoot',
    Id: 'RootService',
    Name: 'Root Service',
    RedfishVersion: '1.17.0',
    UUID: uuidFor(bmc.spec.id),
    Systems: { '@odata.id': '/redfish/v1/Systems' },
    Links: { Sessions: { '@odata.id': '/redfish/v1/SessionService/Sessions' } },
  };
}

export function systemsCollection(): unknown {
  return {
    '@odata.id': '/redfish/v1/Systems',
    '@odata.type': '#ComputerSystemCollection.ComputerSystemCollection',
    Name: 'Computer System Collection',
    'Members@odata.count': 1,
    Members: [{ '@odata.id': '/redfish/v1/Systems/System_0' }],
  };
}

export function system(bmc: SimulatedBmc): unknown {
  return {
    '@odata.id': '/redfish/v1/Systems/System_0',
    '@odata.type': '#ComputerSystem.v1_22_0.ComputerSystem',
    Id: 'System_0',
    Name: 'System_0',
    SystemType: 'Physical',
    Manufacturer: 'NVIDIA',
    Model: 'GB200 NVL',
    SerialNumber: bmc.spec.serialNumber ?? `SIM${bmc.spec.id}`,
    PowerState: bmc.powerState,
    Status: { State: 'Enabled', Health: 'OK' },
    Actions: {
      '#ComputerSystem.Reset': {
        target: '/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset',
        'ResetType@Redfish.AllowableValues': [
          'On',
          'ForceOn',
          'ForceOff',
          'GracefulShutdown',
          'GracefulRestart',
          'ForceRestart',
          'PowerCycle',
        ],
      },
    },
  };
}

function uuidFor(id: string): string {
  const hex = Buffer.from(id).toString('hex').padEnd(32, '0').slice(0, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
