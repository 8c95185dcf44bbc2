import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  proxyActivities,
  proxyLocalActivities,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  ApplyFirmwareResult,
  ComponentResult,
  ComponentVersion,
  DeviceFirmwareResult,
  DeviceFirmwareUpdateInput,
  FirmwareActivities,
  FirmwareResultCode,
} from '@fleet/domain';
import { firmwareCodeFor, jobMemoKey } from '@fleet/domain/workflow-safe';
import { jobCancellation } from './cancellation.js';
import { jobErrorFrom } from './device-power.js';
import { missingComponents, stepsToRun, verifyComponents, type StepPlan } from './firmware-plan.js';
import { CoalescedMemo, StageRecorder } from './timeline.js';

/** Pushes per step at most (mirrors the satellite's MAX_PUSH_GENERATIONS), for the activity's time budget. */
const PUSH_GENERATIONS = 3;

function firmwareActivities(input: DeviceFirmwareUpdateInput) {
  const retry = {
    initialInterval: '2s',
    backoffCoefficient: 2,
    maximumInterval: '60s',
    maximumAttempts: input.activity.maximumAttempts,
    nonRetryableErrorTypes: [
      'INVALID_ARGUMENT',
      'UNAUTHENTICATED',
      'NOT_FOUND',
      'FAILED_PRECONDITION',
      'TARGET_NOT_FOUND',
      'CLIENT_FAILURE',
      'ACTIVATION_FAILED',
    ],
  };
  const t = input.timings;
  // Every step may be pushed PUSH_GENERATIONS times, each followed by a task and a BMC recovery; then activation.
  const perStepS = PUSH_GENERATIONS * (t.taskTimeoutS + t.bmcRecoveryS) + t.pushDelayS;
  const activationS = 2 * t.powerStateTimeoutS + t.bmcRecoveryS + t.acStabilizeS;
  const heartbeatTimeout = `${input.activity.heartbeatTimeoutS}s`;
  // A cancelled update ends once the running activity has stopped (it sees the cancel at a heartbeat), not at once:
  // until then the device stays busy, so no other job reaches it while the satellite still works on it.
  const cancellationType = ActivityCancellationType.WAIT_CANCELLATION_COMPLETED;
  const apply = proxyActivities<FirmwareActivities>({
    startToCloseTimeout: `${input.steps.length * perStepS + 600}s`,
    heartbeatTimeout,
    retry,
    cancellationType,
  });
  const activate = proxyActivities<FirmwareActivities>({
    startToCloseTimeout: `${activationS + input.activity.startToCloseTimeoutS + 600}s`,
    heartbeatTimeout,
    retry,
    cancellationType,
  });
  // A read is safe to repeat from the start, so it runs as a local activity: one marker event, no task round trip.
  const read = proxyLocalActivities<FirmwareActivities>({
    startToCloseTimeout: `${input.activity.startToCloseTimeoutS}s`,
    retry,
  });
  return {
    readFirmwareInventory: read.readFirmwareInventory,
    applyFirmware: apply.applyFirmware,
    activateFirmware: activate.activateFirmware,
  };
}

class StepFailed extends Error {
  constructor(
    readonly code: FirmwareResultCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * nvfwupd-style update of one device: expected-inventory check, version comparison (skip
 * what is compliant unless forced), then per manifest step in order (BMC tray before
 * compute tray): upload, task monitoring, UPDATE_DELAY before the next push to the same
 * BMC; then activation per node kind and verification of the installed versions. Every
 * component gets a result with an RMS error code; a failed update never reports success.
 *
 * History budget (workflows/README.md): the first inventory read is a local activity, every step is
 * inside one heartbeating applyFirmware activity, activation and the verifying read inside one
 * activateFirmware activity, and the memo is upserted at most once per workflow task: 21 events for
 * an update however many steps its manifest has.
 */
export async function deviceFirmwareUpdateV2(input: DeviceFirmwareUpdateInput): Promise<DeviceFirmwareResult> {
  const fw = firmwareActivities(input);
  const { target } = input;
  const memo = new CoalescedMemo((m) => upsertMemo({ [jobMemoKey]: m }));
  const startedWithMemo = workflowInfo().memo?.[jobMemoKey] !== undefined;
  let memoResult: DeviceFirmwareResult | undefined;
  const rec = new StageRecorder(
    ['check_inventory', 'fetch_artifacts', 'update', 'activate', 'verify'],
    [target.deviceId],
    (m) => memo.set({ ...m, ...(memoResult ? { result: { ...memoResult } } : {}) }),
  );
  const finish = (result: DeviceFirmwareResult): DeviceFirmwareResult => {
    memoResult = result;
    rec.emit({ progress: { stage: 'done', percent: 100, message: summary(result) }, result: { ...result } });
    return result;
  };

  let plans: StepPlan[] = [];
  let done: ComponentResult[] = [];
  try {
    rec.start('check_inventory');
    const before = (await fw.readFirmwareInventory({ target })).components;
    const missing = missingComponents(input.expectedInventory, before);
    if (missing.length) {
      rec.finish('check_inventory', 'failed', `missing ${missing.join(', ')}`);
      throw new StepFailed('PRECONDITION_FAILED', `expected inventory missing: ${missing.join(', ')}`);
    }
    const { run, compliant } = stepsToRun(input.steps, before, input.force);
    plans = run;
    done = compliant;
    rec.finish('check_inventory', 'completed', `${run.length} of ${input.steps.length} steps to run`);
    if (run.length === 0) {
      rec.skipRemaining('already compliant');
      const skipped = finish({
        deviceId: target.deviceId,
        status: 'skipped',
        components: compliant,
        inventory: before,
      });
      memo.flush();
      return skipped;
    }

    rec.start('update', `pushing ${run.map((p) => p.step.fileName).join(', ')}`);
    // A campaign's child started with a memo that already shows the update (firmware-campaign.ts childStartMemo):
    // this stage reaches the hub with the next upsert (activation, or the end), one event fewer per device.
    if (!startedWithMemo) memo.flush();
    const applied: ApplyFirmwareResult = await fw.applyFirmware({
      jobId: input.jobId,
      target,
      role: input.role,
      steps: run.map((p) => ({ index: p.index, step: p.step, components: p.components })),
      force: input.force,
      timings: input.timings,
      maximumAttempts: input.activity.maximumAttempts,
    });
    const failedStep = applied.steps.find((s) => s.outcome === 'failed');
    const failedAt = failedStep ? run.findIndex((p) => p.index === failedStep.index) : run.length;
    const failure = failedStep
      ? new StepFailed(failedStep.code ?? 'EXCEPTION', `${run[failedAt]!.step.name}: ${failedStep.message ?? ''}`)
      : undefined;
    // The activity's own clock times its stages; it returns them, so replay sees the same timeline.
    rec.record('fetch_artifacts', 'completed', applied.fetch);
    rec.record('update', failure ? 'failed' : 'completed', applied.update, failure?.message ?? pushSummary(applied));

    // Images already staged are activated even after a later step failed, so the device never carries a
    // pending image that a routine power cycle would activate unverified. Activation is an activity of its
    // own so the hub sees the stage while the host is down; it ends with the verification's inventory read.
    let after: ComponentVersion[];
    if (applied.steps.some((s) => s.outcome === 'staged')) {
      rec.start('activate');
      memo.flush();
      const activated = await fw.activateFirmware({
        target,
        role: input.role,
        timings: input.timings,
        maximumAttempts: input.activity.maximumAttempts,
      });
      rec.record('activate', 'completed', activated.activate);
      rec.start('verify');
      after = activated.inventory;
    } else {
      rec.record('activate', 'skipped', undefined, 'nothing staged');
      rec.start('verify');
      after = (await fw.readFirmwareInventory({ target })).components;
    }
    const verified = verifyComponents(run.slice(0, failedAt), after);
    const failedResults: ComponentResult[] = run.slice(failedAt).flatMap((p, k) =>
      p.components.map((c) => ({
        ...c,
        installed: versionOf(after, c.id) ?? null,
        status: 'failed' as const,
        code: failure!.code,
        message: k === 0 ? failure!.message : `not reached: ${failure!.message}`,
      })),
    );
    const components = [...done, ...verified, ...failedResults];
    const ok = components.every((c) => c.status !== 'failed');
    rec.finish('verify', ok ? 'completed' : 'failed');
    const result = finish({
      deviceId: target.deviceId,
      status: ok ? 'updated' : 'failed',
      components,
      inventory: after,
    });
    if (!ok) throw ApplicationFailure.nonRetryable(summary(result), 'FIRMWARE_UPDATE_FAILED', result);
    memo.flush();
    return result;
  } catch (err) {
    if (err instanceof ApplicationFailure && err.type === 'FIRMWARE_UPDATE_FAILED') {
      rec.emit({ error: { code: 'FIRMWARE_UPDATE_FAILED', message: err.message, details: memoResult } });
      memo.flush();
      throw err;
    }
    const cancellation = jobCancellation(err);
    const cancelled = cancellation !== undefined;
    const error =
      err instanceof StepFailed ? { code: err.code, message: err.message } : jobErrorFrom(cancellation ?? err);
    const code = (
      cancelled ? 'CANCELLED' : err instanceof StepFailed ? err.code : codeForActivityError(err)
    ) as FirmwareResultCode;
    const components: ComponentResult[] = [
      ...done,
      ...plans.flatMap((p) =>
        p.components.map((c) => ({
          ...c,
          installed: null,
          status: cancelled ? ('cancelled' as const) : ('failed' as const),
          code,
          message: error.message,
        })),
      ),
    ];
    memoResult = { deviceId: target.deviceId, status: 'failed', components, inventory: [] };
    const current = rec.timeline.currentStage;
    if (current) rec.finish(current, cancelled ? 'cancelled' : 'failed', error.message);
    rec.skipRemaining(cancelled ? 'the job was cancelled' : 'not reached');
    rec.emit({ error: { ...error, details: memoResult } });
    memo.flush();
    if (cancellation) throw cancellation;
    throw ApplicationFailure.nonRetryable(`${target.deviceId}: ${error.message}`, String(error.code), memoResult);
  }
}

function pushSummary(applied: ApplyFirmwareResult): string {
  const pushes = applied.steps.reduce((n, s) => n + s.pushes, 0);
  const self = applied.steps.filter((s) => s.outcome === 'self_activated').length;
  return `${pushes} push${pushes === 1 ? '' : 'es'}${self ? `, ${self} activated by the device itself` : ''}`;
}

function versionOf(inv: ComponentVersion[], id: string): string | undefined {
  return inv.find((c) => c.id === id)?.version;
}

function codeForActivityError(err: unknown): FirmwareResultCode {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return firmwareCodeFor(cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined);
}

function summary(r: DeviceFirmwareResult): string {
  const count = (s: ComponentResult['status']) => r.components.filter((c) => c.status === s).length;
  return `${r.status}: ${count('updated')} updated, ${count('skipped')} compliant, ${count('failed')} failed`;
}
