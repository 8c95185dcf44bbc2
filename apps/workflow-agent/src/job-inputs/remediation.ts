import { z } from 'zod';
import {
  faultClasses,
  fleetLifecycleStates,
  playbookSteps,
  type RemediationInput,
  type RemediationMode,
} from '@fleet/domain';
import { PermanentIntentError } from './errors.js';
import { activityOf, loadDevice } from './shared.js';
import { deviceTarget } from './targets.js';
import type { InputLoader } from './types.js';

/** What the hub writes into a quarantine, remediation or release job (services/remediation.service.ts). */
const RemediationParams = z.object({
  reason: z.string().min(1),
  rule: z.string().optional(),
  fault: z
    .object({
      class: z.enum(faultClasses),
      component: z.string(),
      severity: z.enum(['Warning', 'Critical']),
      message: z.string(),
    })
    .optional(),
  playbook: z.object({ steps: z.array(z.enum(playbookSteps)) }).optional(),
  await_approval: z.string().optional(),
  return_to: z.enum(fleetLifecycleStates),
  already_quarantined: z.boolean(),
  rma_case_id: z.uuid().optional(),
});

type RemediationKind =
  'device.quarantine' | 'device.remediate' | 'device.release' | 'device.rma_ship' | 'device.rma_return';

const modes: Record<RemediationKind, RemediationMode> = {
  'device.quarantine': 'quarantine',
  'device.remediate': 'remediate',
  'device.release': 'release',
  'device.rma_ship': 'rma_ship',
  'device.rma_return': 'rma_return',
};

/** A quarantine, remediation or release of one device: the hub decided the playbook and the gate; timings are ours. */
export function remediationInput<K extends RemediationKind>(kind: K): InputLoader<K> {
  return async (deps, job) => {
    const parsed = RemediationParams.safeParse(job.params);
    if (!parsed.success)
      throw new PermanentIntentError('INVALID_ARGUMENT', `${kind} job params: ${parsed.error.issues[0]?.message}`);
    const p = parsed.data;
    if (kind === 'device.remediate' && !p.fault)
      throw new PermanentIntentError('INVALID_ARGUMENT', 'a remediation job names the fault it is for');
    const device = await loadDevice(deps, job);
    const input: RemediationInput = {
      jobId: job.id,
      mode: modes[kind],
      target: deviceTarget(device),
      deviceName: device.name,
      reason: p.reason,
      ...(p.rule ? { rule: p.rule } : {}),
      ...(p.fault ? { fault: p.fault } : {}),
      ...(p.playbook ? { playbook: p.playbook } : {}),
      ...(p.await_approval ? { awaitApproval: p.await_approval } : {}),
      ...(p.rma_case_id ? { rmaCaseId: p.rma_case_id } : {}),
      returnTo: p.return_to,
      alreadyQuarantined: p.already_quarantined,
      verifyTimeoutS: deps.config.remediation.verifyTimeoutS,
      verifyPollS: deps.config.remediation.verifyPollS,
      activity: activityOf(deps.config.power),
    };
    return input;
  };
}
