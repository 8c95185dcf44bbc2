/**
 * The device firmware update as it ran before issue 15's history budget (88 events: an activity per push, task
 * wait, power step and reset). Kept, unchanged, under its original workflow type so updates started by an earlier
 * satellite finish on this one: Temporal replays a running workflow's history against the code, and the new
 * `deviceFirmwareUpdateV2` makes different commands. Nothing starts it any more (the job-kind registry and the
 * campaign start V2). Delete it once no site runs one:
 * `temporal workflow count --query 'WorkflowType="deviceFirmwareUpdate" AND ExecutionStatus="Running"'` is 0.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  proxyActivities,
  sleep,
  upsertMemo,
} from '@temporalio/workflow';
import type {
  BmcTarget,
  ComponentResult,
  ComponentVersion,
  DeviceFirmwareResult,
  DeviceFirmwareUpdateInput,
  FirmwareActivities,
  FirmwareResultCode,
  FirmwareTimings,
  JobMemo,
} from '@fleet/domain';
import { jobMemoKey } from '@fleet/domain/workflow-safe';
import { deviceActivities } from './activities.js';
import { jobErrorFrom } from './device-power.js';
import { missingComponents, stepsToRun, verifyComponents, type StepPlan } from './firmware-plan.js';
import { StageRecorder } from './timeline.js';

/** A push whose task the BMC lost (it restarted mid-flash) is made again, this many times in all. */
const MAX_PUSH_GENERATIONS = 3;

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
    ],
  };
  const heartbeatTimeout = `${input.activity.heartbeatTimeoutS}s`;
  const short = proxyActivities<FirmwareActivities>({
    startToCloseTimeout: `${input.activity.startToCloseTimeoutS}s`,
    retry,
  });
  const long = proxyActivities<FirmwareActivities>({ startToCloseTimeout: '2h', heartbeatTimeout, retry });
  const task = proxyActivities<FirmwareActivities>({
    startToCloseTimeout: `${input.timings.taskTimeoutS + 120}s`,
    heartbeatTimeout,
    retry,
  });
  return {
    readFirmwareInventory: short.readFirmwareInventory,
    fetchArtifact: long.fetchArtifact,
    pushFirmware: long.pushFirmware,
    awaitFirmwareTask: task.awaitFirmwareTask,
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
 */
export async function deviceFirmwareUpdate(input: DeviceFirmwareUpdateInput): Promise<DeviceFirmwareResult> {
  const fw = firmwareActivities(input);
  const dev = deviceActivities(input.activity);
  const { target } = input;
  const rec = new StageRecorder(
    ['check_inventory', 'fetch_artifacts', 'update', 'activate', 'verify'],
    [target.deviceId],
    (m) => publish(m),
  );
  let memoResult: DeviceFirmwareResult | undefined;
  const publish = (m: JobMemo) =>
    upsertMemo({ [jobMemoKey]: { ...m, ...(memoResult ? { result: { ...memoResult } } : {}) } });
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
      return finish({ deviceId: target.deviceId, status: 'skipped', components: compliant, inventory: before });
    }

    rec.start('fetch_artifacts');
    await Promise.all(run.map((p) => fw.fetchArtifact({ digest: p.step.packageDigest, size: p.step.packageSize })));
    rec.finish('fetch_artifacts', 'completed');

    rec.start('update');
    const staged: StepPlan[] = [];
    let failure: StepFailed | undefined;
    let failedAt = run.length;
    for (const [i, plan] of run.entries()) {
      if (i > 0) await sleep(input.timings.pushDelayS * 1000); // UPDATE_DELAY: BMC memory needs the pause
      rec.emit({ progress: { stage: `update:${plan.step.name}`, message: `pushing ${plan.step.fileName}` } });
      try {
        const selfActivated = await pushAndMonitor(input, fw, dev, plan);
        if (!selfActivated) staged.push(plan);
      } catch (err) {
        if (!(err instanceof StepFailed)) throw err;
        failure = err;
        failedAt = i;
        break;
      }
    }
    rec.finish('update', failure ? 'failed' : 'completed', failure?.message);

    // Images already staged are activated even after a later step failed, so the device
    // never carries a pending image that a routine power cycle would activate unverified.
    if (staged.length) {
      rec.start('activate');
      await activate(input, dev);
      rec.finish('activate', 'completed');
    } else rec.finish('activate', 'skipped', 'nothing staged');

    rec.start('verify');
    const after = (await fw.readFirmwareInventory({ target })).components;
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
    return result;
  } catch (err) {
    if (err instanceof ApplicationFailure && err.type === 'FIRMWARE_UPDATE_FAILED') {
      rec.emit({ error: { code: 'FIRMWARE_UPDATE_FAILED', message: err.message, details: memoResult } });
      throw err;
    }
    const cancelled = isCancellation(err);
    const error = err instanceof StepFailed ? { code: err.code, message: err.message } : jobErrorFrom(err);
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
    if (cancelled) throw err;
    throw ApplicationFailure.nonRetryable(`${target.deviceId}: ${error.message}`, String(error.code), memoResult);
  }
}

/**
 * Push one step and follow its task. A task the BMC lost in a restart is pushed again
 * (new file name, so the scan never adopts the lost one), unless the device already runs
 * the target versions (shelves activate themselves). Returns true in that last case.
 */
async function pushAndMonitor(
  input: DeviceFirmwareUpdateInput,
  fw: ReturnType<typeof firmwareActivities>,
  dev: ReturnType<typeof deviceActivities>,
  plan: StepPlan,
): Promise<boolean> {
  const { target, timings } = input;
  for (let generation = 0; generation < MAX_PUSH_GENERATIONS; generation++) {
    const pushed = await pushStep(fw, {
      jobId: input.jobId,
      target,
      step: plan.step,
      stepIndex: plan.index,
      generation,
      force: input.force,
    });
    const outcome = await fw.awaitFirmwareTask({
      target,
      taskUri: pushed.taskUri,
      pollIntervalS: timings.taskPollS,
      timeoutS: timings.taskTimeoutS,
    });
    if (outcome.state === 'completed') return false;
    if (outcome.state === 'failed') throw new StepFailed(outcome.code, `${plan.step.name}: ${outcome.message}`);
    // Lost: wait for the BMC, then look at what it runs before deciding to push again.
    await dev.awaitDevices({
      targets: [target],
      condition: 'reachable',
      pollIntervalS: timings.taskPollS,
      maxWaitS: timings.bmcRecoveryS,
    });
    const now = (await fw.readFirmwareInventory({ target })).components;
    if (plan.components.every((c) => versionOf(now, c.id) === c.to)) return true;
  }
  throw new StepFailed('NO_TASK_INFO', `${plan.step.name}: the BMC lost the update task ${MAX_PUSH_GENERATIONS} times`);
}

async function pushStep(
  fw: ReturnType<typeof firmwareActivities>,
  args: Parameters<FirmwareActivities['pushFirmware']>[0],
) {
  try {
    return await fw.pushFirmware(args);
  } catch (err) {
    if (isCancellation(err)) throw err;
    throw new StepFailed(codeForActivityError(err), `${args.step.name}: ${jobErrorFrom(err).message}`);
  }
}

/**
 * Activation per node kind (docs/reference/rms-behaviours.md#firmware-activation). Compute: host off
 * (≤ powerStateTimeoutS), AC cycle of the tray BMC, stabilisation, host back on if it was on. Shelves and switch BMCs:
 * a controller reset, done once an outage was seen and the BMC answers again.
 * The simulator and OpenBMC take a BMC Manager.Reset as the AC-cycle stand-in.
 */
async function activate(input: DeviceFirmwareUpdateInput, dev: ReturnType<typeof deviceActivities>): Promise<void> {
  const { target, timings } = input;
  if (input.role !== 'compute') {
    await dev.resetBmc({ target, manager: 'bmc', waitUntilBackS: timings.bmcRecoveryS });
    return;
  }
  const before = await dev.readDevicePower({ target });
  const wasOn = before.reachable && before.powerState !== 'Off';
  if (wasOn) await powerOrFail(dev, target, 'force-off', timings);
  await dev.resetBmc({ target, manager: 'bmc', waitUntilBackS: timings.bmcRecoveryS });
  await sleep(timings.acStabilizeS * 1000);
  if (wasOn) await powerOrFail(dev, target, 'on', timings);
}

async function powerOrFail(
  dev: ReturnType<typeof deviceActivities>,
  target: BmcTarget,
  action: 'on' | 'force-off',
  timings: FirmwareTimings,
): Promise<void> {
  try {
    await dev.setDevicePower({ target, action, settleTimeoutS: timings.powerStateTimeoutS });
  } catch (err) {
    if (isCancellation(err)) throw err;
    throw new StepFailed('ACTIVATION_FAILED', `activation ${action}: ${jobErrorFrom(err).message}`);
  }
}

function versionOf(inv: ComponentVersion[], id: string): string | undefined {
  return inv.find((c) => c.id === id)?.version;
}

function codeForActivityError(err: unknown): FirmwareResultCode {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  const type = cause instanceof ApplicationFailure ? cause.type : undefined;
  switch (type) {
    case 'TARGET_NOT_FOUND':
    case 'CLIENT_FAILURE':
    case 'UPDATE_IN_PROGRESS':
      return type;
    case 'UNAVAILABLE':
    case 'INTERNAL':
      return 'SERVER_ERROR';
    case 'DEADLINE_EXCEEDED':
      return 'MONITORING_TIMEOUT';
    case 'UNAUTHENTICATED':
    case 'INVALID_ARGUMENT':
      return 'CLIENT_FAILURE';
    default:
      return 'EXCEPTION';
  }
}

function summary(r: DeviceFirmwareResult): string {
  const count = (s: ComponentResult['status']) => r.components.filter((c) => c.status === s).length;
  return `${r.status}: ${count('updated')} updated, ${count('skipped')} compliant, ${count('failed')} failed`;
}
