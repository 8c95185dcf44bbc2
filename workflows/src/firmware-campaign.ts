import {
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  patched,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  CampaignDeviceInput,
  CampaignDeviceOutcome,
  CampaignProgress,
  FirmwareCampaignInput,
  JobMemo,
  SwitchFirmwareStep,
} from '@fleet/domain';
import { jobMemoKey, maintenanceWindowAt, startable, switchCounts } from '@fleet/domain/workflow-safe';
import { childSearchAttributes } from './child-search-attributes.js';
import { deviceFirmwareUpdateV2 } from './firmware-update.js';
import { deviceFirmwareUpdate } from './firmware-update-v1.js';
import { switchFirmwareUpdate } from './switch-firmware-update.js';

/** A campaign child's memo from its start (deviceFirmwareUpdateV2 publishes its own from its first activity on). */
const childStartMemo: JobMemo = {
  progress: { stage: 'update', percent: 0, message: 'reading the installed versions, then pushing what differs' },
};

export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');
export const approveSignal = defineSignal('approve');
export const campaignStatusQuery = defineQuery<CampaignProgress>('status');

/**
 * A firmware rollout over one site: the canary, then (once approved) the waves, each device
 * a child workflow (id = its child job id) started only while every cap (site, rack, power
 * domain, switch share of a rack) has room and the site's maintenance window is open.
 * Failures beyond the budget pause the campaign; resume resets the budget; cancelling the
 * campaign cancels its running devices.
 */
export async function firmwareCampaign(input: FirmwareCampaignInput): Promise<Record<string, unknown>> {
  const st: CampaignProgress = input.carried ?? {
    waveIndex: 0,
    outcomes: {},
    failuresSinceResume: 0,
    approved: input.policy.autoApprove,
    paused: false,
  };
  // The stage the job shows: paused wins over everything but the end.
  let phase = 'starting';
  let ended = false;
  let waitingForWindow = false;
  let wake = false;
  const stage = () =>
    phase === 'done' || ended
      ? phase
      : st.paused
        ? 'paused'
        : waitingForWindow
          ? 'waiting_for_maintenance_window'
          : phase;
  const byId = new Map(input.devices.map((d) => [d.deviceId, d]));
  const switches = switchCounts(input.devices);
  const caps = {
    ...input.policy,
    ...(input.maxSwitchShareOfRack ? { maxSwitchShareOfRack: input.maxSwitchShareOfRack } : {}),
  };
  const running = new Map<string, CampaignDeviceInput>();

  // Campaigns started before memo coalescing replay their memo upserts as they were (one per call).
  const coalesce = patched('campaign-memo-coalesced');
  let lastMemo = '';
  const publish = (extra: Partial<JobMemo> = {}) => {
    const outcomes = Object.values(st.outcomes);
    const n = (o: CampaignDeviceOutcome) => outcomes.filter((x) => x === o).length;
    const total = input.devices.length;
    const message =
      `${outcomes.length}/${total} done (${n('succeeded')} updated, ${n('skipped')} compliant, ` +
      `${n('failed')} failed), ${running.size} running${st.pauseReason ? `; ${st.pauseReason}` : ''}`;
    const memo = {
      progress: { stage: stage(), percent: total ? Math.floor((100 * outcomes.length) / total) : 100, message },
      ...extra,
    } satisfies JobMemo;
    // Coalesced: the loop publishes once per wake-up, and only when what the job shows changed: its stage, its
    // whole percent, its failures, its pause reason or its end. A big campaign thus upserts about once per 1 % of
    // its devices (the counts in the message are exact at each upsert and at the end).
    const key = JSON.stringify([memo.progress.stage, memo.progress.percent, n('failed'), st.pauseReason, extra]);
    if (coalesce && key === lastMemo) return;
    lastMemo = key;
    upsertMemo({ [jobMemoKey]: memo });
  };
  const signalled = (change: () => void) => () => {
    change();
    wake = true;
    publish();
  };
  setHandler(
    pauseSignal,
    signalled(() => ((st.paused = true), (st.pauseReason = 'paused by an operator'))),
  );
  setHandler(
    resumeSignal,
    signalled(() => ((st.paused = false), (st.pauseReason = undefined), (st.failuresSinceResume = 0))),
  );
  setHandler(
    approveSignal,
    signalled(() => (st.approved = true)),
  );
  setHandler(campaignStatusQuery, () => st);

  const runDevice = async (d: CampaignDeviceInput): Promise<void> => {
    let outcome: CampaignDeviceOutcome;
    try {
      const manifest = input.manifests[d.manifestId]!;
      const common = {
        workflowId: d.jobId,
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        searchAttributes: childSearchAttributes(
          d.nvos ? 'switch.firmware_update' : 'device.firmware_update',
          input.siteId,
          d.deviceId,
        ),
      };
      const result = d.nvos
        ? await executeChild(switchFirmwareUpdate, {
            ...common,
            args: [
              {
                jobId: d.jobId,
                target: d.nvos,
                steps: manifest.steps as SwitchFirmwareStep[],
                force: input.policy.force,
                timings: input.switchTimings,
                activity: input.activity,
              },
            ],
          })
        : // A campaign from before the patch goes on starting the workflow type it started (the replayed commands
          // name it); a new one starts V2, shown in the update stage from its start, so the child need not say so.
          await executeChild(coalesce ? deviceFirmwareUpdateV2 : deviceFirmwareUpdate, {
            ...common,
            ...(coalesce ? { memo: { [jobMemoKey]: childStartMemo } } : {}),
            args: [
              {
                jobId: d.jobId,
                target: d.target,
                role: d.role,
                steps: manifest.steps,
                expectedInventory: manifest.expectedInventory,
                force: input.policy.force,
                timings: input.timings,
                activity: input.activity,
              },
            ],
          });
      outcome = result.status === 'skipped' ? 'skipped' : 'succeeded';
    } catch (err) {
      // A cancelled campaign cancels its children; the main loop ends with the cancellation.
      if (isCancellation(err)) {
        running.delete(d.deviceId);
        return;
      }
      outcome = 'failed';
    }
    running.delete(d.deviceId);
    st.outcomes[d.deviceId] = outcome;
    if (outcome === 'failed' && ++st.failuresSinceResume > input.policy.failureBudget && !st.paused) {
      st.paused = true;
      st.pauseReason =
        `failure budget exceeded (${st.failuresSinceResume} > ${input.policy.failureBudget}); resume to ` + `continue`;
    }
    wake = true;
    // The main loop wakes in this same workflow task and publishes then, once for all that finished.
    if (!coalesce) publish();
  };

  const children: Promise<void>[] = [];
  try {
    for (; st.waveIndex < input.waves.length; st.waveIndex++) {
      const wave = input.waves[st.waveIndex]!;
      if (wave.kind === 'wave' && input.waves[0]?.kind === 'canary' && !st.approved) {
        phase = 'awaiting_approval';
        publish();
        await condition(() => st.approved);
      }
      phase = wave.kind === 'canary' ? 'canary' : `wave ${wave.index}/${input.waves.length - 1}`;
      let pending = wave.deviceIds.filter((id) => !st.outcomes[id]).map((id) => byId.get(id)!);
      while (pending.length || running.size) {
        let sleepMs: number | undefined;
        waitingForWindow = false;
        // A long wave: stop starting devices, let the running ones finish, continue as new.
        const draining = workflowInfo().historyLength > input.historyBudget;
        if (draining && running.size === 0) {
          await Promise.all(children);
          await continueAsNew<typeof firmwareCampaign>({ ...input, carried: { ...st } });
        }
        if (!st.paused && !draining && pending.length) {
          const window = maintenanceWindowAt(Date.now(), input.windows);
          if (window.open) {
            for (const d of startable(pending, [...running.values()], caps, switches)) {
              running.set(d.deviceId, d);
              children.push(runDevice(d));
            }
            pending = pending.filter((d) => !running.has(d.deviceId));
          } else {
            sleepMs = Math.max(1_000, window.opensAtMs - Date.now());
            waitingForWindow = running.size === 0;
          }
        }
        publish();
        wake = false;
        if (sleepMs === undefined) await condition(() => wake);
        else await condition(() => wake, sleepMs);
      }
      if (wave.kind === 'canary' && wave.deviceIds.some((id) => st.outcomes[id] === 'failed') && !st.paused) {
        st.paused = true;
        st.pauseReason = 'the canary failed; resume to continue';
      }
      if (st.paused) {
        publish();
        await condition(() => !st.paused);
      }
      if (workflowInfo().historyLength > input.historyBudget && st.waveIndex + 1 < input.waves.length) {
        await Promise.all(children);
        await continueAsNew<typeof firmwareCampaign>({ ...input, carried: { ...st, waveIndex: st.waveIndex + 1 } });
      }
    }
    await Promise.all(children);
  } catch (err) {
    // Cancelled: the running devices were asked to stop with it (their workflows are children of this scope). The
    // campaign ends once they have, so its end never comes before theirs: each device is written from its own
    // workflow, not as never reached, and stays busy until that workflow ends (after its running activity has
    // stopped). Runs from before the patch end at once.
    if (isCancellation(err) && patched('campaign-cancel-awaits-devices')) {
      await CancellationScope.nonCancellable(() => Promise.allSettled(children));
      // The memo shows the campaign as it ends: its counts, the devices that finished while it waited among them.
      phase = 'cancelled';
      // Runs from before this patch showed a paused (or waiting) campaign's end as paused: that memo, unchanged, was
      // not written again. Otherwise the stage is `cancelled` either way, the same commands: no patch to pay for.
      ended = st.paused || waitingForWindow ? patched('campaign-cancelled-shows-cancelled') : true;
      publish();
    }
    throw err;
  }
  const outcomes = Object.values(st.outcomes);
  const result = {
    devices: input.devices.length,
    succeeded: outcomes.filter((o) => o === 'succeeded').length,
    skipped: outcomes.filter((o) => o === 'skipped').length,
    failed: outcomes.filter((o) => o === 'failed').length,
  };
  phase = 'done';
  // RMS parent rule: all done and some failed → the campaign failed, with its counts.
  if (result.failed > 0) {
    const message =
      `Campaign complete: ${result.succeeded + result.skipped}/${result.devices} succeeded, ${result.failed} ` +
      `failed`;
    publish({ result, error: { code: 'CAMPAIGN_FAILED', message } });
    throw ApplicationFailure.nonRetryable(message, 'CAMPAIGN_FAILED', result);
  }
  publish({ result });
  return result;
}
