import { asyncLocalStorage, Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import {
  firmwareCodeFor,
  type AppliedStep,
  type ApplyFirmwareInput,
  type ApplyFirmwareResult,
  type ApplyFirmwareStep,
  type ActivateFirmwareInput,
  type ActivateFirmwareResult,
  type DeviceActivities,
  type FirmwareActivities,
  type StageSpan,
} from '@fleet/domain';
import type { ActivityCheckpoints } from '../journal/action-journal.js';
import { pause } from './context.js';

/** A push whose task the BMC lost (it restarted mid-flash) is made again, this many times in all. */
export const MAX_PUSH_GENERATIONS = 3;

/** The single-purpose activities applyFirmware strings together (each keeps its own idempotence). */
export type ApplyOps = Pick<FirmwareActivities, 'pushFirmware' | 'awaitFirmwareTask' | 'readFirmwareInventory'> &
  Pick<DeviceActivities, 'awaitDevices' | 'readDevicePower' | 'setDevicePower' | 'resetBmc'> & {
    /** Makes the step's package local before anything is pushed (no-op when cached). */
    prefetch(step: ApplyFirmwareStep): Promise<void>;
    /** The activity's checkpoint on the satellite's disk, for when its heartbeat did not reach Temporal. */
    checkpoints: ActivityCheckpoints;
  };

/**
 * applyFirmware's heartbeat details: what is done for good. `inner` holds the details of the
 * single-purpose activity running under key `innerKey`, so it resumes the way it would as an activity of its own
 * (a push adopts its upload, a power action or BMC reset is not sent twice).
 */
export interface ApplyCheckpoint {
  steps: AppliedStep[];
  current?: { index: number; generation: number; taskUri?: string; pushes: number };
  fetch?: StageSpan;
  updateStartedAt?: string;
  update?: StageSpan;
  innerKey?: string;
  inner?: unknown;
}

/** activateFirmware's heartbeat details: the phase reached, and whether the host was on before (it goes back on). */
export interface ActivateCheckpoint {
  activation?: { startedAt: string; wasOn: boolean; phase: 'off' | 'reset' | 'stabilize' | 'on' | 'read' };
  innerKey?: string;
  inner?: unknown;
}

/**
 * Runs `fn` (one single-purpose activity's body) inside a context of its own: its heartbeats
 * are carried inside the checkpoint, and it sees the details its key left in an earlier attempt.
 */
async function nested<T>(cp: { innerKey?: string; inner?: unknown }, key: string, fn: () => Promise<T>): Promise<T> {
  const outer = Context.current();
  const prior = cp.innerKey === key ? cp.inner : undefined;
  if (cp.innerKey !== key) {
    cp.innerKey = key;
    cp.inner = undefined;
  }
  const beat = (details?: unknown) => {
    cp.inner = details;
    outer.heartbeat(cp);
  };
  const o = outer as unknown as Record<string, unknown>;
  // The step's own activity id, so the action journal tells its device actions from the other steps'.
  const inner = new Context(
    { ...outer.info, activityId: `${outer.info.activityId}/${key}`, heartbeatDetails: prior },
    outer.cancelled,
    outer.cancellationSignal,
    beat,
    o['_client'] as never,
    outer.log,
    outer.metricMeter,
    o['_cancellationDetails'] as never,
  );
  return asyncLocalStorage.run(inner, fn);
}

const now = () => new Date().toISOString();

/** A failure no further attempt of this activity will change, or the last attempt's: it ends the step. */
function stepFailure(err: unknown, lastAttempt: boolean): { code: AppliedStep['code']; message: string } | undefined {
  // A cancelled attempt ends the activity as cancelled, whatever error the interrupted call threw.
  if (err instanceof CancelledFailure || Context.current().cancellationSignal.aborted) return undefined;
  if (err instanceof ApplicationFailure && (err.nonRetryable || lastAttempt))
    return { code: firmwareCodeFor(err.type ?? undefined), message: err.message };
  return lastAttempt ? { code: 'EXCEPTION', message: err instanceof Error ? err.message : String(err) } : undefined;
}

/**
 * The device's steps in order (UPDATE_DELAY between pushes), stopping at the first failed one.
 * Heartbeats the checkpoint at every transition.
 */
export async function applyFirmwareWith(ops: ApplyOps, input: ApplyFirmwareInput): Promise<ApplyFirmwareResult> {
  const ctx = Context.current();
  const cp: ApplyCheckpoint = structuredClone(
    (ctx.info.heartbeatDetails as ApplyCheckpoint | undefined) ?? {
      steps: [],
    },
  );
  const save = () => ctx.heartbeat(cp);
  const lastAttempt = input.maximumAttempts > 0 && ctx.info.attempt >= input.maximumAttempts;

  if (!cp.fetch) {
    const startedAt = now();
    await Promise.all(input.steps.map((s) => ops.prefetch(s)));
    cp.fetch = { startedAt, finishedAt: now() };
    cp.updateStartedAt = now();
    save();
  }

  for (const plan of input.steps) {
    if (cp.update || cp.steps.some((s) => s.outcome === 'failed')) break;
    if (cp.steps.some((s) => s.index === plan.index)) continue;
    const done = await applyStep(ops, input, plan, cp, lastAttempt, save);
    cp.steps.push(done);
    cp.current = undefined;
    save();
    if (done.outcome === 'failed') break;
  }
  cp.update ??= { startedAt: cp.updateStartedAt ?? now(), finishedAt: now() };
  save();
  return { steps: cp.steps, fetch: cp.fetch, update: cp.update };
}

/** One step: push (or adopt the upload), follow its task; a lost task is pushed again unless the device runs it. */
async function applyStep(
  o: ApplyOps,
  i: ApplyFirmwareInput,
  plan: ApplyFirmwareStep,
  c: ApplyCheckpoint,
  last: boolean,
  persist: () => void,
): Promise<AppliedStep> {
  const { target, timings } = i;
  const first = c.steps.length === 0;
  c.current ??= { index: plan.index, generation: 0, pushes: 0 };
  const cur = c.current;
  persist();
  // UPDATE_DELAY: BMC memory needs the pause between two pushes. A retry waits again, which is harmless.
  if (!first && cur.generation === 0 && !cur.taskUri) await pause(timings.pushDelayS * 1000, c);
  while (cur.generation < MAX_PUSH_GENERATIONS) {
    const key = `${plan.index}:${cur.generation}`;
    if (!cur.taskUri) {
      try {
        const pushed = await nested(c, `push:${key}`, () =>
          o.pushFirmware({
            jobId: i.jobId,
            target,
            step: plan.step,
            stepIndex: plan.index,
            generation: cur.generation,
            force: i.force,
          }),
        );
        cur.taskUri = pushed.taskUri;
        if (!pushed.adopted) cur.pushes++;
      } catch (err) {
        const f = stepFailure(err, last);
        if (!f) throw err;
        return { index: plan.index, outcome: 'failed', pushes: cur.pushes, ...f };
      }
      persist();
    }
    let outcome;
    try {
      outcome = await nested(c, `task:${key}`, () =>
        o.awaitFirmwareTask({
          target,
          taskUri: cur.taskUri!,
          pollIntervalS: timings.taskPollS,
          timeoutS: timings.taskTimeoutS,
        }),
      );
    } catch (err) {
      const f = stepFailure(err, last);
      if (!f) throw err;
      return { index: plan.index, outcome: 'failed', pushes: cur.pushes, ...f };
    }
    if (outcome.state === 'completed') return { index: plan.index, outcome: 'staged', pushes: cur.pushes };
    if (outcome.state === 'failed')
      return { index: plan.index, outcome: 'failed', code: outcome.code, message: outcome.message, pushes: cur.pushes };
    // Lost: wait for the BMC, then look at what it runs before deciding to push again.
    await nested(c, `reachable:${key}`, () =>
      o.awaitDevices({
        targets: [target],
        condition: 'reachable',
        pollIntervalS: timings.taskPollS,
        maxWaitS: timings.bmcRecoveryS,
      }),
    );
    const running = (await nested(c, `inventory:${key}`, () => o.readFirmwareInventory({ target }))).components;
    if (plan.components.every((x) => running.find((r) => r.id === x.id)?.version === x.to))
      return { index: plan.index, outcome: 'self_activated', pushes: cur.pushes };
    // A new generation is a new file name, so the task scan never adopts the lost upload.
    cur.taskUri = undefined;
    cur.generation++;
    persist();
  }
  return {
    index: plan.index,
    outcome: 'failed',
    code: 'NO_TASK_INFO',
    message: `the BMC lost the update task ${MAX_PUSH_GENERATIONS} times`,
    pushes: cur.pushes,
  };
}

/**
 * Activation per node kind (docs/reference/rms-behaviours.md#firmware-activation). Compute: host off
 * (≤ powerStateTimeoutS), AC cycle of the tray BMC, stabilisation, host back on if it was on. Shelves and switch
 * BMCs: a controller reset, done once an outage was seen and the BMC answers again. The simulator and OpenBMC take a
 * BMC Manager.Reset as the AC-cycle stand-in. Each phase is checkpointed, so a retry neither powers the host off
 * twice (and forgets it was on) nor resets the BMC twice. Ends with the inventory read that verifies the update.
 */
export async function activateFirmwareWith(
  ops: ApplyOps,
  input: ActivateFirmwareInput,
): Promise<ActivateFirmwareResult> {
  const ctx = Context.current();
  const cp: ActivateCheckpoint = structuredClone((ctx.info.heartbeatDetails as ActivateCheckpoint | undefined) ?? {});
  // The phase and whether the host was on are also on disk at every change: the copy that outlives a heartbeat lost in
  // a cut, without which a retry would find the host off and leave it so.
  const saved = ops.checkpoints.load() as Pick<ActivateCheckpoint, 'activation'> | undefined;
  if (saved?.activation) cp.activation = saved.activation;
  const save = async () => {
    ctx.heartbeat(cp);
    await ops.checkpoints.save(input.target.deviceId, { activation: cp.activation });
  };
  const lastAttempt = input.maximumAttempts > 0 && ctx.info.attempt >= input.maximumAttempts;
  const { target, timings } = input;
  const power = async (action: 'on' | 'force-off') => {
    try {
      await nested(cp, `power:${action}`, () =>
        ops.setDevicePower({ target, action, settleTimeoutS: timings.powerStateTimeoutS }),
      );
    } catch (err) {
      const f = stepFailure(err, lastAttempt);
      if (!f) throw err;
      throw ApplicationFailure.create({
        type: 'ACTIVATION_FAILED',
        message: `activation ${action}: ${f.message}`,
        nonRetryable: true,
        details: [{ deviceId: target.deviceId }],
      });
    }
  };
  if (!cp.activation) {
    let wasOn = false;
    if (input.role === 'compute') {
      const before = await nested(cp, 'power:read', () => ops.readDevicePower({ target }));
      wasOn = before.reachable && before.powerState !== 'Off';
    }
    cp.activation = { startedAt: now(), wasOn, phase: input.role === 'compute' ? 'off' : 'reset' };
    await save();
  }
  const a = cp.activation;
  if (a.phase === 'off') {
    if (a.wasOn) await power('force-off');
    a.phase = 'reset';
    await save();
  }
  if (a.phase === 'reset') {
    await nested(cp, 'reset', () => ops.resetBmc({ target, manager: 'bmc', waitUntilBackS: timings.bmcRecoveryS }));
    a.phase = input.role === 'compute' ? 'stabilize' : 'on';
    await save();
  }
  if (a.phase === 'stabilize') {
    await pause(timings.acStabilizeS * 1000, cp);
    a.phase = 'on';
    await save();
  }
  if (a.phase === 'on') {
    if (a.wasOn) await power('on');
    a.phase = 'read';
    await save();
  }
  const activate = { startedAt: a.startedAt, finishedAt: now() };
  const inventory = (await nested(cp, 'inventory', () => ops.readFirmwareInventory({ target }))).components;
  return { activate, inventory };
}
