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
  upsertMemo,
} from '@temporalio/workflow';
import type {
  AwaitedDecision,
  BurnInActivities,
  BurnInVerdict,
  DeviceLifecycleReport,
  DeviceVerification,
  EnrolmentCondition,
  EnrolmentDecision,
  EnrolmentDevice,
  EnrolmentInput,
  EnrolmentResult,
  EnrolmentStage,
  FleetLifecycleState,
  HardwareRecord,
  JobMemo,
  LifecycleMemo,
  LifecycleMove,
  PowerActivities,
  ReportedCondition,
  VerificationActivities,
  VerificationStage,
} from '@fleet/domain';
import {
  decisionSignalName,
  hardwareMemoKey,
  jobMemoKey,
  lifecycleMemoKey,
  stagesOf,
  verificationStages,
} from '@fleet/domain/workflow-safe';
import { childSearchAttributes } from './child-search-attributes.js';
import { jobErrorFrom } from './device-power.js';
import { deviceFirmwareUpdateV2 } from './firmware-update.js';
import { KeyedMemo, StageRecorder } from './timeline.js';

export const decisionSignal = defineSignal<[EnrolmentDecision]>(decisionSignalName);

const nonRetryable = ['INVALID_ARGUMENT', 'UNAUTHENTICATED', 'NOT_FOUND', 'FAILED_PRECONDITION'];

interface Dev {
  d: EnrolmentDevice;
  id: string;
  rejected: boolean;
  moves: LifecycleMove[];
  conditions: Partial<Record<EnrolmentCondition, ReportedCondition>>;
  /** Stage → the admin's reason for passing it anyway. */
  skipped: Record<string, string>;
}

/** Device id → why the stage failed for it; empty when it passed for all. */
type Failures = Map<string, string>;

/**
 * Enrolment and burn-in (docs/enrolment.md), one workflow for a rack, a device, or a burn-in alone. Each stage runs for
 * the devices still in; a stage that fails for some waits for an operator's decision (the `decision` signal): retry
 * runs it again for them, skip passes it (admin), reject moves them to `failed` and the rest go on. The lifecycle
 * moves, the conditions observed and the hardware read go out through the memo (KeyedMemo: one upsert per workflow
 * task, only the keys that changed); the workflow agent applies them as their writers. Cancelled, devices go back to
 * where the lifecycle table's cancel edges say (enrolling → discovered, burning_in → enrolled).
 */
export async function enrolment(input: EnrolmentInput): Promise<EnrolmentResult> {
  const t = input.activity;
  const retry = {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    maximumAttempts: t.maximumAttempts,
    nonRetryableErrorTypes: nonRetryable,
  };
  const acts = proxyActivities<VerificationActivities & PowerActivities>({
    heartbeatTimeout: `${t.heartbeatTimeoutS}s`,
    startToCloseTimeout: `${t.startToCloseTimeoutS}s`,
    retry,
  });
  const burnIn = proxyActivities<BurnInActivities>({
    heartbeatTimeout: `${input.burnIn.heartbeatTimeoutS}s`,
    startToCloseTimeout: `${input.burnIn.startToCloseS}s`,
    retry,
  });

  const devs: Dev[] = input.devices.map((d) => ({
    d,
    id: d.target.deviceId,
    rejected: false,
    moves: [],
    conditions: {},
    skipped: {},
  }));
  const byId = new Map(devs.map((x) => [x.id, x]));
  const active = () => devs.filter((x) => !x.rejected);
  const stages = stagesOf(input.mode);

  const memo = new KeyedMemo((fields) => upsertMemo(fields));
  let rev = 0;
  const hardware: Record<string, HardwareRecord> = {};
  let awaiting: AwaitedDecision | undefined;
  const rec = new StageRecorder(
    stages,
    devs.map((x) => x.id),
    (m) => memo.set(jobMemoKey, awaiting ? withDecision(m, awaiting) : m),
  );
  let lastLifecycle = '';
  const publishLifecycle = () => {
    const devices: Record<string, DeviceLifecycleReport> = {};
    for (const x of devs) devices[x.id] = { moves: x.moves, conditions: x.conditions };
    // rev moves only with a change, so an unchanged memo costs no upsert.
    const json = JSON.stringify([devices, hardware]);
    if (json === lastLifecycle) return;
    lastLifecycle = json;
    rev++;
    memo.set(lifecycleMemoKey, { rev, devices } satisfies LifecycleMemo);
    if (Object.keys(hardware).length) memo.set(hardwareMemoKey, { ...hardware });
  };
  const flush = () => {
    rec.emit();
    publishLifecycle();
    memo.flush();
  };
  const move = (x: Dev, to: FleetLifecycleState, reason: string, message?: string) => {
    x.moves.push({ to, reason, ...(message ? { message } : {}) });
  };
  const state = (x: Dev): FleetLifecycleState | undefined => x.moves[x.moves.length - 1]?.to;
  const report = (x: Dev, type: EnrolmentCondition, status: ReportedCondition['status'], why: string, msg = '') => {
    x.conditions[type] = { status, reason: why, message: msg.slice(0, 4000) };
  };
  const running = (x: Dev, message: string) => rec.device(x.id, { state: 'running', message });

  // A decision counts only for the stage waiting when it arrives: a late or repeated one is dropped, never kept for a
  // later failure.
  const decisions: EnrolmentDecision[] = [];
  setHandler(decisionSignal, (d) => {
    if (awaiting && d.stage === awaiting.stage && (d.since === undefined || d.since === awaiting.since))
      decisions.push(d);
  });

  const reject = (x: Dev, stage: EnrolmentStage, reason: string) => {
    x.rejected = true;
    const message = `rejected at ${stage}: ${reason}`;
    if (stage === 'burn_in') report(x, 'BurnInPassed', 'False', 'Rejected', message);
    if (state(x) === 'enrolling' || state(x) === 'burning_in') move(x, 'failed', 'Rejected', message);
    rec.device(x.id, { state: 'failed', message, error: { code: 'REJECTED', message } });
  };

  /**
   * Runs `attempt` until no device is left failing: after each failing round the stage waits for decisions that
   * cover every failing device. Returns when the stage has passed (run, skipped or rejected) for every device in.
   */
  const gated = async (
    stage: EnrolmentStage,
    attempt: (round: number, devices: Dev[]) => Promise<Failures>,
    devices: Dev[] = active(),
    /** The stage a round failed at, when the attempt runs several (verification); `stage` otherwise. */
    failedStage: () => EnrolmentStage = () => stage,
  ) => {
    let pending = devices.filter((x) => !x.rejected);
    for (let round = 1; pending.length; round++) {
      if (round > 1) rec.start(stage, `round ${round}: ${pending.length} devices again`);
      const failures = await attempt(round, pending);
      if (failures.size === 0) return;
      const at = failedStage();
      const waiting = new Map(failures);
      const since = new Date().toISOString();
      awaiting = { stage: at, devices: Object.fromEntries(waiting), since };
      rec.finish(at, 'failed', `failed for ${waiting.size} devices; waiting for a decision`);
      pending = [];
      while (waiting.size) {
        flush();
        await condition(() => decisions.length > 0);
        const decision = decisions.shift()!;
        const named = decision.deviceIds?.filter((id) => waiting.has(id)) ?? [...waiting.keys()];
        for (const id of named) {
          const x = byId.get(id)!;
          waiting.delete(id);
          if (decision.action === 'retry') pending.push(x);
          else if (decision.action === 'skip') x.skipped[at] = `${decision.reason} (${decision.by})`;
          else reject(x, at, `${decision.reason} (${decision.by})`);
        }
        awaiting = waiting.size ? { stage: at, devices: Object.fromEntries(waiting), since } : undefined;
      }
      if (!pending.length) rec.finish(at, 'completed', decidedMessage(at, failures, byId));
    }
  };

  const verify = async () => {
    const first = verificationStages[0];
    rec.start(first, `${active().length} devices`);
    // The earliest stage any device failed at in the last round: the one the decision answers.
    let failedAt: VerificationStage = first;
    const failedStage = () => failedAt;
    await gated(
      first,
      async (_round, pending) => {
        for (const x of pending) running(x, 'verifying BMC, credentials and hardware');
        flush();
        const results = await Promise.allSettled(
          pending.map((x) =>
            acts.verifyDevice({
              target: x.d.target,
              ...(x.d.netboxSerial ? { netboxSerial: x.d.netboxSerial } : {}),
            }),
          ),
        );
        const failures: Failures = new Map();
        const verifications: DeviceVerification[] = [];
        results.forEach((r, i) => {
          const x = pending[i]!;
          if (r.status === 'rejected') {
            if (isCancellation(r.reason)) throw r.reason;
            failures.set(x.id, `verification could not run: ${jobErrorFrom(r.reason).message}`);
            return;
          }
          verifications.push(r.value);
          if (r.value.hardware) hardware[x.id] = r.value.hardware;
          const failed = r.value.stages.find((s) => !s.passed);
          noteVerification(x, r.value, report);
          if (failed) failures.set(x.id, `${failed.stage}: ${failed.message ?? 'failed'}`);
        });
        const failedStages = results.flatMap((r) =>
          r.status === 'fulfilled' ? r.value.stages.filter((y) => !y.passed).map((y) => y.stage) : [first],
        );
        failedAt = verificationStages.find((v) => failedStages.includes(v)) ?? first;
        for (const s of verificationStages) {
          const spans = verifications.flatMap((v) => v.stages.filter((y) => y.stage === s));
          const bad = spans.filter((y) => !y.passed).length;
          const status = spans.length === 0 ? 'skipped' : bad ? 'failed' : 'completed';
          const span = spans.length
            ? { startedAt: minIso(spans.map((y) => y.startedAt)), finishedAt: maxIso(spans.map((y) => y.finishedAt)) }
            : undefined;
          rec.record(s, status, span, `${spans.length - bad}/${spans.length} passed`);
        }
        return failures;
      },
      active(),
      failedStage,
    );
  };

  const topology = async () => {
    const trays = () => active().filter((x) => x.d.kind !== 'power_shelf');
    if (trays().length === 0) return rec.finish('nvlink_topology', 'skipped', 'no compute or switch tray left');
    rec.start('nvlink_topology', `${trays().length} compute and switch trays`);
    await gated('nvlink_topology', async () => {
      flush();
      const failures: Failures = new Map();
      let verdict;
      try {
        verdict = await acts.checkRackTopology({ targets: trays().map((x) => x.d.target) });
      } catch (err) {
        if (isCancellation(err)) throw err;
        for (const x of trays()) failures.set(x.id, `topology check could not run: ${jobErrorFrom(err).message}`);
        return failures;
      }
      if (verdict.complete) {
        rec.finish('nvlink_topology', 'completed', `${verdict.links}/${verdict.expectedLinks} NVLink links close`);
        return failures;
      }
      const summary = `${verdict.links}/${verdict.expectedLinks} links close, ${verdict.issuesTotal} issues`;
      for (const issue of verdict.issues) {
        if (issue.deviceId && byId.has(issue.deviceId) && !failures.has(issue.deviceId))
          failures.set(issue.deviceId, `${issue.code}: ${issue.message}`);
      }
      // Issues that name no tray (a missing one, the rack's counts) hold every tray: the rack is not whole.
      if (failures.size === 0) for (const x of trays()) failures.set(x.id, `${summary}: ${verdict.issues[0]?.message}`);
      return failures;
    });
  };

  const firmwareBaseline = async () => {
    const withManifest = active().filter((x) => x.d.firmware);
    rec.start('firmware_baseline', `${withManifest.length} devices to their type's default manifest`);
    await gated(
      'firmware_baseline',
      async (round, pending) => {
        for (const x of pending) running(x, 'firmware baseline');
        flush();
        const results = await Promise.allSettled(
          pending.map((x) => {
            const fw = x.d.firmware!;
            const childId = `${input.jobId}-fw-${x.id}-${round}`;
            return executeChild(deviceFirmwareUpdateV2, {
              workflowId: childId,
              parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
              searchAttributes: childSearchAttributes('device.firmware_update', input.siteId, x.id),
              args: [
                {
                  jobId: childId,
                  target: x.d.target,
                  role: fw.role,
                  steps: fw.steps,
                  expectedInventory: fw.expectedInventory,
                  force: false,
                  timings: input.firmware,
                  activity: input.activity,
                },
              ],
            });
          }),
        );
        const failures: Failures = new Map();
        results.forEach((r, i) => {
          if (r.status === 'fulfilled') return;
          if (isCancellation(r.reason)) throw r.reason;
          const cause = r.reason instanceof ChildWorkflowFailure ? r.reason.cause : r.reason;
          failures.set(pending[i]!.id, `firmware update failed: ${jobErrorFrom(cause).message}`);
        });
        if (failures.size === 0)
          rec.finish('firmware_baseline', 'completed', `${withManifest.length} devices at their baseline`);
        return failures;
      },
      withManifest,
    );
    if (!withManifest.length) rec.finish('firmware_baseline', 'skipped', 'no default manifest for these node types');
  };

  const runBurnIn = async () => {
    const compute = () => active().filter((x) => x.d.kind === 'compute');
    if (compute().length === 0) {
      rec.finish('burn_in', 'skipped', 'no compute tray: switch trays and power shelves are burned in with their rack');
      return false;
    }
    for (const x of active())
      if (input.mode === 'burn_in' || state(x) === 'enrolled') move(x, 'burning_in', 'BurnInStarted');
    rec.start('burn_in', `${compute().length} compute trays: ${input.burnIn.tests.join(', ')}`);
    await gated(
      'burn_in',
      async (round, pending) => {
        for (const x of pending) running(x, 'burn-in: powering the host on, then the SLURM tests');
        flush();
        const failures: Failures = new Map();
        // The tests run on the host: it must be up.
        const power = await Promise.allSettled(
          pending.map((x) =>
            acts.setDevicePower({ target: x.d.target, action: 'on', settleTimeoutS: input.settleTimeoutS }),
          ),
        );
        power.forEach((r, i) => {
          if (r.status === 'fulfilled') return;
          if (isCancellation(r.reason)) throw r.reason;
          failures.set(pending[i]!.id, `host did not power on: ${jobErrorFrom(r.reason).message}`);
        });
        const trays = pending.filter((x) => !failures.has(x.id));
        if (trays.length === 0) return failures;
        let verdicts: BurnInVerdict[];
        try {
          const result = await burnIn.runBurnIn({
            jobId: input.jobId,
            attempt: round,
            trays: trays.map((x) => ({ deviceId: x.id, name: x.d.burnInName })),
            ...(input.rackId ? { rackId: input.rackId } : {}),
            tests: input.burnIn.tests,
          });
          verdicts = result.verdicts;
        } catch (err) {
          if (isCancellation(err)) throw err;
          // Fail closed: a run that could not end in verdicts fails every tray it was for.
          const why = jobErrorFrom(err).message;
          for (const x of trays) {
            failures.set(x.id, `burn-in could not run: ${why}`);
            report(x, 'BurnInPassed', 'False', 'BurnInNotRun', why);
          }
          return failures;
        }
        for (const x of trays) {
          const mine = verdicts.filter((v) => v.deviceId === x.id);
          const failed = mine.filter((v) => v.verdict !== 'pass');
          if (mine.length === 0) failed.push(noVerdict(x.id));
          if (failed.length) {
            const why = failed.map((v) => `${v.test}: ${v.reason}: ${v.message}`).join('; ');
            failures.set(x.id, why);
            report(x, 'BurnInPassed', 'False', failed[0]!.reason ?? 'TestFailed', why);
          } else {
            report(x, 'BurnInPassed', 'True', 'AllTestsPassed', `${mine.map((v) => v.test).join(', ')} passed`);
          }
        }
        if (failures.size === 0) rec.finish('burn_in', 'completed', `${compute().length} trays passed`);
        return failures;
      },
      compute(),
    );
    if (compute().length === 0) {
      // Every tray was rejected: nothing burned the switches and shelves in. No verdict: enrolled, not certified.
      const why = 'every compute tray was rejected: nothing burned the rack in';
      for (const x of active()) {
        report(x, 'BurnInPassed', 'Unknown', 'NoVerdict', why);
        move(x, 'enrolled', 'NoVerdict', why);
      }
      rec.finish('burn_in', 'failed', why);
      return false;
    }
    for (const x of active()) {
      if (x.d.kind === 'compute') {
        if (x.skipped['burn_in']) report(x, 'BurnInPassed', 'True', 'SkippedByAdmin', x.skipped['burn_in']);
      } else report(x, 'BurnInPassed', 'True', 'RackTestsPassed', "passed with its rack's trays");
    }
    return true;
  };

  try {
    rec.emit();
    if (input.mode !== 'burn_in') {
      for (const x of devs) move(x, 'enrolling', 'EnrolmentStarted');
      await verify();
      if (stages.includes('nvlink_topology')) await topology();
      await firmwareBaseline();
      for (const x of active()) move(x, 'enrolled', 'EnrolmentPassed', passedMessage(x));
    }
    const burnedIn = await runBurnIn();
    if (burnedIn) {
      rec.start('certified');
      for (const x of active()) move(x, 'certified', 'BurnInPassed', passedMessage(x));
      rec.finish('certified', 'completed', `${active().length} devices certified`);
    } else rec.finish('certified', 'skipped', 'not burned in: enrolled, not certified');
    for (const x of active()) rec.device(x.id, { state: 'succeeded', message: state(x) ?? 'done' });
    const result = resultOf(devs, state);
    rec.emit({ result: { ...result } });
    publishLifecycle();
    memo.flush();
    if (active().length === 0) {
      const message = `every device was rejected (${devs.length})`;
      rec.emit({ result: { ...result }, error: { code: 'ALL_REJECTED', message } });
      memo.flush();
      throw ApplicationFailure.nonRetryable(message, 'ALL_REJECTED', result);
    }
    return result;
  } catch (err) {
    if (err instanceof ApplicationFailure && err.type === 'ALL_REJECTED') throw err;
    await CancellationScope.nonCancellable(async () => {
      const cancelled = isCancellation(err);
      const error = cancelled ? { code: 'CANCELLED', message: 'the job was cancelled' } : jobErrorFrom(err);
      // Cancelled: nothing was proven, the devices go back. Failed: fail closed.
      for (const x of active()) {
        const s = state(x);
        if (s === 'enrolling')
          move(
            x,
            cancelled ? 'discovered' : 'failed',
            cancelled ? 'EnrolmentCancelled' : 'EnrolmentFailed',
            error.message,
          );
        if (s === 'burning_in')
          move(x, cancelled ? 'enrolled' : 'failed', cancelled ? 'BurnInCancelled' : 'BurnInFailed', error.message);
      }
      const current = rec.timeline.currentStage;
      if (current) rec.finish(current, cancelled ? 'cancelled' : 'failed', error.message);
      rec.closeUnreached(cancelled ? 'not reached: the job was cancelled' : `not reached: ${error.message}`);
      awaiting = undefined;
      rec.emit({ error });
      publishLifecycle();
      memo.flush();
    });
    throw err;
  }
}

function withDecision(m: JobMemo, awaiting: AwaitedDecision): JobMemo {
  const n = Object.keys(awaiting.devices).length;
  return {
    ...m,
    progress: {
      ...m.progress,
      stage: 'awaiting_decision',
      message: `${awaiting.stage} failed for ${n} device${n === 1 ? '' : 's'}: retry, skip or reject`,
      decision: awaiting,
    },
  };
}

/** The conditions a verification observed: the BMC answered, the credentials logged in (as the satellite saw them). */
function noteVerification(
  x: Dev,
  v: DeviceVerification,
  report: (x: Dev, type: EnrolmentCondition, status: ReportedCondition['status'], why: string, msg?: string) => void,
) {
  const at = (s: string) => v.stages.find((y) => y.stage === s);
  const reach = at('bmc_reachable');
  if (reach)
    report(x, 'BMCReachable', reach.passed ? 'True' : 'False', reach.passed ? 'Answered' : 'NoAnswer', reach.message);
  const creds = at('credentials_verified');
  if (creds)
    report(
      x,
      'CredentialsVerified',
      creds.passed ? 'True' : 'False',
      creds.passed ? 'LoggedIn' : 'Refused',
      creds.message,
    );
}

function noVerdict(deviceId: string): BurnInVerdict {
  return {
    deviceId,
    test: 'gpu_stress',
    verdict: 'fail',
    reason: 'WrongDevice',
    message: 'no verdict came back for this tray',
    slurmJobId: null,
    slurmState: null,
    slurmReason: null,
  };
}

function passedMessage(x: Dev): string | undefined {
  const skipped = Object.entries(x.skipped);
  return skipped.length ? `skipped by an admin: ${skipped.map(([s, r]) => `${s} (${r})`).join('; ')}` : undefined;
}

function decidedMessage(stage: string, failures: Failures, byId: Map<string, Dev>): string {
  const ids = [...failures.keys()];
  const skipped = ids.filter((id) => byId.get(id)!.skipped[stage]).length;
  const rejected = ids.filter((id) => byId.get(id)!.rejected).length;
  return `decided: ${skipped} skipped, ${rejected} rejected`;
}

function resultOf(devs: Dev[], state: (x: Dev) => FleetLifecycleState | undefined): EnrolmentResult {
  const states: Record<string, FleetLifecycleState> = {};
  const skipped: Record<string, Record<string, string>> = {};
  for (const x of devs) {
    const s = state(x);
    if (s) states[x.id] = s;
    if (Object.keys(x.skipped).length) skipped[x.id] = x.skipped;
  }
  const count = (s: FleetLifecycleState) => Object.values(states).filter((v) => v === s).length;
  return {
    devices: devs.length,
    certified: count('certified'),
    enrolled: count('enrolled'),
    rejected: devs.filter((x) => x.rejected).length,
    states,
    skipped,
  };
}

const minIso = (xs: string[]) => xs.reduce((a, b) => (a < b ? a : b));
const maxIso = (xs: string[]) => xs.reduce((a, b) => (a > b ? a : b));
