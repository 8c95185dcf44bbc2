import type { Job } from '@fleet/db';
import { JobKind, jobKindTable, type WorkflowJobKind } from '@fleet/domain';
import { bmcPasswordRotationInput, rackBmcPasswordRotationInput } from './bmc-credentials.js';
import { bmcResetInput, deviceReadInput, devicePowerInput } from './device-power.js';
import { firmwareCampaignInput } from './campaign.js';
import { burnInInput, deviceEnrolInput, rackEnrolInput } from './enrolment.js';
import { firmwareUpdateInput } from './firmware.js';
import { coldRebootInput, rackPowerInput } from './rack-sequences.js';
import { remediationInput } from './remediation.js';
import {
  certificateInstallInput,
  factoryResetInput,
  nvosInstallInput,
  passwordRotationInput,
  switchFirmwareUpdateInput,
} from './switch-operations.js';
import { PermanentIntentError } from './errors.js';
import type { InputLoaders, LoaderDeps, WorkflowInputs } from './types.js';

export { MissingInventoryError, PermanentIntentError } from './errors.js';
export type { InputLoader, InputLoaders, LoaderDeps, WorkflowInputs } from './types.js';

/**
 * The workflow agent's half of the job-kind registry (the domain's jobKindTable is the other): how each kind that
 * starts a workflow builds its input. A new kind is added there, here and as a workflow; the dispatcher stays as it is.
 */
export const inputLoaders: InputLoaders = {
  'device.power': devicePowerInput,
  'device.bmc_reset': bmcResetInput,
  'device.power_refresh': deviceReadInput,
  'rack.power': rackPowerInput,
  'rack.cold_reboot': coldRebootInput,
  'device.firmware_update': firmwareUpdateInput,
  'device.firmware_refresh': deviceReadInput,
  'firmware.campaign': firmwareCampaignInput,
  'switch.nvos_install': nvosInstallInput,
  'switch.password_rotation': passwordRotationInput,
  'switch.factory_reset': factoryResetInput,
  'switch.firmware_update': switchFirmwareUpdateInput,
  'switch.certificate_install': certificateInstallInput,
  'bmc.password_rotation': bmcPasswordRotationInput,
  'rack.bmc_password_rotation': rackBmcPasswordRotationInput,
  'rack.enrol': rackEnrolInput,
  'device.enrol': deviceEnrolInput,
  'device.burn_in': burnInInput,
  'device.quarantine': remediationInput('device.quarantine'),
  'device.remediate': remediationInput('device.remediate'),
  'device.release': remediationInput('device.release'),
  'device.rma_ship': remediationInput('device.rma_ship'),
  'device.rma_return': remediationInput('device.rma_return'),
};

/** The workflow type and input that start a job. A kind that starts no workflow of its own fails for good. */
export async function workflowFor(
  deps: LoaderDeps,
  job: Job,
): Promise<{ type: string; input: WorkflowInputs[WorkflowJobKind] }> {
  const kind = JobKind.safeParse(job.kind);
  if (!kind.success) throw new PermanentIntentError('INVALID_ARGUMENT', `unknown job kind ${job.kind}`);
  if (!startsWorkflow(kind.data))
    throw new PermanentIntentError(
      'INVALID_ARGUMENT',
      `job kind ${kind.data} starts no workflow of its own: its child jobs do the work`,
    );
  return { type: jobKindTable[kind.data].workflowType, input: await inputLoaders[kind.data](deps, job) };
}

function startsWorkflow(kind: JobKind): kind is WorkflowJobKind {
  return jobKindTable[kind].workflowType !== null;
}
