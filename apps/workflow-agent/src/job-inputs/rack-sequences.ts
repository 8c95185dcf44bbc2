import { childrenOf, getDevicesByIds, type Job } from '@fleet/db';
import { coldRebootTimings, RackPowerOp, type RackTargets } from '@fleet/domain';
import { activityOf } from './shared.js';
import { rackTargets } from './targets.js';
import type { InputLoader, LoaderDeps } from './types.js';

/** The rack's devices: those of the job's children (one per device, created with the job). */
async function loadRackTargets({ db }: LoaderDeps, job: Job): Promise<RackTargets> {
  const children = await childrenOf(db, job.id);
  return rackTargets(
    await getDevicesByIds(
      db,
      children.flatMap((c) => (c.deviceId ? [c.deviceId] : [])),
    ),
  );
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
