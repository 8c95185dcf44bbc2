export * from './redfish/server.js';
export * from './redfish/bmc.js';
export * from './config.js';
export { startAdminServer } from './admin.js';
export { Faults } from './redfish/faults.js';
export { profiles, profileIds, type ProfileId, type Profile, type FirmwareSpec } from './redfish/profiles/index.js';
export { parsePldmHeader, crc32, type PldmPackage } from './redfish/pldm.js';
