import type { Job } from '@fleet/db';
import { coldRebootTimings, RackPowerOp, type RackTargets } from '@fleet/domain';
import { activityOf, loadRackDevices } from './shared.js';
import { rackTargets } from './targets.js';
import type { InputLoader, LoaderDeps } from './types.js';

/** The rack's devices as targets by power class. */
async function loadRackTargets(deps: LoaderDeps, job: Job): Promise<RackTargets> {
  return rackTargets(await loadRackDevices(deps, job));
}

/** Power a rack's devices in order: shelves, switches, compute (reversed for off). */
export const rackPowerInput: InputLoader<'rack.power'> = async (deps, job) => ({
  jobId: job.id,
  rackId: job.rackId!,
  op: RackPowerOp.parse(job.params['op']),
  targets: await loadRackTargets(deps, job),
  settleTimeoutS: deps.config.power.settleTimeoutS,
  activity: activityOf(deps.config.power),
});

/** The cold-reboot runbook, with the request's timings over the defaults. */
export const coldRebootInput: InputLoader<'rack.cold_reboot'> = async (deps, job) => ({
  jobId: job.id,
  rackId: job.rackId!,
  targets: await loadRackTargets(deps, job),
  timings: coldRebootTimings((job.params['timings'] ?? {}) as Record<string, number>),
  settleTimeoutS: deps.config.power.settleTimeoutS,
  activity: activityOf(deps.config.power),
});
