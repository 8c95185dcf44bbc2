import type { DeviceActivities } from '@fleet/domain';
import { createAwaitDevicesActivity } from './await-devices.js';
import { createBmcResetActivity } from './bmc-reset.js';
import { createVerificationActivities } from './enrolment.js';
import { createHardwareInventoryActivity, type HardwareInventoryActivityDeps } from './hardware-inventory.js';
import { createPowerActivities } from './power.js';
import { createReadPowerActivity } from './read-power.js';

export type { DeviceActivityDeps } from './context.js';
export { createBmcPasswordActivity, type BmcPasswordDeps } from './bmc-password.js';
export { createBurnInActivities, type BurnInActivityDeps } from './burn-in.js';
export { createFetchArtifactActivity, type ArtifactActivityDeps } from './fetch-artifact.js';
export { createFirmwareActivities, type FirmwareActivityDeps } from './firmware.js';
export { createNvosActivities, type NvosActivityDeps } from './nvos.js';

/** Every device activity a site worker registers (the DeviceActivities contract). */
export function createDeviceActivities(deps: HardwareInventoryActivityDeps): DeviceActivities {
  return {
    ...createPowerActivities(deps),
    ...createBmcResetActivity(deps),
    ...createAwaitDevicesActivity(deps),
    ...createReadPowerActivity(deps),
    ...createHardwareInventoryActivity(deps),
    ...createVerificationActivities(deps),
  };
}
export { createSwitchActivities, type SwitchActivityDeps } from './switch-activities.js';
