// The switch-tray operation workflows, for the worker's entry (index.ts) and for tests bundling only these.
export { switchCertificateInstall, switchFactoryReset, switchPasswordRotation } from './switch-maintenance.js';
export { switchFirmwareUpdate } from './switch-firmware-update.js';
