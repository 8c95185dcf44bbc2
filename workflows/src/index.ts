// The entry the worker bundles: every workflow type the project runs.
export { devicePower } from './device-power.js';
export { deviceBmcReset, devicePowerRefresh } from './device-maintenance.js';
export { rackPower } from './rack-power.js';
export { rackColdReboot } from './cold-reboot.js';
export { deviceFirmwareUpdate } from './firmware-update.js';
export { deviceFirmwareRefresh } from './firmware-refresh.js';
export { firmwareCampaign } from './firmware-campaign.js';
export { switchNvosInstall } from './nvos-install.js';
export * from './switch-workflows.js';
