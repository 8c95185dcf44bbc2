import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { MockActivityEnvironment } from '@temporalio/testing';
import { pino } from 'pino';
import type { BmcTarget, DevicePowerResult } from '@fleet/domain';
import { startRedfishSimulator, type RedfishSimulator } from '@fleet/simulators';
import { createPowerActivities } from '../src/activities/power.js';
import { SettleTimes } from '../src/activities/settle-times.js';
import type { DeviceActivityDeps } from '../src/activities/context.js';
import type { SecretStore } from '../src/secrets/index.js';
import { UnknownCredentialError } from '../src/secrets/index.js';
import { mockEnv } from './helpers/devices.js';
import { openTestJournal } from './helpers/journal.js';

const testJournal = await openTestJournal();

const secrets: SecretStore = {
  resolve: async (ref) => {
    if (ref === 'bmc/good') return { username: 'admin', password: 'sekret' };
    if (ref === 'bmc/wrong') return { username: 'admin', password: 'nope' };
    throw new UnknownCredentialError(ref);
  },
};

/**
 * A Redfish simulator with these BMCs (on or off as `powerState` says), started before the suite's tests and closed
 * after them, and the power activity over it with `deps` added to the test's own.
 */
function powerSuite(opts: {
  ids: string[];
  powerState: (id: string) => 'On' | 'Off';
  timeScale: number;
  deps?: Pick<DeviceActivityDeps, 'settleTimes' | 'onSettled'>;
}) {
  let sim: RedfishSimulator | undefined;
  const block = `127.${randomInt(2, 250)}.${randomInt(0, 250)}`;
  const port = 20_000 + randomInt(0, 20_000);
  const activities = createPowerActivities({
    secrets,
    log: pino({ level: 'silent' }),
    pollIntervalMs: 20,
    journal: testJournal,
    redfish: { connectTimeoutMs: 1_000, requestTimeoutMs: 2_000 },
    ...opts.deps,
  });
  before(async () => {
    sim = await startRedfishSimulator({
      bmcs: opts.ids.map((id, i) => ({
        id,
        address: `${block}.${i + 1}`,
        port,
        username: 'admin',
        password: 'sekret',
        powerState: opts.powerState(id),
      })),
      timeScale: opts.timeScale,
    });
  });
  after(() => sim?.close());
  const suite = {
    block,
    port,
    get sim(): RedfishSimulator {
      if (!sim) throw new Error('the simulator starts before the first test');
      return sim;
    },
    target: (id: string, credentialRef = 'bmc/good'): BmcTarget => ({
      deviceId: `dev-${id}`,
      nodeType: 'compute_gb200_nvidia',
      bmcUrl: suite.sim.bmcUrl(id),
      credentialRef,
    }),
    run: (env: MockActivityEnvironment, input: PowerInput) =>
      env.run<[PowerInput], DevicePowerResult, typeof activities.setDevicePower>(activities.setDevicePower, input),
  };
  return suite;
}

type PowerInput = Parameters<ReturnType<typeof createPowerActivities>['setDevicePower']>[0];

describe('setDevicePower activity', () => {
  const suite = powerSuite({
    ids: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'],
    powerState: (id) => (id === 'b' ? 'On' : 'Off'),
    timeScale: 0.01,
  });
  const { target, run } = suite;
  const posts = (id: string) => suite.sim.bmc(id).log.filter((r) => r.method === 'POST');

  it('powers a tray on, heartbeating, and reports the settled state', async () => {
    const env = mockEnv();
    const beats: unknown[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    const result = await run(env, { target: target('a'), action: 'on', settleTimeoutS: 10 });
    assert.deepEqual(result, { deviceId: 'dev-a', action: 'on', powerState: 'On', resetSent: true });
    assert.deepEqual(
      posts('a').map((r) => r.body),
      [{ ResetType: 'On' }],
    );
    assert.ok(beats.length >= 1);
    assert.deepEqual((beats[0] as { resetSent: boolean }).resetSent, true);
  });

  it('sends nothing when the tray is already in the asked state', async () => {
    const result = await run(mockEnv(), { target: target('b'), action: 'on', settleTimeoutS: 10 });
    assert.equal(result.resetSent, false);
    assert.equal(posts('b').length, 0);
  });

  it('a retried attempt whose heartbeat says the reset went out does not send it again', async () => {
    // "off" (graceful) on a tray that is Off already would be a no-op; use a power cycle,
    // whose effect cannot be read from the state, on a tray that is On.
    suite.sim.bmc('c').reset('On');
    await new Promise((r) => setTimeout(r, 400));
    const env = mockEnv({ heartbeatDetails: { resetSent: true, leftOn: true }, attempt: 2 });
    const result = await run(env, { target: target('c'), action: 'power-cycle', settleTimeoutS: 10 });
    assert.equal(result.powerState, 'On');
    assert.equal(posts('c').length, 0);
  });

  it('a retry whose heartbeat never reached Temporal does not send the reset again: the journal has it', async () => {
    // The attempt that sent the cycle had its heartbeat lost (the site cut off from Temporal, the process killed);
    // the next attempt of the same activity comes with no details.
    suite.sim.bmc('g').reset('On');
    await new Promise((r) => setTimeout(r, 400));
    const activity = { workflowExecution: { workflowId: 'wf-journal', runId: 'run-1' }, activityId: '7' };
    const first = await run(mockEnv(activity), { target: target('g'), action: 'power-cycle', settleTimeoutS: 10 });
    assert.equal(first.resetSent, true);
    const retry = await run(mockEnv({ ...activity, attempt: 2 }), {
      target: target('g'),
      action: 'power-cycle',
      settleTimeoutS: 10,
    });
    assert.equal(retry.powerState, 'On');
    assert.deepEqual(
      posts('g').map((r) => r.body),
      [{ ResetType: 'PowerCycle' }],
      'one cycle, as asked',
    );
    // Another activity (another run) on the same tray is a new request: it is sent.
    await run(mockEnv({ ...activity, workflowExecution: { workflowId: 'wf-journal', runId: 'run-2' } }), {
      target: target('g'),
      action: 'power-cycle',
      settleTimeoutS: 10,
    });
    assert.equal(posts('g').length, 2);
  });

  it('two attempts of one activity running at once (a late task beside its retry) send one reset', async () => {
    suite.sim.bmc('h').reset('On');
    await new Promise((r) => setTimeout(r, 400));
    const activity = { workflowExecution: { workflowId: 'wf-late', runId: 'run-1' }, activityId: '3' };
    const input = { target: target('h'), action: 'power-cycle' as const, settleTimeoutS: 10 };
    const results = await Promise.all([
      run(mockEnv({ ...activity, attempt: 1 }), input),
      run(mockEnv({ ...activity, attempt: 2 }), input),
    ]);
    assert.deepEqual(
      results.map((r) => r.powerState),
      ['On', 'On'],
    );
    assert.deepEqual(
      posts('h').map((r) => r.body),
      [{ ResetType: 'PowerCycle' }],
      'one cycle, as asked',
    );
  });

  it('maps the RMS actions to ResetType on the wire: off is a graceful shutdown', async () => {
    suite.sim.bmc('d').reset('On');
    await new Promise((r) => setTimeout(r, 400));
    const result = await run(mockEnv(), { target: target('d'), action: 'off', settleTimeoutS: 10 });
    assert.equal(result.powerState, 'Off');
    assert.deepEqual(
      posts('d').map((r) => r.body),
      [{ ResetType: 'GracefulShutdown' }],
    );
  });

  it('honours cancellation while waiting for the tray to settle', async () => {
    const env = mockEnv();
    env.on('heartbeat', () => env.cancel());
    const slow = startRedfishSimulator({
      bmcs: [{ id: 'slow', address: `${suite.block}.200`, port: suite.port, username: 'admin', password: 'sekret' }],
      timeScale: 1,
    });
    const s = await slow;
    try {
      await assert.rejects(
        run(env, {
          target: { ...target('a'), deviceId: 'dev-slow', bmcUrl: s.bmcUrl('slow') },
          action: 'on',
          settleTimeoutS: 60,
        }),
        (err: unknown) => err instanceof CancelledFailure,
      );
    } finally {
      await s.close();
    }
  });

  it(`unknown credential reference and wrong password are non-retryable, typed failures naming the \
device`, async () => {
    await assert.rejects(
      run(mockEnv(), { target: target('e', 'bmc/missing'), action: 'on', settleTimeoutS: 5 }),
      (err: unknown) =>
        err instanceof ApplicationFailure &&
        err.type === 'FAILED_PRECONDITION' &&
        err.nonRetryable &&
        /dev-e/.test(err.message),
    );
    await assert.rejects(
      run(mockEnv(), { target: target('f', 'bmc/wrong'), action: 'on', settleTimeoutS: 5 }),
      (err: unknown) =>
        err instanceof ApplicationFailure &&
        err.type === 'UNAUTHENTICATED' &&
        err.nonRetryable &&
        !/nope|sekret/.test(JSON.stringify(err)),
    );
    assert.equal(posts('e').length + posts('f').length, 0);
  });
});

describe('setDevicePower with settle times', () => {
  // Power-on takes 1.5 s here (30 s scaled by 0.05), polled every 20 ms.
  const settled: { nodeType: string; action: string; seconds: number }[] = [];
  const suite = powerSuite({
    ids: ['first', 'second', 'cycled', 'resumed', 'beating'],
    powerState: (id) => (id === 'cycled' ? 'On' : 'Off'),
    timeScale: 0.05,
    deps: {
      settleTimes: new SettleTimes(0.8),
      onSettled: (nodeType, action, seconds) => settled.push({ nodeType, action, seconds }),
    },
  });
  const run = (env: MockActivityEnvironment, id: string, action: PowerInput['action']) =>
    suite.run(env, { target: suite.target(id), action, settleTimeoutS: 30 });
  /** Reads of the system's state: the one before the reset and the settle polls. */
  const stateReads = (id: string) =>
    suite.sim.bmc(id).log.filter((r) => r.method === 'GET' && /\/Systems\/[^/]+$/.test(r.path)).length;

  it('waits most of what the last power-on of the node type took before it polls the next', async () => {
    assert.equal((await run(mockEnv(), 'first', 'on')).powerState, 'On');
    assert.equal(settled.length, 1);
    assert.deepEqual(
      { ...settled[0], seconds: undefined },
      { nodeType: 'compute_gb200_nvidia', action: 'on', seconds: undefined },
    );
    // Timed to the start of the poll that saw the tray on: that poll may leave just before the 1.5 s are up.
    assert.ok(settled[0]!.seconds >= 1.4, `settled after ${settled[0]!.seconds} s, before the tray could`);
    const unpaced = stateReads('first');
    assert.ok(unpaced >= 8, `${unpaced} reads of a tray polled every 20 ms through 1.5 s`);

    assert.equal((await run(mockEnv(), 'second', 'on')).powerState, 'On');
    const paced = stateReads('second');
    assert.ok(paced <= unpaced / 2, `${paced} reads after the wait against ${unpaced} without`);
    assert.equal(settled.length, 2);
    assert.ok(settled[1]!.seconds >= 1.4, `settled after ${settled[1]!.seconds} s, before the tray could`);
  });

  it('heartbeats through the wait as often as a short heartbeat timeout asks', async () => {
    const env = mockEnv({ heartbeatTimeoutMs: 600 });
    const beats: number[] = [];
    env.on('heartbeat', () => beats.push(performance.now()));
    assert.equal((await run(env, 'beating', 'on')).powerState, 'On');
    // The wait is at least 0.8 of the 1.5 s the first tray took; a beat every 200 ms goes through it.
    const gaps = beats.slice(1).map((at, i) => at - beats[i]!);
    assert.ok(Math.max(...gaps) < 800, `heartbeats ${Math.round(Math.max(...gaps))} ms apart at most`);
  });

  it('neither times nor delays a cycle, nor an attempt resumed after the reset went out', async () => {
    const before = settled.length;
    assert.equal((await run(mockEnv(), 'cycled', 'power-cycle')).powerState, 'On');
    // The cycle watched the host leave On: it polled from the reset on.
    assert.ok(stateReads('cycled') >= 8, `${stateReads('cycled')} reads through the cycle`);
    suite.sim.bmc('resumed').reset('On');
    const resumed = await run(mockEnv({ heartbeatDetails: { resetSent: true }, attempt: 2 }), 'resumed', 'on');
    assert.equal(resumed.powerState, 'On');
    assert.equal(settled.length, before, 'no settle recorded for either');
  });
});
