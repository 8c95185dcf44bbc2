import type { SwitchActivities } from '@fleet/domain';
import { createSwitchCertificateActivity, type SwitchCertificateDeps } from './switch-certificate.js';
import { createSwitchFactoryResetActivity, type SwitchFactoryResetDeps } from './switch-factory-reset.js';
import { createSwitchFirmwareActivities, type SwitchFirmwareDeps } from './switch-firmware.js';
import { createNvueHelloActivity } from './switch-nvue-hello.js';
import { createSwitchPasswordActivity, type SwitchPasswordDeps } from './switch-password.js';
import { createSwitchPowerCycleActivity } from './switch-power-cycle.js';

export type SwitchActivityDeps = SwitchPasswordDeps &
  SwitchFactoryResetDeps &
  SwitchFirmwareDeps &
  SwitchCertificateDeps;

/** Every switch-operation activity a site worker registers (the SwitchActivities contract). */
export function createSwitchActivities(deps: SwitchActivityDeps): SwitchActivities {
  return {
    ...createSwitchPasswordActivity(deps),
    ...createSwitchFactoryResetActivity(deps),
    ...createSwitchFirmwareActivities(deps),
    ...createSwitchPowerCycleActivity(deps),
    ...createSwitchCertificateActivity(deps),
    ...createNvueHelloActivity(deps),
  };
}
