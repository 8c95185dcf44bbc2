import {
  coldRebootTimings,
  missingForOperation,
  PowerAction,
  RackPowerOp,
  type BmcTarget,
  type ColdRebootInput,
  type DeviceBmcResetInput,
  type DevicePowerRefreshInput,
  type ManagerKind,
  type DevicePowerInput,
  type RackPowerInput,
  type RackTargets,
} from '@fleet/domain';
import type { Device, Job } from '@fleet/db';
import type { AgentConfig } from './config.js';

/** The workflow input for a device power job: IDs and references only, never secrets. */
export function devicePowerInput(job: Job, device: Device, power: AgentConfig['power']): DevicePowerInput | string[] {
  const missing = missingForOperation(device);
  if (missing.length > 0 || !device.nodeType || !device.bmcUrl || !device.credentialRef) return missing;
  return {
    jobId: job.id,
    action: PowerAction.parse(job.params['action']),
    target: {
      deviceId: device.id,
      nodeType: device.nodeType,
      bmcUrl: device.bmcUrl,
      credentialRef: device.credentialRef,
    },
    settleTimeoutS: power.settleTimeoutS,
    activity: activityOf(power),
  };
}

function activityOf(power: AgentConfig['power']) {
  return { heartbeatTimeoutS: power.heartbeatTimeoutS, startToCloseTimeoutS: power.startToCloseTimeoutS, maximumAttempts: power.maximumAttempts };
}

/** A rack job's devices by power class; devices the inventory cannot operate are named. */
export function rackTargets(devices: Device[]): RackTargets | string[] {
  const targets: RackTargets = { shelves: [], switches: [], compute: [] };
  const problems: string[] = [];
  for (const d of [...devices].sort((a, b) => a.name.localeCompare(b.name))) {
    const missing = missingForOperation(d);
    if (missing.length || !d.nodeType || !d.bmcUrl || !d.credentialRef) {
      problems.push(`${d.name}: no ${missing.join(', ')}`);
      continue;
    }
    const t: BmcTarget = { deviceId: d.id, nodeType: d.nodeType, bmcUrl: d.bmcUrl, credentialRef: d.credentialRef };
    if (d.nodeType.startsWith('powershelf_')) targets.shelves.push(t);
    else if (d.nodeType.startsWith('switch_')) targets.switches.push(t);
    else targets.compute.push(t);
  }
  return problems.length ? problems : targets;
}

export function rackPowerInput(job: Job, targets: RackTargets, power: AgentConfig['power']): RackPowerInput {
  return { jobId: job.id, rackId: job.rackId!, op: RackPowerOp.parse(job.params['op']), targets, settleTimeoutS: power.settleTimeoutS, activity: activityOf(power) };
}

export function coldRebootInput(job: Job, targets: RackTargets, power: AgentConfig['power']): ColdRebootInput {
  return {
    jobId: job.id,
    rackId: job.rackId!,
    targets,
    timings: coldRebootTimings((job.params['timings'] ?? {}) as Record<string, number>),
    settleTimeoutS: power.settleTimeoutS,
    activity: activityOf(power),
  };
}

/** The device as a BMC target, or what the inventory lacks to make it one. */
export function deviceTarget(device: Device): BmcTarget | string[] {
  const missing = missingForOperation(device);
  if (missing.length || !device.nodeType || !device.bmcUrl || !device.credentialRef) return missing;
  return { deviceId: device.id, nodeType: device.nodeType, bmcUrl: device.bmcUrl, credentialRef: device.credentialRef };
}

export function bmcResetInput(job: Job, target: BmcTarget, power: AgentConfig['power']): DeviceBmcResetInput {
  return { jobId: job.id, target, manager: (job.params['manager'] ?? 'bmc') as ManagerKind, waitUntilBackS: power.settleTimeoutS, activity: activityOf(power) };
}

export function powerRefreshInput(job: Job, target: BmcTarget, power: AgentConfig['power']): DevicePowerRefreshInput {
  return { jobId: job.id, target, activity: activityOf(power) };
}
