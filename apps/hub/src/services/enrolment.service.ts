import {
  getJob,
  heldDevices,
  insertIntent,
  notifyIntent,
  type Db,
  type DbOrTx,
  type Device,
  type Job,
} from '@fleet/db';
import {
  burnInFrom,
  decisionSignalName,
  defaultDecisionActions,
  enrolFrom,
  holdText,
  isHeld,
  isTerminal,
  kindOfNodeType,
  lifecycleRefusalMessage,
  roleAllows,
  type DecisionAction,
  type EnrolmentDecision,
  type EnrolmentStage,
  type FleetLifecycleState,
  type JobState,
} from '@fleet/domain';
import { ApiError, invalid, notFound } from '../errors.js';
import { auditAccepted, type Caller } from './caller.js';

/** The job kinds that wait for decisions. */
const decidingKinds = new Set(['rack.enrol', 'device.enrol', 'device.burn_in', 'device.remediate']);

/**
 * 409 unless every device may take the lifecycle move a job would start with (enrol: discovered or failed; burn-in:
 * enrolled or certified), naming each device that may not and the state it is in; a held device with since when and
 * why (one statement for all of them).
 */
export async function checkLifecycleStart(
  db: DbOrTx,
  devices: Device[],
  from: readonly FleetLifecycleState[],
  to: FleetLifecycleState,
): Promise<void> {
  const refused = devices.filter((d) => !from.includes(d.fleetLifecycle));
  if (refused.length === 0) return;
  const holds = new Map(
    (
      await heldDevices(
        db,
        refused.filter((d) => isHeld(d.fleetLifecycle)).map((d) => d.id),
      )
    ).map((h) => [h.deviceId, h]),
  );
  const state = (d: Device) => {
    const hold = holds.get(d.id);
    return hold ? holdText(hold) : d.fleetLifecycle;
  };
  const first = refused[0]!;
  const firstHold = holds.get(first.id);
  throw new ApiError(
    'CONFLICT',
    refused.length > 1
      ? `${refused.length} devices cannot move to ${to}: ` +
          refused
            .slice(0, 10)
            .map((d) => `${d.name} is ${state(d)}`)
            .join('; ')
      : firstHold
        ? `${first.name} is ${holdText(firstHold)}; it cannot move to ${to}: only remediation acts on a held device`
        : `${first.name}: ${lifecycleRefusalMessage(first.fleetLifecycle, to)}`,
    refused.slice(0, 50).map((d) => ({ field: `device/${d.id}`, issue: `is ${state(d)}` })),
  );
}

export const checkCanEnrol = (db: DbOrTx, devices: Device[]) =>
  checkLifecycleStart(db, devices, enrolFrom, 'enrolling');

/** A burn-in runs on a compute tray that is enrolled (or certified, to certify again). */
export async function checkCanBurnIn(db: DbOrTx, device: Device): Promise<void> {
  if (kindOfNodeType(device.nodeType) !== 'compute')
    throw new ApiError(
      'FAILED_PRECONDITION',
      `${device.name} is a ${device.nodeType ?? 'device of unknown type'}: only compute trays are burned in on their ` +
        "own; switch trays and power shelves are burned in with their rack's enrolment",
    );
  await checkLifecycleStart(db, [device], burnInFrom, 'burning_in');
}

export interface DecisionRequest {
  action: DecisionAction;
  reason: string;
  deviceIds?: string[] | undefined;
}

/**
 * An operator's answer to a stage that waits: checked against the job as projected (it must be an enrolment or burn-in
 * job waiting for a decision, for these devices; skip is for admins), then written as a signal intent with its audit
 * row in one transaction. The workflow agent delivers it; the workflow drops a decision for a stage no longer waiting.
 */
export async function decide(db: Db, caller: Caller, jobId: string, req: DecisionRequest): Promise<Job> {
  const job = await getJob(db, jobId);
  if (!job) throw notFound('job', jobId);
  if (!decidingKinds.has(job.kind))
    throw new ApiError('FAILED_PRECONDITION', `job ${jobId} is a ${job.kind} job: it takes no decisions`);
  if (isTerminal(job.state as JobState)) throw new ApiError('FAILED_PRECONDITION', `job ${jobId} already ${job.state}`);
  const waiting = job.progress?.decision;
  if (!waiting)
    throw new ApiError('CONFLICT', `job ${jobId} is not waiting for a decision (stage ${job.progress?.stage ?? '?'})`);
  const allowed = waiting.actions ?? defaultDecisionActions;
  if (!allowed.includes(req.action))
    throw new ApiError('CONFLICT', `the wait at ${waiting.stage} takes ${allowed.join(', ')}, not ${req.action}`, [
      { field: 'body.action', issue: `one of ${allowed.join(', ')}` },
    ]);
  if (req.action === 'skip' && !roleAllows(caller.actor.role ?? 'viewer', 'admin'))
    throw new ApiError('PERMISSION_DENIED', 'only an admin may skip a stage; an operator may retry or reject');
  const unknown = (req.deviceIds ?? []).filter((id) => !(id in waiting.devices));
  if (unknown.length) throw invalid('body.device_ids', `not waiting at ${waiting.stage}: ${unknown.join(', ')}`);
  const decision: EnrolmentDecision = {
    action: req.action,
    stage: waiting.stage as EnrolmentStage,
    since: waiting.since,
    reason: req.reason,
    ...(req.deviceIds?.length ? { deviceIds: req.deviceIds } : {}),
    by: caller.actor.name,
  };
  return db.transaction(async (tx) => {
    await insertIntent(tx, jobId, 'signal', { signal: decisionSignalName, args: [decision] });
    await notifyIntent(tx, jobId);
    await auditAccepted(tx, caller, 202, {
      action: `job.decision.${req.action}`,
      target: `job/${jobId}`,
      jobId,
      details: { stage: waiting.stage, reason: req.reason, device_ids: req.deviceIds ?? Object.keys(waiting.devices) },
    });
    return (await getJob(tx, jobId))!;
  });
}
