import { roleOfNodeType } from '@fleet/domain';
import { activityOf, firmwareTimings, loadDevice, loadManifest } from './shared.js';
import { deviceTarget } from './targets.js';
import type { InputLoader } from './types.js';

/** One device's update over Redfish: its manifest with packages by digest; the device must report each component. */
export const firmwareUpdateInput: InputLoader<'device.firmware_update'> = async (deps, job) => {
  const target = deviceTarget(await loadDevice(deps, job));
  const manifest = await loadManifest(deps, job);
  return {
    jobId: job.id,
    target,
    role: roleOfNodeType(target.nodeType),
    steps: manifest.steps,
    expectedInventory: manifest.expectedInventory,
    force: job.params['force'] === true,
    timings: firmwareTimings(deps.config.firmware),
    activity: activityOf(deps.config.power),
  };
};
