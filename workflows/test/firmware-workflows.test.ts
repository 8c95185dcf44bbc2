import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
// The workflows package has no dependency on the activity SDK: the satellite's copy, which the activities use.
import { Context } from '../../apps/satellite/node_modules/@temporalio/activity/lib/index.js';
import {
  buildWaves,
  type ActivateFirmwareInput,
  type ApplyFirmwareInput,
  type ApplyFirmwareStep,
  defaultSwitchFirmwareTimings,
  type AwaitFirmwareTaskInput,
  type BmcTarget,
  type CampaignDeviceInput,
  type CampaignPolicy,
  type CampaignProgress,
  type ComponentVersion,
  type DeviceFirmwareResult,
  type DeviceFirmwareUpdateInput,
  type FirmwareCampaignInput,
  type FirmwareStep,
  type FirmwareTaskOutcome,
  type FirmwareTimings,
  type PushFirmwareInput,
} from '@fleet/domain';
import {
  activateFirmwareWith,
  applyFirmwareWith,
  type ApplyOps,
} from '../../apps/satellite/src/activities/firmware-apply.js';
import type { deviceFirmwareUpdateV2, firmwareCampaign } from '../src/index.js';
import {
  activity,
  activityError,
  bmc,
  eventually,
  failureOf,
  memoOf,
  recorded,
  startWorkflowTestEnv,
  type Call,
  type WorkflowTestEnv,
} from './workflow-test-env.js';

// Firmware workflows with mocked satellite activities (timers shortened through the inputs: workflow-test-env.ts).

const timings: FirmwareTimings = {
  taskPollS: 1,
  taskTimeoutS: 30,
  pushDelayS: 1,
  powerStateTimeoutS: 5,
  acStabilizeS: 1,
  bmcRecoveryS: 5,
};

function step(name: string, components: ComponentVersion[]): FirmwareStep {
  return {
    name,
    targets: [],
    components,
    packageDigest: `sha256:${name}`,
    packageSize: 1024,
    fileName: `${name}.fwpkg`,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * BMCs as the firmware activities see them: a finished task stages its step's versions, a BMC reset activates what
 * is staged. `failTask` makes a device's task end failed; `holdMs` keeps each task running that long.
 */
function bmcFirmware(
  installed: Record<string, ComponentVersion[]>,
  opts: { failTask?: string[]; holdMs?: number } = {},
) {
  const staged = new Map<string, ComponentVersion[]>();
  const tasks = new Map<string, { deviceId: string; step: FirmwareStep }>();
  const id = (target: BmcTarget) => target.deviceId;
  return {
    readFirmwareInventory: async ({ target }: { target: BmcTarget }) => ({
      deviceId: id(target),
      components: installed[id(target)]!.map((c) => ({ ...c })),
    }),
    fetchArtifact: async ({ size }: { digest: string; size: number }) => ({ path: '/cache/x', fetchedBytes: size }),
    pushFirmware: async (input: PushFirmwareInput) => {
      const taskUri = `/redfish/v1/TaskService/Tasks/${id(input.target)}-${input.stepIndex}-${input.generation}`;
      tasks.set(taskUri, { deviceId: id(input.target), step: input.step });
      return { taskUri, adopted: false, fileName: input.step.fileName };
    },
    awaitFirmwareTask: async ({ taskUri }: AwaitFirmwareTaskInput): Promise<FirmwareTaskOutcome> => {
      const { deviceId, step: s } = tasks.get(taskUri)!;
      await sleep(opts.holdMs ?? 0);
      if (opts.failTask?.includes(deviceId)) return { state: 'failed', code: 'TASK_FAILED', message: 'flash failed' };
      staged.set(deviceId, [...(staged.get(deviceId) ?? []), ...s.components]);
      return { state: 'completed', messages: [] };
    },
    resetBmc: async ({ target }: { target: BmcTarget }) => {
      const next = staged.get(id(target)) ?? [];
      installed[id(target)] = installed[id(target)]!.map((c) => next.find((n) => n.id === c.id) ?? c);
      staged.delete(id(target));
      return { deviceId: id(target), manager: 'bmc', outageSeen: true, backAfterS: 1 };
    },
    readDevicePower: async ({ target }: { target: BmcTarget }) => ({
      deviceId: id(target),
      reachable: true,
      powerState: 'On',
    }),
    setDevicePower: async ({ target, action }: { target: BmcTarget; action: string }) => ({
      deviceId: id(target),
      action,
      powerState: action === 'on' ? 'On' : 'Off',
      resetSent: true,
    }),
  };
}

/**
 * As `recorded`, plus the satellite's applyFirmware and activateFirmware composed from the recorded single-purpose
 * mocks, so a trace shows each push, task and power action the two activities made.
 */
function recordedFw<A extends ReturnType<typeof bmcFirmware>>(impl: A) {
  const r = recorded(impl);
  const ops = {
    ...r.activities,
    awaitDevices: async () => ({ condition: 'reachable' as const, met: [], notMet: [] }),
    prefetch: async (s: ApplyFirmwareStep) => {
      await r.activities.fetchArtifact({ digest: s.step.packageDigest, size: s.step.packageSize });
    },
    // No disk copy of checkpoints here: these tests replay heartbeats through Temporal only.
    checkpoints: { load: () => undefined, save: async () => undefined },
  } as unknown as ApplyOps;
  const activities = {
    ...r.activities,
    applyFirmware: (i: ApplyFirmwareInput) => applyFirmwareWith(ops, i),
    activateFirmware: (i: ActivateFirmwareInput) => activateFirmwareWith(ops, i),
  };
  return { ...r, activities };
}

/** One line per call, naming what tells the steps apart; artifact fetches run concurrently and are left out. */
function trace(calls: Call[]): string[] {
  return calls
    .filter((c) => c.activity !== 'fetchArtifact')
    .map(({ activity: name, input }) => {
      if (name === 'pushFirmware')
        return `push ${(input['step'] as FirmwareStep).name} #${String(input['generation'])}`;
      if (name === 'setDevicePower') return `power ${String(input['action'])}`;
      return name;
    });
}

describe('firmware workflows with mocked activities', () => {
  let t: WorkflowTestEnv;
  before(async () => (t = await startWorkflowTestEnv()), { timeout: 120_000 });
  after(() => t?.teardown());

  describe('deviceFirmwareUpdateV2', () => {
    const input = (jobId: string, role: DeviceFirmwareUpdateInput['role'], steps: FirmwareStep[]) => ({
      jobId,
      target: bmc(jobId, role === 'compute' ? 'compute_gb200_nvidia' : 'powershelf_gb200_liteon'),
      role,
      steps,
      force: false,
      expectedInventory: ['BMC'],
      timings,
      activity,
    });

    it(`compute tray: pushes outdated steps in manifest order, UPDATE_DELAY apart, skips the compliant one, \
activates with host off, BMC AC cycle, host on, and verifies`, async () => {
      const installed = {
        'fw-ok': [
          { id: 'BMC', version: '1.0' },
          { id: 'EROT', version: '1.5' },
          { id: 'BIOS', version: '2.0' },
          { id: 'CPLD', version: '6' },
        ],
      };
      const steps = [
        step('bmc_tray', [{ id: 'BMC', version: '2.0' }]),
        step('erot', [{ id: 'EROT', version: '1.5' }]),
        step('compute_tray', [
          { id: 'BIOS', version: '3.0' },
          { id: 'CPLD', version: '7' },
        ]),
      ];
      const at = new Map<string, number>();
      const mocks = bmcFirmware(installed);
      const { activities, calls } = recordedFw({
        ...mocks,
        pushFirmware: async (i: PushFirmwareInput) => (at.set(i.step.name, Date.now()), mocks.pushFirmware(i)),
        resetBmc: async (i: { target: BmcTarget }) => (at.set('reset', Date.now()), mocks.resetBmc(i)),
        setDevicePower: async (i: { target: BmcTarget; action: string }) => (
          at.set(i.action, Date.now()),
          mocks.setDevicePower(i)
        ),
      });
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof deviceFirmwareUpdateV2>('deviceFirmwareUpdateV2', {
          taskQueue,
          workflowId: 'fw-ok',
          args: [input('fw-ok', 'compute', steps)],
        });
        const result = await handle.result();

        assert.deepEqual(trace(calls), [
          'readFirmwareInventory',
          'push bmc_tray #0',
          'awaitFirmwareTask',
          'push compute_tray #0',
          'awaitFirmwareTask',
          'readDevicePower',
          'power force-off',
          'resetBmc',
          'power on',
          'readFirmwareInventory',
        ]);
        const fetched = calls.filter((c) => c.activity === 'fetchArtifact').map((c) => c.input['digest']);
        assert.deepEqual(fetched.sort(), ['sha256:bmc_tray', 'sha256:compute_tray']);
        assert.ok(at.get('compute_tray')! - at.get('bmc_tray')! >= 900, 'pushes are pushDelayS apart');
        assert.ok(at.get('on')! - at.get('reset')! >= 900, 'the host waits acStabilizeS after the AC cycle');

        assert.equal(result.status, 'updated');
        assert.deepEqual(
          result.components.map((c) => `${c.id} ${c.from}->${c.installed} ${c.status} ${c.code}`),
          [
            'EROT 1.5->1.5 skipped SKIPPED_COMPLIANT',
            'BMC 1.0->2.0 updated SUCCESS',
            'BIOS 2.0->3.0 updated SUCCESS',
            'CPLD 6->7 updated SUCCESS',
          ],
        );
        const memo = await memoOf(handle);
        assert.deepEqual(memo.result, result);
        assert.equal(memo.progress?.stage, 'done');
        assert.ok(memo.timeline?.stages.every((s) => s.status === 'completed'));
      });
    });

    it(`a cancelled update waits for its running activity; one that times out instead of stopping (its satellite \
cut off) ends the job cancelled, not failed`, async () => {
      const jobId = 'fw-cancel-cut-off';
      let started = false;
      let sawCancel = false;
      const activities = {
        ...bmcFirmware({ [jobId]: [{ id: 'BMC', version: '1' }] }),
        // Heartbeats until it is told of the cancel, then goes quiet without stopping, as one whose satellite lost
        // Temporal does: the server times it out.
        applyFirmware: async () => {
          const ctx = Context.current();
          started = true;
          while (!ctx.cancellationSignal.aborted) {
            ctx.heartbeat();
            await sleep(200);
          }
          sawCancel = true;
          await sleep(4_000);
          throw new Error('the satellite came back too late');
        },
      };
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof deviceFirmwareUpdateV2>('deviceFirmwareUpdateV2', {
          taskQueue,
          workflowId: jobId,
          args: [
            {
              ...input(jobId, 'power_shelf', [step('bmc', [{ id: 'BMC', version: '2' }])]),
              activity: { ...activity, heartbeatTimeoutS: 2 },
            },
          ],
        });
        await eventually(() => started, 'the update runs');
        await handle.cancel();
        await assert.rejects(
          handle.result(),
          (err: Error) => (err.cause as Error | undefined)?.name === 'CancelledFailure',
        );
        const described = await handle.describe();
        assert.equal(described.status.name, 'CANCELLED');
        assert.ok(sawCancel, 'the activity was told of the cancel');
        const events = (await handle.fetchHistory()).events!;
        assert.ok(
          events.some((e) => e.activityTaskTimedOutEventAttributes),
          'the activity timed out after the cancel',
        );
        assert.equal((await memoOf(handle)).error?.code, 'CANCELLED');
      });
    });

    it(`a push refused with a typed error stops the manifest there: what was staged is activated and verified, \
the rest fails with the RMS code, and the job fails`, async () => {
      const installed = {
        'fw-fails': [
          { id: 'BMC', version: '1' },
          { id: 'PSU', version: '1' },
          { id: 'FAN', version: '1' },
        ],
      };
      const steps = [
        step('bmc', [{ id: 'BMC', version: '2' }]),
        step('psu', [{ id: 'PSU', version: '2' }]),
        step('fan', [{ id: 'FAN', version: '2' }]),
      ];
      const mocks = bmcFirmware(installed);
      const { activities, calls } = recordedFw({
        ...mocks,
        pushFirmware: async (i: PushFirmwareInput) => {
          if (i.step.name === 'psu') throw activityError('TARGET_NOT_FOUND', 'no PSU target on this BMC');
          return mocks.pushFirmware(i);
        },
      });
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof deviceFirmwareUpdateV2>('deviceFirmwareUpdateV2', {
          taskQueue,
          workflowId: 'fw-fails',
          args: [input('fw-fails', 'power_shelf', steps)],
        });
        const failure = await failureOf(handle);

        // A power shelf activates with a BMC reset; the step after the refused one is never pushed.
        assert.deepEqual(trace(calls), [
          'readFirmwareInventory',
          'push bmc #0',
          'awaitFirmwareTask',
          'push psu #0',
          'resetBmc',
          'readFirmwareInventory',
        ]);
        assert.equal(failure.type, 'FIRMWARE_UPDATE_FAILED');
        const result = failure.details?.[0] as DeviceFirmwareResult;
        assert.equal(result.status, 'failed');
        assert.deepEqual(
          result.components.map((c) => `${c.id} ${c.status} ${c.code} ${c.message ?? ''}`.trim()),
          [
            'BMC updated SUCCESS',
            'PSU failed TARGET_NOT_FOUND psu: no PSU target on this BMC',
            'FAN failed TARGET_NOT_FOUND not reached: psu: no PSU target on this BMC',
          ],
        );
        const memo = await memoOf(handle);
        assert.equal(memo.error?.code, 'FIRMWARE_UPDATE_FAILED');
        assert.deepEqual(memo.result, result);
        assert.deepEqual(
          memo.timeline?.stages.map((s) => `${s.name}:${s.status}`),
          [
            'check_inventory:completed',
            'fetch_artifacts:completed',
            'update:failed',
            'activate:completed',
            'verify:failed',
          ],
        );
      });
    });
  });

  describe('firmwareCampaign', () => {
    const manifest = { steps: [step('shelf', [{ id: 'PSU', version: '2' }])], expectedInventory: [] };
    const shelf = (deviceId: string, rackId: string): CampaignDeviceInput => ({
      deviceId,
      jobId: deviceId,
      rackId,
      powerDomain: `${rackId}-pd`,
      nodeType: 'powershelf_gb200_liteon',
      manifestId: 'm1',
      target: bmc(deviceId, 'powershelf_gb200_liteon'),
      role: 'power_shelf',
    });
    const policy: CampaignPolicy = {
      canarySize: 0,
      autoApprove: true,
      waveSize: 50,
      maxConcurrentPerSite: 10,
      maxConcurrentPerRack: 10,
      maxConcurrentPerPowerDomain: 10,
      failureBudget: 2,
      force: false,
    };
    const campaign = (jobId: string, devices: CampaignDeviceInput[], p: Partial<CampaignPolicy> = {}) => {
      const full = { ...policy, ...p };
      return {
        jobId,
        siteId: 'site-1',
        policy: full,
        devices,
        manifests: { m1: manifest },
        waves: buildWaves(devices, full.canarySize, full.waveSize),
        windows: [],
        timings,
        switchTimings: defaultSwitchFirmwareTimings,
        activity,
        historyBudget: 10_000,
      } satisfies FirmwareCampaignInput;
    };
    const outdated = (devices: CampaignDeviceInput[]) =>
      Object.fromEntries(devices.map((d) => [d.deviceId, [{ id: 'PSU', version: '1' }]]));
    const pushed = (calls: Call[]) =>
      calls.filter((c) => c.activity === 'pushFirmware').map((c) => (c.input['target'] as BmcTarget).deviceId);

    it('never runs more devices than the site and rack caps allow, and updates every device once', async () => {
      const devices = [
        ...['a1', 'a2', 'a3', 'a4'].map((id) => shelf(`cap-${id}`, 'rack-a')),
        ...['b1', 'b2'].map((id) => shelf(`cap-${id}`, 'rack-b')),
      ];
      // A device runs from its first inventory read to its last (the verification).
      const reads = new Map<string, number>();
      const running = new Set<string>();
      let maxSite = 0;
      let maxRackA = 0;
      const mocks = bmcFirmware(outdated(devices), { holdMs: 1_000 });
      const { activities, calls } = recordedFw({
        ...mocks,
        readFirmwareInventory: async (i: { target: BmcTarget }) => {
          const id = i.target.deviceId;
          reads.set(id, (reads.get(id) ?? 0) + 1);
          if (reads.get(id) === 1) running.add(id);
          maxSite = Math.max(maxSite, running.size);
          maxRackA = Math.max(maxRackA, [...running].filter((x) => x.startsWith('cap-a')).length);
          const reading = await mocks.readFirmwareInventory(i);
          if (reads.get(id) === 2) running.delete(id);
          return reading;
        },
      });
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof firmwareCampaign>('firmwareCampaign', {
          taskQueue,
          workflowId: 'campaign-caps',
          args: [campaign('campaign-caps', devices, { maxConcurrentPerSite: 3, maxConcurrentPerRack: 2 })],
        });
        const result = await handle.result();

        assert.deepEqual(result, { devices: 6, succeeded: 6, skipped: 0, failed: 0 });
        assert.equal(maxSite, 3, 'the site cap is reached, never passed');
        assert.equal(maxRackA, 2, 'the rack cap is reached, never passed');
        assert.deepEqual(pushed(calls).sort(), devices.map((d) => d.deviceId).sort());
        // A campaign's child starts with a memo showing the update: 20 events (workflows/README.md), its result
        // and timeline still in its memo at the end.
        for (const d of devices) {
          const child = t.client.workflow.getHandle(d.jobId);
          assert.equal((await child.fetchHistory()).events?.length, 20, `${d.jobId} history`);
          const childMemo = await memoOf(child);
          assert.equal(childMemo.result?.['status'], 'updated');
          assert.deepEqual(
            childMemo.timeline?.stages.map((s) => s.status),
            ['completed', 'completed', 'completed', 'completed', 'completed'],
          );
        }
        const memo = await memoOf(handle);
        assert.deepEqual(memo.result, result);
        assert.equal(memo.progress?.stage, 'done');
      });
    });

    it(`failures beyond the budget pause the campaign before the next device; resume resets the budget and the \
campaign ends failed with its counts`, async () => {
      const devices = ['d1', 'd2', 'd3', 'd4'].map((id) => shelf(`budget-${id}`, 'rack-a'));
      const { activities, calls } = recordedFw(
        bmcFirmware(outdated(devices), { failTask: ['budget-d1', 'budget-d2'] }),
      );
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof firmwareCampaign>('firmwareCampaign', {
          taskQueue,
          workflowId: 'campaign-budget',
          args: [campaign('campaign-budget', devices, { maxConcurrentPerSite: 1, failureBudget: 1 })],
        });
        await eventually(async () => (await memoOf(handle)).progress?.stage === 'paused', 'the campaign pauses');
        const status = await handle.query<CampaignProgress>('status');
        assert.deepEqual(status.outcomes, { 'budget-d1': 'failed', 'budget-d2': 'failed' });
        assert.equal(status.pauseReason, 'failure budget exceeded (2 > 1); resume to continue');
        await sleep(1_000);
        assert.deepEqual(pushed(calls), ['budget-d1', 'budget-d2'], 'nothing starts while paused');

        await handle.signal('resume');
        const failure = await failureOf(handle);
        assert.equal(failure.type, 'CAMPAIGN_FAILED');
        assert.equal(failure.message, 'Campaign complete: 2/4 succeeded, 2 failed');
        assert.deepEqual(failure.details?.[0], { devices: 4, succeeded: 2, skipped: 0, failed: 2 });
        assert.deepEqual(pushed(calls), ['budget-d1', 'budget-d2', 'budget-d3', 'budget-d4']);
        assert.equal((await memoOf(handle)).error?.code, 'CAMPAIGN_FAILED');
      });
    });

    it(`a cancelled campaign ends after its running devices have: each ends cancelled by its own workflow, the \
queued one never starts`, async () => {
      const devices = ['x1', 'x2', 'x3'].map((id) => shelf(`cancel-${id}`, 'rack-a'));
      const { activities, calls } = recordedFw(bmcFirmware(outdated(devices), { holdMs: 3_000 }));
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof firmwareCampaign>('firmwareCampaign', {
          taskQueue,
          workflowId: 'campaign-cancel',
          args: [campaign('campaign-cancel', devices, { maxConcurrentPerSite: 2 })],
        });
        await eventually(() => pushed(calls).length === 2, 'two devices are flashing');
        await handle.cancel();
        await assert.rejects(
          handle.result(),
          (err: Error) => (err.cause as Error | undefined)?.name === 'CancelledFailure',
        );

        const campaignClosed = (await handle.describe()).closeTime!.getTime();
        for (const id of ['cancel-x1', 'cancel-x2']) {
          const child = await t.client.workflow.getHandle(id).describe();
          assert.equal(child.status.name, 'CANCELLED', `${id} status`);
          assert.ok(
            child.closeTime!.getTime() <= campaignClosed,
            `${id} closed ${child.closeTime!.toISOString()}, the campaign ${new Date(campaignClosed).toISOString()}`,
          );
        }
        await assert.rejects(t.client.workflow.getHandle('cancel-x3').describe(), /not found/i);
        assert.deepEqual(pushed(calls).sort(), ['cancel-x1', 'cancel-x2']);
        // The memo's last word is the cancelled campaign with its counts: nothing shows as running any more.
        const { progress } = await memoOf(handle);
        assert.equal(progress?.stage, 'cancelled');
        assert.match(progress?.message ?? '', /^0\/3 done .*, 0 running$/);
      });
    });

    it('a campaign cancelled while paused shows as cancelled, not paused, at its end', async () => {
      const devices = ['p1', 'p2'].map((id) => shelf(`paused-${id}`, 'rack-a'));
      const { activities, calls } = recordedFw(bmcFirmware(outdated(devices), { failTask: ['paused-p1'] }));
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof firmwareCampaign>('firmwareCampaign', {
          taskQueue,
          workflowId: 'campaign-paused-cancel',
          args: [campaign('campaign-paused-cancel', devices, { maxConcurrentPerSite: 1, failureBudget: 0 })],
        });
        await eventually(async () => (await memoOf(handle)).progress?.stage === 'paused', 'the campaign pauses');
        await handle.cancel();
        await assert.rejects(
          handle.result(),
          (err: Error) => (err.cause as Error | undefined)?.name === 'CancelledFailure',
        );
        assert.deepEqual(pushed(calls), ['paused-p1']);
        const { progress } = await memoOf(handle);
        assert.equal(progress?.stage, 'cancelled');
        assert.match(progress?.message ?? '', /^1\/2 done \(0 updated, 0 compliant, 1 failed\), 0 running; /);
      });
    });

    it('the canary runs alone; the waves wait for approval', async () => {
      const devices = ['c1', 'c2', 'c3'].map((id) => shelf(`canary-${id}`, 'rack-a'));
      const { activities, calls } = recordedFw(bmcFirmware(outdated(devices)));
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof firmwareCampaign>('firmwareCampaign', {
          taskQueue,
          workflowId: 'campaign-canary',
          args: [campaign('campaign-canary', devices, { canarySize: 1, autoApprove: false })],
        });
        await eventually(
          async () => (await memoOf(handle)).progress?.stage === 'awaiting_approval',
          'the campaign awaits approval',
        );
        assert.deepEqual(pushed(calls), ['canary-c1']);
        assert.deepEqual((await handle.query<CampaignProgress>('status')).outcomes, { 'canary-c1': 'succeeded' });

        await handle.signal('approve');
        assert.deepEqual(await handle.result(), { devices: 3, succeeded: 3, skipped: 0, failed: 0 });
        assert.deepEqual(pushed(calls).sort(), ['canary-c1', 'canary-c2', 'canary-c3']);
      });
    });

    it('a history past its budget continues as new, carrying the outcomes: no device runs twice', async () => {
      const devices = ['n1', 'n2', 'n3', 'n4'].map((id) => shelf(`can-${id}`, 'rack-a'));
      const { activities, calls } = recordedFw(bmcFirmware(outdated(devices)));
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof firmwareCampaign>('firmwareCampaign', {
          taskQueue,
          workflowId: 'campaign-can',
          args: [{ ...campaign('campaign-can', devices, { maxConcurrentPerSite: 1 }), historyBudget: 20 }],
        });
        assert.deepEqual(await handle.result(), { devices: 4, succeeded: 4, skipped: 0, failed: 0 });

        const first = t.client.workflow.getHandle('campaign-can', handle.firstExecutionRunId);
        assert.equal((await first.describe()).status.name, 'CONTINUED_AS_NEW');
        assert.deepEqual(pushed(calls), ['can-n1', 'can-n2', 'can-n3', 'can-n4']);
      });
    });
  });
});
