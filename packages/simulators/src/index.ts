export * from './redfish/server.js';
export * from './redfish/bmc.js';
export * from './config.js';
export { startAdminServer } from './admin.js';
export { Faults } from './redfish/faults.js';
export { profiles, profileIds, type ProfileId, type Profile, type FirmwareSpec } from './redfish/profiles/index.js';
// For packages/redfish/test/simulator-faults.test.ts, which still builds its packages by hand.
export { crc32 } from '@fleet/fwpkg';
export { profileParts, profilePackageSpec, type ProfilePart } from './firmware-packages.js';
export { startNvosSimulator, type NvosSimulator, type NvosSimulatorOptions } from './nvos/simulator.js';
export {
  SimulatedSwitch,
  defaultNvosTimings,
  firmwareComponents,
  type SwitchSpec,
  type NvosTimings,
  type FirmwareComponent,
  type SshLogged,
} from './nvos/switch.js';
export { SwitchFaults } from './nvos/faults.js';
export { hostKeyFor, type HostKey } from './nvos/host-key.js';
