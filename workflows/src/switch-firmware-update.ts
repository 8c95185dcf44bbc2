import { ApplicationFailure, upsertMemo } from '@temporalio/workflow';
import { jobCancellation } from './cancellation.js';
import type {
  ComponentResult,
  ComponentVersion,
  DeviceFirmwareResult,
  JobMemo,
  SwitchFirmwareStep,
  SwitchFirmwareUpdateInput,
  SwitchInstallOutcome,
} from '@fleet/domain';
import { jobMemoKey } from '@fleet/domain/workflow-safe';
import { jobErrorFrom } from './device-power.js';
import { stepsToRun, verifyComponents, type StepPlan } from './firmware-plan.js';
import { switchActivities } from './switch-activities.js';
import { codeForFailure, inSwitchOrder } from './switch-firmware-plan.js';
import { stagedJobFailure } from './switch-stages.js';
import { StageRecorder } from './timeline.js';

/**
 * Switch-tray platform firmware over NVOS (nvfwupd's switch flow, test-peers item 4;
 * docs/reference/rms-behaviours.md#switch-platform-firmware): components already running their target are skipped
 * unless forced; the rest, in the order BMC, ERoT, FPGA, CPLD, BIOS, are fetched into the site cache, copied to the
 * switch over SFTP and installed with the NVUE action; then one power cycle activates them and
 * the running versions are verified. Every component gets a result with an RMS code.
 */
export async function switchFirmwareUpdate(input: SwitchFirmwareUpdateInput): Promise<DeviceFirmwareResult> {
  const { target, timings, force } = input;
  const short = switchActivities(input.activity);
  // Transfers are bounded by the satellite's SFTP stall and upload timeouts (3600 s by default).
  const transfer = switchActivities(input.activity, 2 * 3600);
  const install = switchActivities(input.activity, timings.actionTimeoutS + 120);
  const activation = switchActivities(input.activity, timings.recoveryProbeS * timings.recoveryProbes + 120);
  const rec = new StageRecorder(
    ['check_inventory', 'fetch_artifacts', 'update', 'activate', 'verify'],
    [target.deviceId],
    (m) => publish(m),
  );
  let memoResult: DeviceFirmwareResult | undefined;
  const publish = (m: JobMemo) =>
    upsertMemo({ [jobMemoKey]: { ...m, ...(memoResult ? { result: { ...memoResult } } : {}) } });
  const finish = (result: DeviceFirmwareResult) => {
    memoResult = result;
    rec.emit({ progress: { stage: 'done', percent: 100, message: summary(result) } });
    return result;
  };

  /** Stage and install one component; a failure that retries did not mend becomes its result. */
  const installOne = async (step: SwitchFirmwareStep): Promise<SwitchInstallOutcome> => {
    try {
      await transfer.stageSwitchFirmware({ target, step });
      return await install.installSwitchFirmware({
        target,
        step,
        force,
        pollIntervalS: timings.actionPollS,
        timeoutS: timings.actionTimeoutS,
      });
    } catch (err) {
      const cancellation = jobCancellation(err);
      if (cancellation) throw cancellation;
      return { state: 'failed', code: codeForFailure(err), message: `${step.name}: ${jobErrorFrom(err).message}` };
    }
  };

  try {
    rec.start('check_inventory');
    const steps = inSwitchOrder(input.steps);
    const before = await short.readSwitchFirmware({ target });
    const { run, compliant } = stepsToRun(steps, before.components, force);
    rec.finish('check_inventory', 'completed', `${run.length} of ${steps.length} components to install`);
    if (run.length === 0) {
      rec.skipRemaining('already compliant');
      return finish({
        deviceId: target.deviceId,
        status: 'skipped',
        components: compliant,
        inventory: before.components,
      });
    }

    rec.start('fetch_artifacts');
    await Promise.all(
      run.map((p) => transfer.fetchArtifact({ digest: p.step.packageDigest, size: p.step.packageSize })),
    );
    rec.finish('fetch_artifacts', 'completed');

    rec.start('update');
    const installed: StepPlan[] = [];
    let failure: Extract<SwitchInstallOutcome, { state: 'failed' }> | undefined;
    for (const plan of run) {
      const step = steps[plan.index]!;
      rec.emit({ progress: { stage: `update:${step.name}`, message: `installing ${step.fileName}` } });
      const outcome = await installOne(step);
      if (outcome.state === 'failed') {
        failure = outcome;
        break;
      }
      installed.push(plan);
    }
    rec.finish('update', failure ? 'failed' : 'completed', failure?.message);

    // What was installed before a failure is activated too: a routine power cycle must never activate firmware nobody
    // verifies.
    let activationError: string | undefined;
    if (installed.length > 0) {
      rec.start('activate', 'power cycle');
      try {
        await activation.powerCycleSwitch({
          target,
          probeIntervalS: timings.recoveryProbeS,
          probes: timings.recoveryProbes,
        });
        rec.finish('activate', 'completed');
      } catch (err) {
        const cancellation = jobCancellation(err);
        if (cancellation) throw cancellation;
        activationError = jobErrorFrom(err).message;
        rec.finish('activate', 'failed', activationError);
      }
    } else rec.finish('activate', 'skipped', 'nothing installed');

    rec.start('verify');
    const after: ComponentVersion[] = activationError ? [] : (await short.readSwitchFirmware({ target })).components;
    const notActivated = (p: StepPlan) =>
      p.components.map((c): ComponentResult => ({
        ...c,
        installed: null,
        status: 'failed',
        code: 'ACTIVATION_FAILED',
        message: `activation: ${activationError}`,
      }));
    const notInstalled = run.slice(installed.length).flatMap((p, k) =>
      p.components.map((c): ComponentResult => ({
        ...c,
        installed: null,
        status: 'failed',
        code: failure!.code,
        message: k === 0 ? failure!.message : `not reached: ${failure!.message}`,
      })),
    );
    const components = [
      ...compliant,
      ...(activationError ? installed.flatMap(notActivated) : verifyComponents(installed, after)),
      ...notInstalled,
    ];
    const ok = components.every((c) => c.status !== 'failed');
    rec.finish('verify', ok ? 'completed' : 'failed');
    const result = finish({
      deviceId: target.deviceId,
      status: ok ? 'updated' : 'failed',
      components,
      inventory: after,
    });
    if (!ok) {
      rec.emit({ error: { code: 'FIRMWARE_UPDATE_FAILED', message: summary(result), details: result } });
      throw ApplicationFailure.nonRetryable(`${target.deviceId}: ${summary(result)}`, 'FIRMWARE_UPDATE_FAILED', result);
    }
    return result;
  } catch (err) {
    if (err instanceof ApplicationFailure && err.type === 'FIRMWARE_UPDATE_FAILED') throw err;
    // Ended before every component had a result: the timeline and the error say where.
    throw stagedJobFailure(rec, err);
  }
}

function summary(r: DeviceFirmwareResult): string {
  const count = (s: ComponentResult['status']) => r.components.filter((c) => c.status === s).length;
  return `${r.status}: ${count('updated')} updated, ${count('skipped')} compliant, ${count('failed')} failed`;
}
