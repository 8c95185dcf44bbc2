import { ApplicationFailure, isCancellation, sleep, upsertMemo } from '@temporalio/workflow';
import type { BmcTarget, ColdRebootInput, JobMemo, PowerAction } from '@fleet/domain';
import { coldRebootStages, jobMemoKey } from '@fleet/domain/workflow-safe';
import { deviceActivities } from './activities.js';
import { jobErrorFrom } from './device-power.js';
import { StageRecorder } from './timeline.js';

class StageFailed extends Error {}

/**
 * The NVL72 cold-reboot runbook as RMS's ExecuteColdReboot runs it (rms.md §3.4): stages
 * in order with their gates, floors and maximum waits, fail fast, the timeline in the
 * job while it runs, cancellation honoured between and within stages.
 */
export async function rackColdReboot(input: ColdRebootInput): Promise<JobMemo> {
  const t = input.timings;
  const acts = deviceActivities(input.activity);
  const { shelves, switches, compute } = input.targets;
  const trays = [...compute, ...switches];
  const all = [...shelves, ...switches, ...compute];
  const rec = new StageRecorder(coldRebootStages, all.map((d) => d.deviceId), (memo) => upsertMemo({ [jobMemoKey]: memo }));
  rec.emit();

  const power = async (stage: string, targets: BmcTarget[], action: PowerAction, settleTimeoutS: number, final: boolean) => {
    rec.start(stage, `${action} ${targets.length} devices`);
    const results = await Promise.allSettled(targets.map((target) => acts.setDevicePower({ target, action, settleTimeoutS })));
    const failed: string[] = [];
    results.forEach((r, i) => {
      const id = targets[i]!.deviceId;
      if (r.status === 'fulfilled') rec.device(id, { state: final ? 'succeeded' : 'running', powerState: r.value.powerState });
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
  const gate = async (stage: string, targets: BmcTarget[], condition: 'off' | 'unreachable' | 'reachable', floorS: number, maxS: number) => {
    rec.start(stage, `waiting ${floorS}s, then up to ${maxS}s for ${targets.length} devices to be ${condition}`);
    if (floorS > 0) await sleep(`${floorS}s`);
    const r = await acts.awaitDevices({ targets, condition, pollIntervalS: t.pollIntervalS, maxWaitS: maxS });
    if (r.notMet.length) fail(stage, `${r.notMet.length}/${targets.length} devices not ${condition} after ${maxS}s`, r.notMet.map((n) => n.deviceId));
    rec.finish(stage, 'completed', `${targets.length} devices ${condition}`);
  };

  const fail = (stage: string, message: string, devices: string[]): never => {
    rec.finish(stage, 'failed', message);
    for (const id of devices) if (rec.devices[id]?.state !== 'failed') rec.device(id, { state: 'failed', message: `${stage}: ${message}` });
    rec.closeUnreached(`not reached: the reboot stopped at ${stage}`);
    rec.emit({ error: { code: 'STAGE_FAILED', message: `${stage}: ${message}`, details: { stage, devices } } });
    throw new StageFailed(`${stage}: ${message}`);
  };

  try {
    await power('prestage_shutdown_compute', compute, 'off', t.prestageShutdownFloorS + t.prestageShutdownPollMaxS, false);
    await gate('prestage_verify_compute_down', compute, 'off', t.prestageShutdownFloorS, t.prestageShutdownPollMaxS);
    await power('power_off_shelves', shelves, 'off', input.settleTimeoutS, false);
    await gate('verify_discharged', trays, 'unreachable', t.dischargeFloorS, t.dischargePollMaxS);
    await power('power_on_shelves', shelves, 'on', input.settleTimeoutS, true);
    await gate('verify_bmc_up', trays, 'reachable', t.bmcUpFloorS, t.bmcUpPollMaxS);
    rec.start('verify_nvos_ready');
    rec.finish('verify_nvos_ready', 'skipped', 'NVOS readiness (NVUE hello) needs the switch-tray NVUE client; switch BMCs were verified reachable');
    for (const s of switches) rec.device(s.deviceId, { state: 'succeeded', message: 'BMC reachable after the power cycle' });
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
