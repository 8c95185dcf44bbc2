import { getFirmwarePackage, nvosCredentialSharing, type Job } from '@fleet/db';
import {
  defaultSwitchFirmwareTimings,
  defaultSwitchRebootTimings,
  isNvosImage,
  type ActivityTimeouts,
  type NvosTarget,
  type SwitchFirmwareStep,
} from '@fleet/domain';
import { PermanentIntentError } from './errors.js';
import { activityOf, loadDevice, loadManifest } from './shared.js';
import { nvosTarget } from './targets.js';
import type { InputLoader, LoaderDeps } from './types.js';

/** What every switch operation takes: the switch's NVOS target, nothing secret. */
async function switchBase(deps: LoaderDeps, job: Job): Promise<SwitchBase> {
  return { jobId: job.id, target: nvosTarget(await loadDevice(deps, job)), activity: activityOf(deps.config.power) };
}
interface SwitchBase {
  jobId: string;
  target: NvosTarget;
  activity: ActivityTimeouts;
}

/** Install an NVOS image: the image by digest and the build its metadata carries. */
export const nvosInstallInput: InputLoader<'switch.nvos_install'> = async (deps, job) => {
  const base = await switchBase(deps, job);
  const packageId = String(job.params['package_id'] ?? '');
  const image = await getFirmwarePackage(deps.db, packageId);
  if (!image) throw new PermanentIntentError('FAILED_PRECONDITION', `package ${packageId} no longer exists`);
  if (!isNvosImage(image.metadata))
    throw new PermanentIntentError('FAILED_PRECONDITION', `package ${image.fileName} is not an NVOS image`);
  const { buildId } = image.metadata;
  return {
    ...base,
    image: { digest: image.digest, size: image.sizeBytes, fileName: image.fileName, buildId },
    timings: deps.config.nvos,
  };
};

/** Rotate the switch's NVOS password, unless its reference is (now) shared with another login. */
export const passwordRotationInput: InputLoader<'switch.password_rotation'> = async (deps, job) => {
  const device = await loadDevice(deps, job);
  const target = nvosTarget(device);
  // The hub checked when the request arrived; a NetBox sync since may have given the reference to another login.
  const shared = await nvosCredentialSharing(deps.db, device);
  if (shared) throw new PermanentIntentError('FAILED_PRECONDITION', shared);
  return { jobId: job.id, target, activity: activityOf(deps.config.power) };
};

export const factoryResetInput: InputLoader<'switch.factory_reset'> = async (deps, job) => ({
  ...(await switchBase(deps, job)),
  timings: defaultSwitchRebootTimings,
});

export const certificateInstallInput: InputLoader<'switch.certificate_install'> = async (deps, job) => ({
  ...(await switchBase(deps, job)),
  domain: String(job.params['domain']),
});

/** Update the switch tray's platform components through NVOS, from the job's manifest. */
export const switchFirmwareUpdateInput: InputLoader<'switch.firmware_update'> = async (deps, job) => {
  const base = await switchBase(deps, job);
  const manifest = await loadManifest(deps, job);
  return {
    ...base,
    steps: manifest.steps as SwitchFirmwareStep[],
    force: job.params['force'] === true,
    timings: defaultSwitchFirmwareTimings,
  };
};
