import type { Job } from '@fleet/db';
import { PowerAction, type DevicePowerRefreshInput, type ManagerKind } from '@fleet/domain';
import { activityOf, loadDevice } from './shared.js';
import { deviceTarget } from './targets.js';
import type { InputLoader, LoaderDeps } from './types.js';

/** Power a device on, off or through a cycle. */
export const devicePowerInput: InputLoader<'device.power'> = async (deps, job) => {
  const target = deviceTarget(await loadDevice(deps, job));
  return {
    jobId: job.id,
    action: PowerAction.parse(job.params['action']),
    target,
    settleTimeoutS: deps.config.power.settleTimeoutS,
    activity: activityOf(deps.config.power),
  };
};

/** Reset a device's BMC (or HMC) and wait until it answers again. */
export const bmcResetInput: InputLoader<'device.bmc_reset'> = async (deps, job) => ({
  jobId: job.id,
  target: deviceTarget(await loadDevice(deps, job)),
  manager: (job.params['manager'] ?? 'bmc') as ManagerKind,
  waitUntilBackS: deps.config.power.settleTimeoutS,
  activity: activityOf(deps.config.power),
});

/** Read a device's state from its BMC: the input of the power refresh and of the firmware inventory refresh. */
export async function deviceReadInput(deps: LoaderDeps, job: Job): Promise<DevicePowerRefreshInput> {
  return {
    jobId: job.id,
    target: deviceTarget(await loadDevice(deps, job)),
    activity: activityOf(deps.config.power),
  };
}
