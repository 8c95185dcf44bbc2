import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  condition,
  defineSignal,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  sleep,
  upsertMemo,
} from '@temporalio/workflow';
import type {
  AwaitedDecision,
  BmcTarget,
  BurnInActivities,
  EnrolmentDecision,
  FleetLifecycleState,
  HealthFault,
  HealthReading,
  JobMemo,
  LifecycleMemo,
  PlaybookStep,
  RemediationActivities,
  RemediationInput,
  RemediationResult,
  StepOutcome,
} from '@fleet/domain';
import {
  burnInPassed,
  decisionSignalName,
  healthCleared,
  jobMemoKey,
  lifecycleMemoKey,
} from '@fleet/domain/workflow-safe';
import { deviceActivities, jobActivityOptions } from './activities.js';
import { childSearchAttributes } from './child-search-attributes.js';
import { jobErrorFrom } from './device-power.js';
import { deviceFirmwareUpdateV2 } from './firmware-update.js';
import { KeyedMemo } from './timeline.js';

export const remediationDecisionSignal = defineSignal<[EnrolmentDecision]>(decisionSignalName);

/**
 * Quarantine, remediation and release of one device (docs/day2.md). The lifecycle moves travel in the memo (the
 * workflow agent applies them as the lifecycle's writer), like an enrolment's:
 * - quarantine: the device is held (`quarantined`), nothing else;
 * - remediate: held, then (after an operator's approval when the blast radius is exceeded) `remediating` and the
 *   playbook's steps in order, each verified by fresh health readings; the first that clears the fault returns the
 *   device where it was, once the playbook's `burn_in` (when it has one) passed; when none does, or the burn-in
 *   fails, it is held again and the result asks for an RMA. A step that cannot act on this device (no shelf feeds
 *   it, no manifest) is skipped with its reason and no health check;
 * - release: an operator lets a held device go: `remediating`, a health check, and back where it was (held again,
 *   and the job failed, naming the faults, if the check does not pass).
 */
export async function remediation(input: RemediationInput): Promise<RemediationResult> {
  const id = input.target.deviceId;
  const memo = new KeyedMemo(upsertMemo);
  const lifecycle: LifecycleMemo = { rev: 0, devices: { [id]: { moves: [], conditions: {} } } };
  let state: FleetLifecycleState = input.alreadyQuarantined ? 'quarantined' : input.returnTo;
  const move = (to: FleetLifecycleState, reason: string, message: string) => {
    lifecycle.devices[id]!.moves.push({ to, reason, message });
    lifecycle.rev++;
    state = to;
    memo.set(lifecycleMemoKey, lifecycle);
  };
  const steps: StepOutcome[] = [];
  /** The faults the last health check saw, for a step that skips without one. */
  let lastFaults: HealthFault[] = input.fault ? [input.fault] : [];
  const result = (extra: Partial<RemediationResult> = {}): RemediationResult => ({
    deviceId: id,
    mode: input.mode,
    state,
    steps,
    ...extra,
  });
  const publish = (m: JobMemo) => memo.set(jobMemoKey, m);
  const { resetBmc, setDevicePower, awaitDevices } = deviceActivities(input.activity);
  const { awaitHealthy } = proxyActivities<RemediationActivities>({
    startToCloseTimeout: `${input.verifyTimeoutS + 120}s`,
    heartbeatTimeout: `${input.activity.heartbeatTimeoutS}s`,
    retry: { maximumAttempts: input.activity.maximumAttempts },
  });

  let decision: EnrolmentDecision | undefined;
  let waiting: AwaitedDecision | undefined;
  setHandler(remediationDecisionSignal, (d) => {
    if (waiting && d.stage === waiting.stage && (d.since === undefined || d.since === waiting.since)) decision = d;
  });

  try {
    if (input.mode === 'rma_ship' || input.mode === 'rma_return') {
      const [to, why] =
        input.mode === 'rma_ship' ? (['rma', 'ShippedToVendor'] as const) : (['discovered', 'BackFromVendor'] as const);
      move(to, why, input.rmaCaseId ? `RMA ${input.rmaCaseId}: ${input.reason}` : input.reason);
      publish({ progress: { stage: 'done', percent: 100 }, result: { ...result() } });
      memo.flush();
      return result();
    }
    if (!input.alreadyQuarantined && input.mode !== 'release')
      move('quarantined', input.rule ? 'QuarantinedByRule' : 'Quarantined', input.reason);
    if (input.mode === 'quarantine') {
      publish({ progress: { stage: 'done', percent: 100, message: `held: ${input.reason}` }, result: { ...result() } });
      memo.flush();
      return result();
    }

    if (input.awaitApproval) {
      waiting = {
        stage: 'blast_radius',
        devices: { [id]: input.awaitApproval },
        since: new Date().toISOString(),
        actions: ['approve', 'reject'],
      };
      publish({ progress: { stage: 'blast_radius', message: input.awaitApproval, decision: waiting } });
      memo.flush();
      await condition(() => decision !== undefined);
      waiting = undefined;
      if (decision!.action !== 'approve') {
        const message = `remediation not approved by ${decision!.by}: ${decision!.reason}; the device stays held`;
        publish({ progress: { stage: 'done', percent: 100, message }, result: { ...result() } });
        memo.flush();
        return result();
      }
    }

    move('remediating', input.mode === 'release' ? 'ReleaseRequested' : 'RemediationStarted', input.reason);
    if (input.mode === 'release') {
      publish({ progress: { stage: 'health_check', message: `checking ${input.deviceName} before release` } });
      memo.flush();
      const reading = await awaitHealthy({
        target: input.target,
        timeoutS: input.verifyTimeoutS,
        pollS: input.verifyPollS,
      });
      if (!healthCleared(reading)) {
        const faults = describeFaults(reading);
        move('quarantined', 'ReleaseRefused', `the health check failed: ${faults}`);
        const error = { code: 'FAILED_PRECONDITION', message: `${input.deviceName} is not healthy: ${faults}` };
        publish({ progress: { stage: 'health_check', message: error.message }, result: { ...result() }, error });
        memo.flush();
        throw ApplicationFailure.nonRetryable(error.message, error.code);
      }
      move(input.returnTo, 'Released', input.reason);
      publish({ progress: { stage: 'done', percent: 100 }, result: { ...result() } });
      memo.flush();
      return result();
    }

    const fault = input.fault!;
    const plan = input.playbook?.steps ?? [];
    // A burn_in in the playbook confirms whichever earlier step cleared the fault before the device goes back.
    const confirmAt = plan.indexOf('burn_in');
    let burnInFailed: string | undefined;
    for (const [i, step] of plan.entries()) {
      if (step === 'burn_in') {
        steps.push({
          step,
          fixed: false,
          faults: lastFaults,
          skipped: true,
          message: `burn_in not run: ${fault.class} (${fault.component}) is still there, nothing to confirm`,
        });
        continue;
      }
      publish({
        progress: { stage: step, message: `${step} on ${input.deviceName} for ${fault.class} (${fault.component})` },
      });
      memo.flush();
      let message: string | undefined;
      try {
        const skipped = await runStep(step, i);
        if (skipped) {
          steps.push({ step, fixed: false, faults: lastFaults, skipped: true, message: skipped });
          continue;
        }
      } catch (err) {
        if (isCancellation(err)) throw err;
        const refusal = refusalOf(err);
        if (refusal) {
          steps.push({ step, fixed: false, faults: lastFaults, skipped: true, message: refusal });
          continue;
        }
        message = `${step} failed: ${jobErrorFrom(err).message}`;
      }
      const reading = await awaitHealthy({
        target: input.target,
        faultClass: fault.class,
        timeoutS: input.verifyTimeoutS,
        pollS: input.verifyPollS,
      });
      const fixed = healthCleared(reading, fault.class);
      lastFaults = reading.faults;
      steps.push({ step, fixed, faults: reading.faults, ...(message ? { message } : {}) });
      if (!fixed) continue;
      if (confirmAt > i) {
        burnInFailed = await confirmByBurnIn(confirmAt);
        if (burnInFailed) break;
      }
      move(input.returnTo, 'Remediated', `${step} cleared ${fault.class} (${fault.component})`);
      publish({ progress: { stage: 'done', percent: 100 }, result: { ...result({ fixedBy: step }) } });
      memo.flush();
      return result({ fixedBy: step });
    }
    const escalated = { part: fault.component, faultClass: fault.class, message: fault.message };
    const tried = steps.map((s) => s.step).join(', ') || 'no playbook step';
    const why = burnInFailed
      ? `${fault.class} (${fault.component}) cleared but the burn-in failed (${burnInFailed})`
      : `${tried} did not clear ${fault.class} (${fault.component})`;
    move('quarantined', 'RemediationExhausted', `${why}: RMA`);
    const error = {
      code: 'REMEDIATION_EXHAUSTED',
      message: burnInFailed
        ? `${input.deviceName}: ${why}; an RMA case is open`
        : `${input.deviceName}: ${tried} did not clear ${fault.class} on ${fault.component}; an RMA case is open`,
    };
    publish({ progress: { stage: 'escalated', message: error.message }, result: { ...result({ escalated }) }, error });
    memo.flush();
    throw ApplicationFailure.nonRetryable(error.message, error.code);
  } catch (err) {
    if (!isCancellation(err)) {
      if (err instanceof ApplicationFailure && err.nonRetryable) throw err;
      // Anything unexpected leaves the device held, never half-way.
      if (state === 'remediating') move('quarantined', 'RemediationFailed', jobErrorFrom(err).message);
      publish({ progress: { stage: 'failed', message: jobErrorFrom(err).message }, error: jobErrorFrom(err) });
      memo.flush();
      throw err;
    }
    // Cancelled: a device being worked on is held again; the memo is written even though the workflow was cancelled.
    await CancellationScope.nonCancellable(async () => {
      if (state === 'remediating') move('quarantined', 'RemediationCancelled', 'the remediation job was cancelled');
      publish({ progress: { stage: 'cancelled' }, result: { ...result() }, error: jobErrorFrom(err) });
      memo.flush();
    });
    throw err;
  }

  /** Acts on the device; answers why it did nothing when the step does not apply to it. */
  async function runStep(step: PlaybookStep, index: number): Promise<string | undefined> {
    switch (step) {
      case 'power_cycle':
        await setDevicePower({ target: input.target, action: 'power-cycle', settleTimeoutS: input.verifyTimeoutS });
        return undefined;
      case 'ac_cycle':
        await acCycle();
        return undefined;
      case 'firmware_reflash':
        return reflash(index);
      case 'burn_in':
        throw new Error('burn_in is run as the confirmation of a cleared fault, not as a fix');
      default:
        await resetBmc({
          target: input.target,
          manager: step === 'hmc_reset' ? 'hmc' : 'bmc',
          waitUntilBackS: input.verifyTimeoutS,
        });
        return undefined;
    }
  }

  /**
   * AC off and on through the shelves that feed the tray, refused (before anything is cut) when a shelf does not
   * answer or another device on the same feed is neither held nor Off. The shelves are switched back on whatever
   * happens once they were off, cancellation included.
   */
  async function acCycle(): Promise<void> {
    const plan = input.acCycle;
    if (!plan) throw refuse('ac_cycle', 'the job has no power-shelf plan (it was made before the step existed)');
    if (plan.refused) throw refuse('ac_cycle', plan.refused);
    const poll = plan.pollIntervalS;
    const shelves = await awaitDevices({
      targets: plan.shelves,
      condition: 'reachable',
      pollIntervalS: poll,
      maxWaitS: 0,
    });
    if (shelves.notMet.length)
      throw refuse('ac_cycle', `power shelf ${shelves.notMet.map((n) => n.deviceId).join(', ')} does not answer`);
    if (plan.others.length) {
      const off = await awaitDevices({
        targets: plan.others.map((o) => o.target),
        condition: 'off',
        pollIntervalS: poll,
        maxWaitS: 0,
      });
      if (off.notMet.length) {
        const live = new Set(off.notMet.map((n) => n.deviceId));
        const names = plan.others.filter((o) => live.has(o.target.deviceId)).map((o) => o.name);
        throw refuse(
          'ac_cycle',
          `its shelves also feed ${names.length} device(s) that are neither held nor off (${names.join(', ')}): ` +
            'cutting AC would take them down too; hold them or power them off first',
        );
      }
    }
    const shelfPower = (action: 'off' | 'on') =>
      Promise.all(
        plan.shelves.map((target: BmcTarget) =>
          setDevicePower({ target, action, settleTimeoutS: input.verifyTimeoutS }),
        ),
      );
    try {
      await shelfPower('off');
      const dark = await awaitDevices({
        targets: [input.target],
        condition: 'unreachable',
        pollIntervalS: poll,
        maxWaitS: input.verifyTimeoutS,
      });
      if (dark.notMet.length)
        throw ApplicationFailure.nonRetryable(
          `${input.deviceName} still answers with its shelves off: something else feeds it`,
          'FAILED_PRECONDITION',
        );
      if (plan.offFloorS > 0) await sleep(plan.offFloorS * 1000);
    } finally {
      await CancellationScope.nonCancellable(() => shelfPower('on'));
    }
    const back = await awaitDevices({
      targets: [input.target],
      condition: 'reachable',
      pollIntervalS: poll,
      maxWaitS: input.verifyTimeoutS,
    });
    if (back.notMet.length)
      throw ApplicationFailure.nonRetryable(
        `${input.deviceName}'s BMC did not answer within ${input.verifyTimeoutS}s of AC returning`,
        'UNAVAILABLE',
      );
    // A tray gets AC back with its host off; it was serving before the fault.
    await setDevicePower({ target: input.target, action: 'on', settleTimeoutS: input.verifyTimeoutS });
  }

  /** The device firmware update (forced: the versions may match while an image is corrupt) as a child. */
  async function reflash(index: number): Promise<string | undefined> {
    const fw = input.firmware;
    if (!fw) return `firmware_reflash skipped: no firmware manifest for ${input.target.nodeType}`;
    const childId = `${input.jobId}-reflash-${index}`;
    try {
      await executeChild(deviceFirmwareUpdateV2, {
        workflowId: childId,
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        searchAttributes: childSearchAttributes('device.firmware_update', input.siteId ?? '', id),
        args: [
          {
            jobId: childId,
            target: input.target,
            role: fw.role,
            steps: fw.steps,
            expectedInventory: fw.expectedInventory,
            force: true,
            timings: fw.timings,
            activity: input.activity,
          },
        ],
      });
    } catch (err) {
      throw err instanceof ChildWorkflowFailure && err.cause ? err.cause : err;
    }
    return undefined;
  }

  /** Runs the playbook's burn-in on the tray; answers why it failed, or undefined when it passed. */
  async function confirmByBurnIn(index: number): Promise<string | undefined> {
    const b = input.burnIn;
    const record = (fixed: boolean, message: string) =>
      steps.push({ step: 'burn_in', fixed, faults: fixed ? [] : lastFaults, message });
    if (!b) {
      // No tray tests for this device (a switch or a shelf): nothing can confirm more than the health check did.
      steps.push({
        step: 'burn_in',
        fixed: true,
        faults: [],
        skipped: true,
        message: `burn_in skipped: ${input.target.nodeType} runs no tray tests`,
      });
      return undefined;
    }
    publish({ progress: { stage: 'burn_in', message: `burn-in of ${input.deviceName}: ${b.tests.join(', ')}` } });
    memo.flush();
    const burnIn = proxyActivities<BurnInActivities>({
      ...jobActivityOptions(input.activity),
      heartbeatTimeout: `${b.heartbeatTimeoutS}s`,
      startToCloseTimeout: `${b.startToCloseS}s`,
    });
    try {
      await setDevicePower({ target: input.target, action: 'on', settleTimeoutS: b.settleTimeoutS });
      const r = await burnIn.runBurnIn({
        jobId: input.jobId,
        attempt: index + 1,
        trays: [{ deviceId: id, name: b.name }],
        tests: b.tests,
      });
      if (burnInPassed(r.verdicts)) {
        record(true, `${r.verdicts.map((v) => v.test).join(', ')} passed`);
        return undefined;
      }
      const why =
        r.verdicts
          .filter((v) => v.verdict !== 'pass' || v.reason !== null)
          .map((v) => `${v.test}: ${v.reason ?? v.verdict}: ${v.message}`)
          .join('; ') || 'no verdict';
      record(false, `burn-in failed: ${why}`);
      return why;
    } catch (err) {
      if (isCancellation(err)) throw err;
      // Fail closed: a burn-in that could not run proves nothing.
      const why = `burn-in could not run: ${jobErrorFrom(err).message}`;
      record(false, why);
      return why;
    }
  }
}

/** A step that does not act on this device, and why: typed (FAILED_PRECONDITION), never retried, named. */
function refuse(step: PlaybookStep, why: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'FAILED_PRECONDITION',
    message: `${step} refused: ${why}`,
    nonRetryable: true,
    details: [{ refusedStep: step }],
  });
}

function refusalOf(err: unknown): string | undefined {
  if (!(err instanceof ApplicationFailure) || err.type !== 'FAILED_PRECONDITION') return undefined;
  const d = err.details?.[0] as { refusedStep?: string } | undefined;
  return d?.refusedStep ? err.message : undefined;
}

function describeFaults(reading: HealthReading): string {
  if (!reading.reachable) return 'the BMC does not answer';
  return reading.faults.map((f) => `${f.class} ${f.component}: ${f.message}`).join('; ') || 'no fault';
}
