import { ApplicationFailure, isCancellation, proxyActivities, upsertMemo } from '@temporalio/workflow';
import type {
  ActivityTimeouts,
  BmcCredentialActivities,
  BmcPasswordRotationInput,
  BmcPasswordRotationResult,
  BmcTarget,
  JobMemo,
  RackBmcPasswordRotationInput,
} from '@fleet/domain';
import { jobMemoKey } from '@fleet/domain/workflow-safe';
import { published } from './device-maintenance.js';
import { jobActivityOptions } from './activities.js';
import { jobErrorFrom } from './device-power.js';
import { CoalescedMemo, StageRecorder } from './timeline.js';

/** Failure types no retry mends; VERIFICATION_FAILED comes after a rollback, which a retry must not undo. */
function bmcCredentialActivities(t: ActivityTimeouts) {
  return proxyActivities<BmcCredentialActivities>(jobActivityOptions(t, ['VERIFICATION_FAILED']));
}

/**
 * Rotates the password behind one device's BMC credential reference. Only the reference is in this workflow's
 * history: the satellite generates, stages, applies, verifies and stores the password (or rolls it back).
 */
export async function bmcPasswordRotation(input: BmcPasswordRotationInput): Promise<BmcPasswordRotationResult> {
  const { rotateBmcPassword } = bmcCredentialActivities(input.activity);
  return published('rotate_password', `rotating the BMC password of ${input.target.deviceId}`, () =>
    rotateBmcPassword({ target: input.target }),
  );
}

/**
 * Rotates a rack's BMC passwords, at most `concurrency` devices at a time; each device's outcome goes to its child
 * job. The first failure stops new starts (a fault that refuses one BMC's rotation may refuse them all): the running
 * devices finish, the rest end as not reached, and the job fails naming the failed devices.
 */
export async function rackBmcPasswordRotation(input: RackBmcPasswordRotationInput): Promise<JobMemo> {
  const { rotateBmcPassword } = bmcCredentialActivities(input.activity);
  const memo = new CoalescedMemo<JobMemo>((m) => upsertMemo({ [jobMemoKey]: m }));
  const stage = 'rotate_passwords';
  const rec = new StageRecorder(
    [stage],
    input.targets.map((t) => t.deviceId),
    (m) => memo.set(m),
  );
  const queue = [...input.targets];
  const failed: string[] = [];
  let rotated = 0;
  const worker = async (): Promise<void> => {
    for (let target: BmcTarget | undefined; !failed.length && (target = queue.shift());) {
      rec.device(target.deviceId, { state: 'running' });
      memo.flush();
      try {
        const r = await rotateBmcPassword({ target });
        rotated++;
        rec.device(target.deviceId, { state: 'succeeded', message: r.rotatedNow ? 'rotated' : 'already rotated' });
      } catch (err) {
        if (isCancellation(err)) throw err;
        failed.push(target.deviceId);
        rec.device(target.deviceId, { state: 'failed', error: jobErrorFrom(err) });
      }
      memo.flush();
    }
  };
  rec.start(stage, `${input.targets.length} BMCs, ${input.concurrency} at a time`);
  memo.flush();
  try {
    await Promise.all(Array.from({ length: Math.min(input.concurrency, input.targets.length) }, worker));
  } catch (err) {
    rec.closeUnreached('not reached: the job was cancelled');
    rec.finish(stage, 'failed', 'cancelled');
    memo.flush();
    throw err;
  }
  const result = { devices: input.targets.length, rotated, failed: failed.length };
  if (failed.length) {
    const message = `${failed.length}/${input.targets.length} BMC password rotations failed; later devices not started`;
    rec.closeUnreached(`not reached: ${failed.join(', ')} failed first`);
    rec.finish(stage, 'failed', message);
    rec.emit({ result, error: { code: 'STAGE_FAILED', message, details: { stage, devices: failed } } });
    memo.flush();
    throw ApplicationFailure.nonRetryable(message, 'STAGE_FAILED');
  }
  rec.finish(stage, 'completed', `${rotated} BMC passwords rotated`);
  rec.emit({ result });
  memo.flush();
  return { timeline: rec.timeline, devices: rec.devices };
}
