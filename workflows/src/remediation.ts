import {
  ApplicationFailure,
  CancellationScope,
  condition,
  defineSignal,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertMemo,
} from '@temporalio/workflow';
import type {
  AwaitedDecision,
  EnrolmentDecision,
  FleetLifecycleState,
  HealthReading,
  JobMemo,
  LifecycleMemo,
  PlaybookStep,
  RemediationActivities,
  RemediationInput,
  RemediationResult,
  StepOutcome,
} from '@fleet/domain';
import { decisionSignalName, healthCleared, jobMemoKey, lifecycleMemoKey } from '@fleet/domain/workflow-safe';
import { deviceActivities } from './activities.js';
import { jobErrorFrom } from './device-power.js';
import { KeyedMemo } from './timeline.js';

export const remediationDecisionSignal = defineSignal<[EnrolmentDecision]>(decisionSignalName);

/**
 * Quarantine, remediation and release of one device (docs/day2.md). The lifecycle moves travel in the memo (the
 * workflow agent applies them as the lifecycle's writer), like an enrolment's:
 * - quarantine: the device is held (`quarantined`), nothing else;
 * - remediate: held, then (after an operator's approval when the blast radius is exceeded) `remediating` and the
 *   playbook's steps in order, each verified by fresh health readings; the first that clears the fault returns the
 *   device where it was; when none does it is held again and the result asks for an RMA;
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
  const result = (extra: Partial<RemediationResult> = {}): RemediationResult => ({
    deviceId: id,
    mode: input.mode,
    state,
    steps,
    ...extra,
  });
  const publish = (m: JobMemo) => memo.set(jobMemoKey, m);
  const { resetBmc, setDevicePower } = deviceActivities(input.activity);
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
    for (const step of input.playbook?.steps ?? []) {
      publish({
        progress: { stage: step, message: `${step} on ${input.deviceName} for ${fault.class} (${fault.component})` },
      });
      memo.flush();
      let message: string | undefined;
      try {
        await runStep(step);
      } catch (err) {
        if (isCancellation(err)) throw err;
        message = `${step} failed: ${jobErrorFrom(err).message}`;
      }
      const reading = await awaitHealthy({
        target: input.target,
        faultClass: fault.class,
        timeoutS: input.verifyTimeoutS,
        pollS: input.verifyPollS,
      });
      const fixed = healthCleared(reading, fault.class);
      steps.push({ step, fixed, faults: reading.faults, ...(message ? { message } : {}) });
      if (fixed) {
        move(input.returnTo, 'Remediated', `${step} cleared ${fault.class} (${fault.component})`);
        publish({ progress: { stage: 'done', percent: 100 }, result: { ...result({ fixedBy: step }) } });
        memo.flush();
        return result({ fixedBy: step });
      }
    }
    const escalated = { part: fault.component, faultClass: fault.class, message: fault.message };
    const tried = steps.map((s) => s.step).join(', ') || 'no playbook step';
    move('quarantined', 'RemediationExhausted', `${tried} did not clear ${fault.class} (${fault.component}): RMA`);
    const error = {
      code: 'REMEDIATION_EXHAUSTED',
      message: `${input.deviceName}: ${tried} did not clear ${fault.class} on ${fault.component}; an RMA case is open`,
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

  async function runStep(step: PlaybookStep): Promise<void> {
    if (step === 'power_cycle') {
      await setDevicePower({ target: input.target, action: 'power-cycle', settleTimeoutS: input.verifyTimeoutS });
      return;
    }
    await resetBmc({
      target: input.target,
      manager: step === 'hmc_reset' ? 'hmc' : 'bmc',
      waitUntilBackS: input.verifyTimeoutS,
    });
  }
}

function describeFaults(reading: HealthReading): string {
  if (!reading.reachable) return 'the BMC does not answer';
  return reading.faults.map((f) => `${f.class} ${f.component}: ${f.message}`).join('; ') || 'no fault';
}
