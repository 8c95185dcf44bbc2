export * from './client.js';
export * from './errors.js';
export * from './options.js';
export { SiteLimiter } from './limiter.js';
export { DiscoveryCache } from './discovery-cache.js';
export { CertificatePinError } from '@fleet/http';
export { readCollection, findMember, memberUri, type CollectionMembers } from './discovery.js';
export * from './actions.js';
export * from './systems.js';
export * from './managers.js';
export * from './accounts.js';
export {
  listChassis,
  getPowerSubsystem,
  chassisPowerState,
  resetChassis,
  type ChassisSummary,
  type PowerSubsystem,
  type PowerSupply,
  type ResourceStatus,
} from './chassis.js';
export * from './firmware.js';
export { multipartFirmwareBody, type UpdateParameters, type FirmwareFile } from './multipart.js';
export * from './update.js';
export * from './tasks.js';
export * from './task-pacing.js';
export * from './nvidia.js';
export * from './hardware-inventory.js';
export { readDeviceHealth, type HealthSource } from './health.js';
export * from './events.js';
