export * from './redfish/server.js';
export * from './redfish/bmc.js';
export * from './config.js';
export { startAdminServer } from './admin.js';
