import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type {
  ActivateFirmwareInput,
  ApplyFirmwareInput,
  ApplyFirmwareResult,
  BmcTarget,
  ComponentVersion,
  FirmwareStep,
} from '@fleet/domain';
import {
  activateFirmwareWith,
  applyFirmwareWith,
  type ActivateCheckpoint,
  type ApplyCheckpoint,
  type ApplyOps,
} from '../src/activities/firmware-apply.js';
import { activityCheckpoints } from '../src/journal/action-journal.js';
import { mockEnv } from './helpers/devices.js';
import { openTestJournal } from './helpers/journal.js';

const testJournal = await openTestJournal();

// applyFirmware over fake single-purpose activities: the order of what reaches the BMC, and what a retried
// attempt does with the checkpoint its predecessor heartbeated.

const target: BmcTarget = {
  deviceId: 'tray-1',
  nodeType: 'compute_gb200_nvidia',
  bmcUrl: 'https://tray-1.bmc.test',
  credentialRef: 'bmc/default',
};

function step(name: string, id: string, version: string): FirmwareStep {
  return {
    name,
    targets: [],
    components: [{ id, version }],
    packageDigest: `sha256:${name}`,
    packageSize: 1,
    fileName: `${name}.fwpkg`,
  };
}

const steps = [step('bmc', 'BMC', '2'), step('bios', 'BIOS', '2')];
const input: ApplyFirmwareInput = {
  jobId: 'job-1',
  target,
  role: 'compute',
  steps: steps.map((s, index) => ({
    index,
    step: s,
    components: s.components.map((c) => ({ id: c.id, to: c.version })),
  })),
  force: false,
  timings: {
    taskPollS: 0.01,
    taskTimeoutS: 5,
    pushDelayS: 0.05,
    powerStateTimeoutS: 5,
    acStabilizeS: 0.05,
    bmcRecoveryS: 5,
  },
  maximumAttempts: 3,
};

const activation: ActivateFirmwareInput = { target, role: 'compute', timings: input.timings, maximumAttempts: 3 };
const activate = (env: ReturnType<typeof mockEnv>, ops: ApplyOps) =>
  env.run(activateFirmwareWith, ops, activation) as Promise<Awaited<ReturnType<typeof activateFirmwareWith>>>;
const apply = (env: ReturnType<typeof mockEnv>, ops: ApplyOps, i: ApplyFirmwareInput) =>
  env.run(applyFirmwareWith, ops, i) as Promise<ApplyFirmwareResult>;

/** Fake BMC: records every call; `task` decides each task's outcome by its URI. */
function fakeOps(
  task: (uri: string) => 'completed' | 'lost' | 'failed' = () => 'completed',
  running: ComponentVersion[] = [],
) {
  const calls: string[] = [];
  const ops: ApplyOps = {
    checkpoints: activityCheckpoints(testJournal, () => Context.current().info),
    prefetch: async (s) => void calls.push(`fetch ${s.step.name}`),
    pushFirmware: async (i) => {
      calls.push(`push ${i.step.name} g${i.generation}`);
      return { taskUri: `/tasks/${i.step.name}-${i.generation}`, adopted: false, fileName: i.step.fileName };
    },
    awaitFirmwareTask: async ({ taskUri }) => {
      calls.push(`await ${taskUri}`);
      const state = task(taskUri);
      if (state === 'failed') return { state, code: 'TASK_FAILED', message: 'flash failed' };
      return state === 'lost' ? { state, message: 'gone' } : { state, messages: [] };
    },
    readFirmwareInventory: async () => (calls.push('inventory'), { deviceId: target.deviceId, components: running }),
    awaitDevices: async () => (
      calls.push('await reachable'),
      { condition: 'reachable', met: [target.deviceId], notMet: [], elapsedS: 0 }
    ),
    readDevicePower: async () => (
      calls.push('read power'),
      { deviceId: target.deviceId, reachable: true, powerState: 'On' }
    ),
    setDevicePower: async ({ action }) => (
      calls.push(`power ${action}`),
      { deviceId: target.deviceId, action, powerState: action === 'on' ? 'On' : 'Off', resetSent: true }
    ),
    resetBmc: async () => (
      calls.push('reset bmc'),
      { deviceId: target.deviceId, manager: 'bmc', outageSeen: true, backAfterS: 1 }
    ),
  };
  return { ops, calls };
}

describe('applyFirmware and activateFirmware', () => {
  it('fetches, pushes each step and follows its task; activation: host off, AC cycle, host on, a read', async () => {
    const { ops, calls } = fakeOps();
    const beats: ApplyCheckpoint[] = [];
    const env = mockEnv();
    env.on('heartbeat', (d: ApplyCheckpoint) => beats.push(structuredClone(d)));
    const result = await apply(env, ops, input);
    assert.deepEqual(calls, [
      'fetch bmc',
      'fetch bios',
      'push bmc g0',
      'await /tasks/bmc-0',
      'push bios g0',
      'await /tasks/bios-0',
    ]);
    assert.deepEqual(
      result.steps.map((s) => `${s.index} ${s.outcome} ${s.pushes}`),
      ['0 staged 1', '1 staged 1'],
    );
    calls.length = 0;
    const activated = await activate(mockEnv(), ops);
    assert.deepEqual(calls, ['read power', 'power force-off', 'reset bmc', 'power on', 'inventory']);
    assert.ok(Date.parse(activated.activate.finishedAt) >= Date.parse(activated.activate.startedAt));
    // The task URI is checkpointed before the task is followed: a retry would monitor it, not push again.
    assert.ok(beats.some((b) => b.current?.index === 0 && b.current.taskUri === '/tasks/bmc-0'));
  });

  it('a retry whose predecessor saw the push accepted follows that task and never pushes it again', async () => {
    const { ops, calls } = fakeOps();
    const prior: ApplyCheckpoint = {
      steps: [{ index: 0, outcome: 'staged', pushes: 1 }],
      fetch: { startedAt: '2026-01-01T00:00:00.000Z', finishedAt: '2026-01-01T00:00:01.000Z' },
      updateStartedAt: '2026-01-01T00:00:01.000Z',
      current: { index: 1, generation: 0, taskUri: '/tasks/bios-0', pushes: 1 },
    };
    const result = await apply(mockEnv({ heartbeatDetails: prior, attempt: 2 }), ops, input);
    assert.deepEqual(calls.slice(0, 1), ['await /tasks/bios-0']);
    assert.ok(!calls.some((c) => c.startsWith('push') || c.startsWith('fetch')), calls.join(', '));
    assert.deepEqual(
      result.steps.map((s) => `${s.index} ${s.outcome}`),
      ['0 staged', '1 staged'],
    );
  });

  it('a retry during activation remembers the host was on: not powered off again, and powered on', async () => {
    const { ops, calls } = fakeOps();
    const prior: ActivateCheckpoint = {
      activation: { startedAt: '2026-01-01T00:00:02.000Z', wasOn: true, phase: 'reset' },
    };
    const env = mockEnv({ heartbeatDetails: prior, attempt: 2 });
    await env.run(activateFirmwareWith, ops, activation);
    assert.deepEqual(calls, ['reset bmc', 'power on', 'inventory']);
  });

  it('a retry whose heartbeats never reached Temporal (the site cut off) still knows the host was on', async () => {
    const { ops, calls } = fakeOps();
    const activity = { workflowExecution: { workflowId: 'wf-cut', runId: 'run-1' }, activityId: '4' };
    // Attempt 1 switches the host off, then dies in the BMC reset; none of its heartbeats arrived.
    const dying: ApplyOps = {
      ...ops,
      resetBmc: async () => {
        calls.push('reset bmc (lost)');
        throw new Error('link cut');
      },
    };
    await assert.rejects(mockEnv({ ...activity, attempt: 1 }).run(activateFirmwareWith, dying, activation));
    calls.length = 0;
    await mockEnv({ ...activity, attempt: 2 }).run(activateFirmwareWith, ops, activation);
    assert.deepEqual(calls, ['reset bmc', 'power on', 'inventory'], 'not read as off and left so');
  });

  it('a lost task is pushed again under the next generation, unless the device already runs the target', async () => {
    const lostOnce = fakeOps((uri) => (uri === '/tasks/bmc-0' ? 'lost' : 'completed'));
    await apply(mockEnv(), lostOnce.ops, { ...input, steps: input.steps.slice(0, 1) });
    assert.deepEqual(lostOnce.calls.slice(1, 6), [
      'push bmc g0',
      'await /tasks/bmc-0',
      'await reachable',
      'inventory',
      'push bmc g1',
    ]);

    const selfActivated = fakeOps(() => 'lost', [{ id: 'BMC', version: '2' }]);
    const result = await apply(mockEnv(), selfActivated.ops, {
      ...input,
      steps: input.steps.slice(0, 1),
    });
    assert.deepEqual(result.steps, [{ index: 0, outcome: 'self_activated', pushes: 1 }]);
  });

  it('a refused push ends the manifest there with its RMS code, after the staged steps', async () => {
    const { ops, calls } = fakeOps();
    const refusing: ApplyOps = {
      ...ops,
      pushFirmware: async (i) => {
        if (i.step.name === 'bios')
          throw ApplicationFailure.create({ type: 'TARGET_NOT_FOUND', message: 'no BIOS target', nonRetryable: true });
        return ops.pushFirmware(i);
      },
    };
    const result = await apply(mockEnv(), refusing, input);
    assert.deepEqual(result.steps, [
      { index: 0, outcome: 'staged', pushes: 1 },
      { index: 1, outcome: 'failed', code: 'TARGET_NOT_FOUND', message: 'no BIOS target', pushes: 0 },
    ]);
    assert.ok(!calls.includes('reset bmc'), "activation is the workflow's next activity");
  });

  it('a retryable error on an attempt before the last is thrown: Temporal retries from the checkpoint', async () => {
    const { ops } = fakeOps();
    const flaky: ApplyOps = {
      ...ops,
      awaitFirmwareTask: async () => {
        throw ApplicationFailure.create({ type: 'UNAVAILABLE', message: 'BMC busy' });
      },
    };
    await assert.rejects(apply(mockEnv({ attempt: 1 }), flaky, input), /BMC busy/);
    const last = await apply(mockEnv({ attempt: 3 }), flaky, input);
    assert.deepEqual(
      last.steps.map((s) => `${s.outcome} ${s.code}`),
      ['failed SERVER_ERROR'],
    );
  });
});
