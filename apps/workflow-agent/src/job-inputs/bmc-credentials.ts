import { bmcCredentialSharing, type Device } from '@fleet/db';
import { defaultBmcRotationConcurrency } from '@fleet/domain';
import { PermanentIntentError } from './errors.js';
import { activityOf, loadDevice, loadRackDevices } from './shared.js';
import { deviceTarget } from './targets.js';
import type { InputLoader, LoaderDeps } from './types.js';

/** The hub checked when the request arrived; a NetBox sync since may have given the reference to another login. */
async function assertOwnReference(deps: LoaderDeps, device: Device): Promise<void> {
  const shared = await bmcCredentialSharing(deps.db, device);
  if (shared) throw new PermanentIntentError('FAILED_PRECONDITION', shared);
}

/** Rotate one device's BMC password, unless its reference is (now) shared with another login. */
export const bmcPasswordRotationInput: InputLoader<'bmc.password_rotation'> = async (deps, job) => {
  const device = await loadDevice(deps, job);
  await assertOwnReference(deps, device);
  return { jobId: job.id, target: deviceTarget(device), activity: activityOf(deps.config.power) };
};

/** Rotate the BMC passwords of the rack's devices, each checked as a single device's rotation is. */
export const rackBmcPasswordRotationInput: InputLoader<'rack.bmc_password_rotation'> = async (deps, job) => {
  const devices = await loadRackDevices(deps, job);
  for (const d of devices) await assertOwnReference(deps, d);
  const concurrency = Number(job.params['concurrency'] ?? defaultBmcRotationConcurrency);
  return {
    jobId: job.id,
    rackId: job.rackId!,
    targets: devices.map(deviceTarget),
    concurrency,
    activity: activityOf(deps.config.power),
  };
};
