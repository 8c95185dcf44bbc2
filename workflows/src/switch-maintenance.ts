import type {
  SwitchCertificateInstallInput,
  SwitchCertificateResult,
  SwitchFactoryResetInput,
  SwitchFactoryResetResult,
  SwitchPasswordRotationInput,
  SwitchPasswordRotationResult,
} from '@fleet/domain';
import { published } from './device-maintenance.js';
import { switchActivities } from './switch-activities.js';

/**
 * Rotates the NVOS password behind the switch's credential reference. Only the reference is
 * in this workflow's history: the satellite generates, applies, verifies and stores the password.
 */
export async function switchPasswordRotation(
  input: SwitchPasswordRotationInput,
): Promise<SwitchPasswordRotationResult> {
  const { rotateSwitchPassword } = switchActivities(input.activity);
  return published('rotate_password', `rotating the password of ${input.target.deviceId}`, () =>
    rotateSwitchPassword({ target: input.target }),
  );
}

/**
 * Resets the switch's NVOS to factory defaults: destructive, so the hub admits it only for an
 * admin who confirmed it. Done once admin/admin logs in over SSH after the reboot.
 */
export async function switchFactoryReset(input: SwitchFactoryResetInput): Promise<SwitchFactoryResetResult> {
  const { resetSwitchToFactoryDefault } = switchActivities(input.activity, input.timings.maxWaitS + 120);
  return published('factory_reset', `factory reset of ${input.target.deviceId}`, () =>
    resetSwitchToFactoryDefault({ target: input.target, timings: input.timings }),
  );
}

/** Installs the domain's mTLS material on the switch and binds its NVUE API to it. */
export async function switchCertificateInstall(input: SwitchCertificateInstallInput): Promise<SwitchCertificateResult> {
  const { installSwitchCertificate } = switchActivities(input.activity);
  return published('install_certificate', `${input.domain} certificate on ${input.target.deviceId}`, () =>
    installSwitchCertificate({ target: input.target, domain: input.domain }),
  );
}
