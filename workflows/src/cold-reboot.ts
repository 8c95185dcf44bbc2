import { ActivityCancellationType, ApplicationFailure, isCancellation, sleep, upsertMemo } from '@temporalio/workflow';
import type { BmcTarget, ColdRebootInput, JobMemo, PowerAction } from '@fleet/domain';
import { coldRebootStages, jobMemoKey, nvosHelloWaits } from '@fleet/domain/workflow-safe';
import { deviceActivities } from './activities.js';
import { jobErrorFrom } from './device-power.js';
import { switchActivities } from './switch-activities.js';
import { StageRecorder } from './timeline.js';

class StageFailed extends Error {}

/**
 * The NVL72 cold-reboot runbook as RMS's ExecuteColdReboot runs it (docs/reference/rms-behaviours.md#cold-reboot):
 * stages in order with their gates, floors and maximum waits, fail fast, the timeline in the
 * job while it runs, cancellation honoured between and within stages.
 */
export async function rackColdReboot(input: ColdRebootInput): Promise<JobMemo> {
  const t = input.timings;
  const acts = deviceActivities(input.activity);
  const { shelves, switches, compute } = input.targets;
  const trays = [...compute, ...switches];
  const all = [...shelves, ...switches, ...compute];
  const rec = new StageRecorder(
    coldRebootStages,
    all.map((d) => d.deviceId),
    (memo) => upsertMemo({ [jobMemoKey]: memo }),
  );
  rec.emit();

  const power = async (
    stage: string,
    targets: BmcTarget[],
    action: PowerAction,
    settleTimeoutS: number,
    final: boolean,
  ) => {
    rec.start(stage, `${action} ${targets.length} devices`);
    const results = await Promise.allSettled(
      targets.map((target) => acts.setDevicePower({ target, action, settleTimeoutS })),
    );
    const failed: string[] = [];
    results.forEach((r, i) => {
      const id = targets[i]!.deviceId;
      if (r.status === 'fulfilled')
        rec.device(id, { state: final ? 'succeeded' : 'running', powerState: r.value.powerState });
      else {
        if (isCancellation(r.reason)) throw r.reason;
        failed.push(id);
        rec.device(id, { state: 'failed', error: jobErrorFrom(r.reason) });
      }
    });
    if (failed.length) fail(stage, `${failed.length}/${targets.length} devices failed to ${action}`, failed);
    rec.finish(stage, 'completed', `${targets.length} devices ${action}`);
  };

  /** A gate: wait the floor, then poll until every device meets the condition or the maximum wait passes. */
  const gate = async (
    stage: string,
    targets: BmcTarget[],
    condition: 'off' | 'unreachable' | 'reachable',
    floorS: number,
    maxS: number,
  ) => {
    rec.start(stage, `waiting ${floorS}s, then up to ${maxS}s for ${targets.length} devices to be ${condition}`);
    if (floorS > 0) await sleep(`${floorS}s`);
    const r = await acts.awaitDevices({ targets, condition, pollIntervalS: t.pollIntervalS, maxWaitS: maxS });
    if (r.notMet.length)
      fail(
        stage,
        `${r.notMet.length}/${targets.length} devices not ${condition} after ${maxS}s`,
        r.notMet.map((n) => n.deviceId),
      );
    rec.finish(stage, 'completed', `${targets.length} devices ${condition}`);
  };

  /**
   * verify_nvos_ready: NVUE answers on every switch tray the inventory gives an NVOS endpoint, asked concurrently
   * up to `nvosHelloAttempts` times, `nvosHelloBackoffS`·2^n apart, each wait capped (nvosHelloWaits; durable
   * timers); a switch that never answers, or cannot be logged in to at all, fails the stage naming it, and so does
   * a hello activity that fails as a whole (its heartbeat or start-to-close timeout, its retries spent).
   */
  const nvosReady = async () => {
    const stage = 'verify_nvos_ready';
    const nvos = input.targets.switchNvos ?? [];
    const asked = new Set(nvos.map((n) => n.deviceId));
    const unasked = switches.filter((s) => !asked.has(s.deviceId)).map((s) => s.deviceId);
    for (const id of unasked)
      rec.device(id, {
        state: 'succeeded',
        message: 'BMC reachable after the power cycle; the inventory gives no NVOS endpoint to ask',
      });
    const note = unasked.length
      ? `; not asked, no NVOS endpoint in the inventory (fleet_nvos_url, fleet_nvos_ssh): ${unasked.join(', ')}`
      : '';
    if (!nvos.length) {
      rec.start(stage);
      rec.finish(stage, 'skipped', `no switch tray to ask${note}`);
      return;
    }
    const waits = nvosHelloWaits(t.nvosHelloAttempts, t.nvosHelloBackoffS);
    const attempts = waits.length + 1;
    const maxWaitS = waits.reduce((a, b) => a + b, 0);
    rec.start(stage, `NVUE hello on ${nvos.length} switch trays, up to ${attempts} attempts over ${maxWaitS}s`);
    // Reads only: a cancelled reboot need not wait for them to stop.
    const { nvueHello } = switchActivities(input.activity, undefined, ActivityCancellationType.TRY_CANCEL);
    let pending = nvos;
    for (let attempt = 1; ; attempt++) {
      const r = await nvueHello({ targets: pending }).catch((err: unknown) => {
        if (isCancellation(err)) throw err;
        const error = jobErrorFrom(err);
        const ids = pending.map((p) => p.deviceId);
        for (const id of ids) rec.device(id, { state: 'failed', error: { ...error, details: { deviceId: id } } });
        return fail(
          stage,
          `${ids.length}/${nvos.length} switch trays could not be asked (attempt ${attempt}: ` +
            `${error.code}: ${error.message}): ${ids.join(', ')}`,
          ids,
        );
      });
      for (const id of r.answered)
        rec.device(id, { state: 'succeeded', message: `NVUE answered (attempt ${attempt})` });
      if (!r.failed.length) break;
      const permanent = r.failed.filter((f) => f.permanent);
      if (permanent.length || attempt >= attempts) {
        const failed = permanent.length ? permanent : r.failed;
        for (const f of failed)
          rec.device(f.deviceId, {
            state: 'failed',
            error: { code: f.error.type, message: f.error.message, details: { deviceId: f.deviceId } },
          });
        const why = permanent.length
          ? 'cannot be asked'
          : `did not answer NVUE after ${attempts} attempts over ${maxWaitS}s`;
        fail(
          stage,
          `${failed.length}/${nvos.length} switch trays ${why}: ` +
            `${failed.map((f) => `${f.deviceId} (${f.error.type}: ${f.error.message})`).join('; ')}`,
          failed.map((f) => f.deviceId),
        );
      }
      const left = new Set(r.failed.map((f) => f.deviceId));
      pending = pending.filter((p) => left.has(p.deviceId));
      await sleep(waits[attempt - 1]! * 1000);
    }
    rec.finish(stage, 'completed', `${nvos.length} switch trays answer NVUE${note}`);
  };

  const fail = (stage: string, message: string, devices: string[]): never => {
    rec.finish(stage, 'failed', message);
    for (const id of devices)
      if (rec.devices[id]?.state !== 'failed') rec.device(id, { state: 'failed', message: `${stage}: ${message}` });
    rec.closeUnreached(`not reached: the reboot stopped at ${stage}`);
    rec.emit({ error: { code: 'STAGE_FAILED', message: `${stage}: ${message}`, details: { stage, devices } } });
    throw new StageFailed(`${stage}: ${message}`);
  };

  try {
    await power(
      'prestage_shutdown_compute',
      compute,
      'off',
      t.prestageShutdownFloorS + t.prestageShutdownPollMaxS,
      false,
    );
    await gate('prestage_verify_compute_down', compute, 'off', t.prestageShutdownFloorS, t.prestageShutdownPollMaxS);
    await power('power_off_shelves', shelves, 'off', input.settleTimeoutS, false);
    await gate('verify_discharged', trays, 'unreachable', t.dischargeFloorS, t.dischargePollMaxS);
    await power('power_on_shelves', shelves, 'on', input.settleTimeoutS, true);
    await gate('verify_bmc_up', trays, 'reachable', t.bmcUpFloorS, t.bmcUpPollMaxS);
    await nvosReady();
    await power('power_on_compute', compute, 'on', input.settleTimeoutS, false);
    rec.start('wait_compute_boot', `${t.computeBootWaitS}s: the BMC gives no OS signal`);
    await sleep(`${t.computeBootWaitS}s`);
    for (const c of compute) rec.device(c.deviceId, { ...rec.devices[c.deviceId]!, state: 'succeeded' });
    rec.finish('wait_compute_boot', 'completed');
    rec.emit({ result: { devices: all.length } });
    return { timeline: rec.timeline, devices: rec.devices };
  } catch (err) {
    if (err instanceof StageFailed) throw ApplicationFailure.nonRetryable(err.message, 'STAGE_FAILED');
    if (isCancellation(err)) {
      const current = rec.timeline.currentStage;
      const stage = current ? rec.timeline.stages.find((s) => s.name === current) : undefined;
      if (current && stage?.status === 'running') rec.finish(current, 'cancelled', 'cancelled by request');
      rec.closeUnreached('not reached: the reboot was cancelled');
      rec.emit({ error: { code: 'CANCELLED', message: 'the cold reboot was cancelled' } });
    }
    throw err;
  }
}
