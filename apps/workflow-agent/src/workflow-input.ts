import { missingForOperation, PowerAction, type DevicePowerInput } from '@fleet/domain';
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
    activity: {
      heartbeatTimeoutS: power.heartbeatTimeoutS,
      startToCloseTimeoutS: power.startToCloseTimeoutS,
      maximumAttempts: power.maximumAttempts,
    },
  };
}
