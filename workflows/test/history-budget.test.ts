import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadHistories } from './replay-helpers.js';

/**
 * Event budgets per recorded history (workflows/README.md "History budgets" says why each event is there). A
 * workflow whose history grows past its budget fails here: cut the events, or raise the budget in the README and
 * here with the reason. Campaigns grow with their devices: `perChild` events per child workflow started, on top of
 * `events`. Keys are the history files' names (replay-only histories of older code included, at their counts).
 */
const budgets: Record<string, { events: number; perChild?: number; perTaskHeartbeat?: number }> = {
  // Firmware: cut for issue 15 (was 88 for the device, 17 and 66 for the campaign runs).
  // Its first read is a local activity: 3 more events per 8 s it takes (the SDK heartbeats the workflow task).
  deviceFirmwareUpdateV2: { events: 21, perTaskHeartbeat: 3 },
  // Replay-only: the device update before issue 15 (src/firmware-update-v1.ts), at its recorded count.
  deviceFirmwareUpdate: { events: 88 },
  // Per child: its 3 events, the task that sees it end (3), a memo; tasks batch at scale (bench: 4.4 per device).
  firmwareCampaign: { events: 12, perChild: 7 },
  // Its run includes the operator's resume: the signal, its workflow task and the memo it changes (5).
  'firmwareCampaign-continued-as-new': { events: 17, perChild: 7 },
  // Replay-only: campaign runs recorded before memo coalescing (patched 'campaign-memo-coalesced').
  'firmwareCampaign-before-memo-coalescing': { events: 17 },
  'firmwareCampaign-continued-as-new-before-memo-coalescing': { events: 66 },
  // Cancelled with 2 devices running (patched 'campaign-cancel-awaits-devices'): the 12 of a campaign, the cancel
  // request and its task (4), the patch (2); per child its start (2), cancel request (2) and CANCELED, and a share of
  // the tasks that see them.
  'firmwareCampaign-cancelled': { events: 18, perChild: 8 },
  // Replay-only: cancelled before that patch: it ended in the task that saw the cancel request.
  'firmwareCampaign-cancelled-before-awaiting-devices': { events: 21 },
  // Replay-only: paused by its failure budget, then cancelled, before 'campaign-cancelled-shows-cancelled': its
  // memo stayed paused at the end, so it was not written again.
  'firmwareCampaign-cancelled-while-paused': { events: 24 },
  // Cancelled during applyFirmware, which the workflow waits for (the test's mock finished it; the satellite's sees the
  // cancel at a heartbeat and ends cancelled): the cancel request and its task (4), the activity's cancel request.
  'deviceFirmwareUpdateV2-cancelled': { events: 19 },
  // Not changed by issue 15: their recorded counts.
  deviceBmcReset: { events: 13 },
  deviceFirmwareRefresh: { events: 13 },
  devicePower: { events: 13 },
  devicePowerRefresh: { events: 13 },
  rackColdReboot: { events: 268 },
  // Cut for issue 15 (a memo upsert per workflow task, behind a patch): a cycle of 72 devices.
  rackPower: { events: 296 },
  'rackPower-before-memo-coalescing': { events: 313 },
  // A rack of 35 devices (issue 16): per device its verification (3) and a share of the workflow tasks; per compute
  // tray a power-on (3) and its firmware child's 3 events here (21 more in its own history); 6 memo upserts in all.
  enrolment: { events: 350 },
  switchCertificateInstall: { events: 13 },
  switchFactoryReset: { events: 13 },
  switchFirmwareUpdate: { events: 88 },
  switchNvosInstall: { events: 48 },
  switchPasswordRotation: { events: 13 },
  // Issue 18: one activity and 2 memo upserts (the recorded run is the rolled-back one: it fails, as many events).
  bmcPasswordRotation: { events: 13 },
  // A rack of 35 BMCs, 8 at a time: per BMC its activity (3), a workflow task per batch of completions (28), 2 memos.
  rackBmcPasswordRotation: { events: 193 },
  // Issue 17: quarantine, the blast-radius wait and its approval (signal), one step and its check, 3 memo upserts.
  remediation: { events: 24 },
  // Issue 17's AC cycle, confirmed by a burn-in after two resets that did not help: per shelf of the rack (8) an off
  // and an on activity (3 each), five waits, the AC-off floor timer, the burn-in's power-on and run.
  'remediation-ac-cycle': { events: 141 },
};

const childStarts = (events: Record<string, unknown>[]) =>
  events.filter((e) => e['eventType'] === 'EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED').length;

/** Workflow tasks that completed with no command and were scheduled again at once: a local activity outlived 80 %
 * of the task timeout and the SDK heartbeated the task. */
const taskHeartbeats = (events: Record<string, unknown>[]) =>
  events.filter(
    (e, i) =>
      e['eventType'] === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED' &&
      events[i + 1]?.['eventType'] === 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED',
  ).length;

describe('history budgets of the recorded workflow histories', () => {
  const histories = loadHistories();

  it('every recorded history has a budget, and every budget a history', () => {
    const files = histories.map((h) => h.file.replace(/\.json$/, '')).sort();
    assert.deepEqual(files, Object.keys(budgets).sort());
  });

  for (const h of histories) {
    const name = h.file.replace(/\.json$/, '');
    it(`${name} stays within its event budget`, () => {
      const budget = budgets[name];
      assert.ok(budget, `no budget for ${name}`);
      const children = childStarts(h.history.events);
      const heartbeats = taskHeartbeats(h.history.events);
      const allowed = budget.events + (budget.perChild ?? 0) * children + (budget.perTaskHeartbeat ?? 0) * heartbeats;
      const count = h.history.events.length;
      assert.ok(
        count <= allowed,
        `${name}: ${count} events, budget ${allowed}` +
          (children ? ` (${children} children)` : '') +
          (heartbeats && budget.perTaskHeartbeat ? ` (${heartbeats} task heartbeats)` : ''),
      );
    });
  }
});
