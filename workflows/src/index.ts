// The entry the worker bundles: every workflow type the project runs.
export { devicePower } from './device-power.js';
export { deviceBmcReset, devicePowerRefresh } from './device-maintenance.js';
export { rackPower } from './rack-power.js';
export { rackColdReboot } from './cold-reboot.js';
export { deviceFirmwareUpdateV2 } from './firmware-update.js';
// Replay only: updates started before V2 (firmware-update-v1.ts says when to delete it).
export { deviceFirmwareUpdate } from './firmware-update-v1.js';
export { deviceFirmwareRefresh } from './firmware-refresh.js';
export { firmwareCampaign } from './firmware-campaign.js';
export { switchNvosInstall } from './nvos-install.js';
export * from './switch-workflows.js';
export { enrolment } from './enrolment.js';
export { siteObserver } from './site-observer.js';
export { remediation } from './remediation.js';
export { bmcPasswordRotation, rackBmcPasswordRotation } from './bmc-rotation.js';
