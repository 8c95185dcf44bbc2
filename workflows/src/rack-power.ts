import { ApplicationFailure, isCancellation, patched, upsertMemo } from '@temporalio/workflow';
import type { BmcTarget, JobMemo, PowerAction, RackPowerInput } from '@fleet/domain';
import { jobMemoKey, rackPowerClasses } from '@fleet/domain/workflow-safe';
import { deviceActivities } from './activities.js';
import { jobErrorFrom } from './device-power.js';
import { CoalescedMemo, StageRecorder } from './timeline.js';

type PowerClass = (typeof rackPowerClasses)[number];
interface Step {
  name: string;
  cls: PowerClass;
  action: PowerAction;
}

/** On: shelves, switches, compute. Off: compute (graceful), switches, shelves. Cycle: off, then on. */
export function rackPowerPlan(op: RackPowerInput['op']): Step[] {
  const on = rackPowerClasses.map((cls) => ({ name: `power_on_${cls}`, cls, action: 'on' as const }));
  const off = [...rackPowerClasses].reverse().map((cls) => ({ name: `power_off_${cls}`, cls, action: 'off' as const }));
  return op === 'on' ? on : op === 'off' ? off : [...off, ...on];
}

/**
 * Ordered rack power. Each class is powered and verified (every device settled in
 * the asked state) before the next starts; the first class with a failure stops the
 * sequence (fail fast, no rollback). Per-device outcomes go to the child jobs.
 */
export async function rackPower(input: RackPowerInput): Promise<JobMemo> {
  const acts = deviceActivities(input.activity);
  const plan = rackPowerPlan(input.op);
  const byClass: Record<PowerClass, BmcTarget[]> = input.targets;
  const all = [...input.targets.shelves, ...input.targets.switches, ...input.targets.compute];
  // One memo upsert per workflow task (before each await and at the end): a stage's finish and the next one's start
  // share one event. Runs started before the patch replay their upserts as they made them, one per change.
  const coalesce = patched('rack-memo-coalesced');
  const memo = new CoalescedMemo<JobMemo>((m) => upsertMemo({ [jobMemoKey]: m }));
  const rec = new StageRecorder(
    plan.map((s) => s.name),
    all.map((t) => t.deviceId),
    (m) => (coalesce ? memo.set(m) : upsertMemo({ [jobMemoKey]: m })),
  );
  rec.emit();
  try {
    for (const [i, step] of plan.entries()) {
      const targets = byClass[step.cls];
      rec.start(step.name, `${step.action} ${targets.length} ${step.cls}`);
      memo.flush();
      const lastStepForDevice = plan.findLastIndex((s) => s.cls === step.cls) === i;
      const results = await Promise.allSettled(
        targets.map((target) =>
          acts.setDevicePower({ target, action: step.action, settleTimeoutS: input.settleTimeoutS }),
        ),
      );
      const failed: string[] = [];
      results.forEach((r, j) => {
        const id = targets[j]!.deviceId;
        if (r.status === 'fulfilled') {
          rec.device(id, { state: lastStepForDevice ? 'succeeded' : 'running', powerState: r.value.powerState });
        } else {
          if (isCancellation(r.reason)) throw r.reason;
          failed.push(id);
          rec.device(id, { state: 'failed', error: jobErrorFrom(r.reason) });
        }
      });
      if (failed.length) {
        const message = `${failed.length}/${targets.length} ${step.cls} failed to ${step.action}; sequence stopped`;
        rec.finish(step.name, 'failed', message);
        rec.closeUnreached(`not reached: the sequence stopped at ${step.name}`);
        rec.emit({ error: { code: 'STAGE_FAILED', message, details: { stage: step.name, devices: failed } } });
        memo.flush();
        throw ApplicationFailure.nonRetryable(message, 'STAGE_FAILED');
      }
      rec.finish(step.name, 'completed', `${targets.length} ${step.cls} ${step.action}`);
    }
    const result: JobMemo = { timeline: rec.timeline, devices: rec.devices };
    rec.emit({ result: { op: input.op, devices: all.length } });
    memo.flush();
    return result;
  } catch (err) {
    if (isCancellation(err)) {
      const current = rec.timeline.currentStage;
      if (current) rec.finish(current, 'cancelled', 'cancelled by request');
      rec.closeUnreached('not reached: the job was cancelled');
      rec.emit({ error: { code: 'CANCELLED', message: 'the job was cancelled' } });
    }
    memo.flush();
    throw err;
  }
}
