export * from './types.js';
export * from './errors.js';
export * from './registry.js';
export { powerShelfActions, powerShelfChassisId, powerShelfResetTypes } from './power-shelf.redfish.js';
