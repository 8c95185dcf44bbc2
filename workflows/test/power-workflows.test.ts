import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/client';
import {
  coldRebootStages,
  type AwaitDevicesResult,
  type BmcTarget,
  type ColdRebootInput,
  type ColdRebootTimings,
  type DevicePowerInput,
  type DevicePowerResult,
  type NvosTarget,
  type NvueHelloResult,
  type PowerAction,
  type RackPowerInput,
  type RackTargets,
} from '@fleet/domain';
import type { devicePower, rackColdReboot, rackPower } from '../src/index.js';
import {
  activity,
  activityError,
  bmc,
  endedCancelled,
  eventually,
  failureOf,
  gate,
  memoOf,
  recorded,
  startWorkflowTestEnv,
  type Call,
  type WorkflowTestEnv,
} from './workflow-test-env.js';

// Power workflows with mocked satellite activities (timers shortened through the inputs: workflow-test-env.ts).

const targets: RackTargets = {
  shelves: [bmc('ps-1', 'powershelf_gb200_liteon'), bmc('ps-2', 'powershelf_gb200_liteon')],
  switches: [bmc('sw-1', 'switch_gb200_nvidia'), bmc('sw-2', 'switch_gb200_nvidia')],
  compute: [bmc('ct-1', 'compute_gb200_nvidia'), bmc('ct-2', 'compute_gb200_nvidia')],
};
const classOf = (id: string) => (id.startsWith('ps-') ? 'shelves' : id.startsWith('sw-') ? 'switches' : 'compute');
const nvos = (deviceId: string): NvosTarget => ({
  deviceId,
  nvueUrl: `https://${deviceId}.nvos.test`,
  ssh: { host: `${deviceId}.nvos.test`, port: 22 },
  credentialRef: 'nvos/default',
});

type PowerCall = { target: BmcTarget; action: PowerAction; settleTimeoutS: number };
const settled = ({ target, action }: PowerCall): DevicePowerResult => ({
  deviceId: target.deviceId,
  action,
  powerState: action === 'on' ? 'On' : 'Off',
  resetSent: true,
});

/** The calls as runbook steps: one line per batch of power calls to one class, per wait, per NVUE hello round. */
function trace(calls: Call[]): string[] {
  const steps: { label: string; batch?: string; devices: string[] }[] = [];
  for (const { activity: name, input } of calls) {
    if (name === 'setDevicePower') {
      const id = (input['target'] as BmcTarget).deviceId;
      const batch = `${String(input['action'])} ${classOf(id)}`;
      const last = steps.at(-1);
      if (last?.batch === batch) last.devices.push(id);
      else steps.push({ label: `power ${String(input['action'])}`, batch, devices: [id] });
    } else {
      const label = name === 'awaitDevices' ? `await ${String(input['condition'])}` : name;
      steps.push({ label, devices: (input['targets'] as { deviceId: string }[]).map((x) => x.deviceId) });
    }
  }
  return steps.map(({ label, devices }) => `${label} ${devices.sort().join(',')}`);
}

describe('power workflows with mocked activities', () => {
  let t: WorkflowTestEnv;
  before(async () => (t = await startWorkflowTestEnv()), { timeout: 120_000 });
  after(() => t?.teardown());

  describe('devicePower', () => {
    const input = (deviceId: string): DevicePowerInput => ({
      jobId: `power-${deviceId}`,
      target: bmc(deviceId, 'compute_gb200_nvidia'),
      action: 'off',
      settleTimeoutS: 5,
      activity: { ...activity, maximumAttempts: 3 },
    });

    it('retries a transient failure of the power activity but not a typed refusal, which fails the job', async () => {
      const attempts = new Map<string, number>();
      const { activities, calls } = recorded({
        setDevicePower: async (call: PowerCall) => {
          const n = (attempts.get(call.target.deviceId) ?? 0) + 1;
          attempts.set(call.target.deviceId, n);
          if (call.target.deviceId === 'refuses') throw ApplicationFailure.create({ type: 'FAILED_PRECONDITION' });
          if (n === 1) throw ApplicationFailure.create({ type: 'UNAVAILABLE', message: 'BMC busy' });
          return settled(call);
        },
      });
      await t.withWorker(activities, async (taskQueue) => {
        const flaky = await t.client.workflow.start<typeof devicePower>('devicePower', {
          taskQueue,
          workflowId: 'power-flaky',
          args: [input('flaky')],
        });
        const refuses = await t.client.workflow.start<typeof devicePower>('devicePower', {
          taskQueue,
          workflowId: 'power-refuses',
          args: [input('refuses')],
        });

        const result = { deviceId: 'flaky', action: 'off', powerState: 'Off', resetSent: true };
        assert.deepEqual(await flaky.result(), result);
        assert.deepEqual(await memoOf(flaky), { progress: { stage: 'done', percent: 100 }, result });
        const flakyCalls = calls.filter((c) => (c.input['target'] as BmcTarget).deviceId === 'flaky');
        assert.equal(flakyCalls.length, 2, 'UNAVAILABLE is retried');
        for (const c of flakyCalls)
          assert.deepEqual(c.input, { target: input('flaky').target, action: 'off', settleTimeoutS: 5 });

        // FAILED_PRECONDITION is in the workflow's non-retryable types although the activity did not mark it so.
        const failure = await failureOf(refuses);
        assert.equal(failure.type, 'FAILED_PRECONDITION');
        assert.equal(attempts.get('refuses'), 1);
        const memo = await memoOf(refuses);
        assert.equal(memo.error?.code, 'FAILED_PRECONDITION');
        assert.equal(memo.result, undefined);
      });
    });

    it('cancelled while the power activity runs: the job ends cancelled and never reports success', async () => {
      const held = gate();
      const { activities, calls } = recorded({
        setDevicePower: async (call: PowerCall) => (await held.opened, settled(call)),
      });
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof devicePower>('devicePower', {
          taskQueue,
          workflowId: 'power-cancelled',
          args: [input('cancelled')],
        });
        try {
          await eventually(() => calls.length === 1, 'the power activity runs');
          await handle.cancel();
          assert.equal(await endedCancelled(handle), true);
        } finally {
          held.open(); // the activity completes after the cancellation: too late to count
        }
        const memo = await memoOf(handle);
        assert.deepEqual(memo.error, { code: 'CANCELLED', message: 'the job was cancelled' });
        assert.equal(memo.result, undefined);
        assert.equal((await handle.describe()).status.name, 'CANCELLED');
      });
    });
  });

  describe('rackPower', () => {
    const input = (op: RackPowerInput['op']): RackPowerInput => ({
      jobId: `rack-${op}`,
      rackId: 'rack-1',
      op,
      targets,
      settleTimeoutS: 5,
      activity,
    });

    it('cycle: compute, switches, shelves off, then shelves, switches, compute on, one class at a time', async () => {
      const running = new Set<string>();
      const overlaps: string[] = [];
      const { activities, calls } = recorded({
        setDevicePower: async (call: PowerCall) => {
          const id = call.target.deviceId;
          for (const other of running) if (classOf(other) !== classOf(id)) overlaps.push(`${id} while ${other}`);
          running.add(id);
          await new Promise((r) => setTimeout(r, 100));
          running.delete(id);
          return settled(call);
        },
      });
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof rackPower>('rackPower', {
          taskQueue,
          workflowId: 'rack-cycle',
          args: [input('cycle')],
        });
        const result = await handle.result();

        assert.deepEqual(trace(calls), [
          'power off ct-1,ct-2',
          'power off sw-1,sw-2',
          'power off ps-1,ps-2',
          'power on ps-1,ps-2',
          'power on sw-1,sw-2',
          'power on ct-1,ct-2',
        ]);
        assert.deepEqual(overlaps, [], 'a class starts only once the one before it has settled');
        const memo = await memoOf(handle);
        assert.deepEqual(memo.result, { op: 'cycle', devices: 6 });
        assert.deepEqual(memo.devices, result.devices);
        for (const id of ['ps-1', 'ps-2', 'sw-1', 'sw-2', 'ct-1', 'ct-2'])
          assert.deepEqual(memo.devices?.[id], { state: 'succeeded', powerState: 'On' }, id);
        assert.deepEqual(
          memo.timeline?.stages.map((s) => `${s.name}:${s.status}`),
          ['compute', 'switches', 'shelves']
            .map((c) => `power_off_${c}:completed`)
            .concat(['shelves', 'switches', 'compute'].map((c) => `power_on_${c}:completed`)),
        );
        assert.equal(memo.progress?.percent, 100);
      });
    });

    it('on: a switch that fails stops the sequence at the switches; compute is never powered', async () => {
      const { activities, calls } = recorded({
        setDevicePower: async (call: PowerCall) => {
          if (call.target.deviceId === 'sw-2') throw activityError('FAILED_PRECONDITION', 'sw-2 BMC refuses On');
          return settled(call);
        },
      });
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof rackPower>('rackPower', {
          taskQueue,
          workflowId: 'rack-on-fails',
          args: [input('on')],
        });
        const failure = await failureOf(handle);

        assert.equal(failure.type, 'STAGE_FAILED');
        assert.equal(failure.message, '1/2 switches failed to on; sequence stopped');
        assert.deepEqual(trace(calls), ['power on ps-1,ps-2', 'power on sw-1,sw-2']);
        const memo = await memoOf(handle);
        assert.deepEqual(memo.error?.details, { stage: 'power_on_switches', devices: ['sw-2'] });
        assert.deepEqual(
          memo.timeline?.stages.map((s) => `${s.name}:${s.status}`),
          ['power_on_shelves:completed', 'power_on_switches:failed', 'power_on_compute:queued'],
        );
        const devices = memo.devices ?? {};
        assert.deepEqual(devices['ps-1'], { state: 'succeeded', powerState: 'On' });
        assert.deepEqual(devices['sw-1'], { state: 'succeeded', powerState: 'On' });
        assert.deepEqual(devices['sw-2'], {
          state: 'failed',
          error: { code: 'FAILED_PRECONDITION', message: 'sw-2 BMC refuses On' },
        });
        for (const id of ['ct-1', 'ct-2'])
          assert.deepEqual(devices[id], {
            state: 'cancelled',
            message: 'not reached: the sequence stopped at power_on_switches',
          });
      });
    });
  });

  describe('rackColdReboot', () => {
    const timings: ColdRebootTimings = {
      prestageShutdownFloorS: 0,
      prestageShutdownPollMaxS: 5,
      dischargeFloorS: 1,
      dischargePollMaxS: 5,
      bmcUpFloorS: 0,
      bmcUpPollMaxS: 5,
      nvosHelloBackoffS: 1,
      nvosHelloAttempts: 3,
      computeBootWaitS: 1,
      pollIntervalS: 1,
    };
    const input: ColdRebootInput = {
      jobId: 'cold-reboot',
      rackId: 'rack-1',
      targets: { ...targets, switchNvos: [nvos('sw-1'), nvos('sw-2')] },
      timings,
      settleTimeoutS: 5,
      activity,
    };
    type AwaitCall = { targets: BmcTarget[]; condition: AwaitDevicesResult['condition'] };
    const allMet = ({ targets: ts, condition }: AwaitCall): AwaitDevicesResult => ({
      condition,
      met: ts.map((x) => x.deviceId),
      notMet: [],
      elapsedS: 0,
    });
    const upToDischarge = [
      'power off ct-1,ct-2',
      'await off ct-1,ct-2',
      'power off ps-1,ps-2',
      'await unreachable ct-1,ct-2,sw-1,sw-2',
    ];

    it('runs coldRebootStages in order; a switch NVUE misses is asked again after the backoff', async () => {
      const hellos: number[] = [];
      const { activities, calls } = recorded({
        setDevicePower: async (call: PowerCall) => settled(call),
        awaitDevices: async (call: AwaitCall) => allMet(call),
        nvueHello: async ({ targets: ts }: { targets: NvosTarget[] }): Promise<NvueHelloResult> => {
          hellos.push(Date.now());
          const late = hellos.length === 1 ? ['sw-2'] : [];
          return {
            answered: ts.map((x) => x.deviceId).filter((id) => !late.includes(id)),
            failed: late.map((deviceId) => ({
              deviceId,
              error: { type: 'UNAVAILABLE', message: 'NVUE not up yet' },
              permanent: false,
            })),
          };
        },
      });
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof rackColdReboot>('rackColdReboot', {
          taskQueue,
          workflowId: 'cold-reboot-ok',
          args: [input],
        });
        const result = await handle.result();

        assert.deepEqual(trace(calls), [
          ...upToDischarge,
          'power on ps-1,ps-2',
          'await reachable ct-1,ct-2,sw-1,sw-2',
          'nvueHello sw-1,sw-2',
          'nvueHello sw-2',
          'power on ct-1,ct-2',
        ]);
        const waits = calls.filter((c) => c.activity === 'awaitDevices').map((c) => c.input['maxWaitS']);
        assert.deepEqual(waits, [5, 5, 5]);
        assert.ok(hellos[1]! - hellos[0]! >= 900, 'the second hello waits the 1 s backoff');

        const memo = await memoOf(handle);
        const stages = memo.timeline?.stages ?? [];
        assert.deepEqual(
          stages.map((s) => s.name),
          [...coldRebootStages],
        );
        assert.deepEqual(
          stages.map((s) => s.status),
          coldRebootStages.map(() => 'completed'),
        );
        for (const [i, s] of stages.entries())
          if (i > 0) assert.ok(s.startedAt! >= stages[i - 1]!.finishedAt!, `${s.name} starts after its predecessor`);
        assert.ok(stages.at(-1)!.durationS! >= 1, 'wait_compute_boot waits computeBootWaitS');
        assert.deepEqual(memo.result, { devices: 6 });
        assert.deepEqual(memo.devices, result.devices);
        assert.deepEqual(result.devices?.['sw-2'], { state: 'succeeded', message: 'NVUE answered (attempt 2)' });
        assert.ok(Object.values(result.devices ?? {}).every((d) => d.state === 'succeeded'));
      });
    });

    it('a device still reachable after the discharge wait fails verify_discharged; no later stage runs', async () => {
      const { activities, calls } = recorded({
        setDevicePower: async (call: PowerCall) => settled(call),
        awaitDevices: async (call: AwaitCall): Promise<AwaitDevicesResult> =>
          call.condition !== 'unreachable'
            ? allMet(call)
            : {
                condition: call.condition,
                met: ['ct-1', 'ct-2', 'sw-1'],
                notMet: [{ deviceId: 'sw-2', last: { reachable: true, powerState: 'Off' } }],
                elapsedS: 5,
              },
        nvueHello: async () => assert.fail('verify_nvos_ready must not run'),
      });
      await t.withWorker(activities, async (taskQueue) => {
        const handle = await t.client.workflow.start<typeof rackColdReboot>('rackColdReboot', {
          taskQueue,
          workflowId: 'cold-reboot-discharge-fails',
          args: [input],
        });
        const failure = await failureOf(handle);

        assert.equal(failure.type, 'STAGE_FAILED');
        assert.equal(failure.message, 'verify_discharged: 1/4 devices not unreachable after 5s');
        assert.deepEqual(trace(calls), upToDischarge);
        const memo = await memoOf(handle);
        assert.deepEqual(memo.error?.details, { stage: 'verify_discharged', devices: ['sw-2'] });
        const failedAt = coldRebootStages.indexOf('verify_discharged');
        assert.deepEqual(
          memo.timeline?.stages.map((s) => s.status),
          coldRebootStages.map((_, i) => (i < failedAt ? 'completed' : i === failedAt ? 'failed' : 'queued')),
        );
        const devices = memo.devices ?? {};
        assert.equal(devices['sw-2']?.state, 'failed');
        assert.equal(Object.keys(devices).length, 6);
        for (const id of ['ct-1', 'ct-2', 'ps-1', 'ps-2', 'sw-1'])
          assert.deepEqual(
            [devices[id]?.state, devices[id]?.message],
            ['cancelled', 'not reached: the reboot stopped at verify_discharged'],
            id,
          );
      });
    });
  });
});
