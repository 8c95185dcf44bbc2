import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { mockEnv, runActivity, startBench, type Bench } from './helpers/devices.js';

const CHASSIS_RESET = '/redfish/v1/Chassis/powershelf/Actions/Chassis.Reset';

describe('setDevicePower on every node kind', () => {
  let bench: Bench;
  before(async () => {
    bench = await startBench({
      liteon: { nodeType: 'powershelf_gb200_liteon' },
      delta: { nodeType: 'powershelf_gb300_delta' },
      switch: { nodeType: 'switch_gb200_nvidia' },
      shelf3: { nodeType: 'powershelf_gb200_liteon' },
      gb300: { nodeType: 'compute_gb300_nvidia', powerState: 'On' },
    });
  });
  after(() => bench.close());

  for (const id of ['liteon', 'delta']) {
    it(`power shelf (${id}): off cuts the output with Chassis.Reset ForceOff, on restores it`, async () => {
      const off = await runActivity(mockEnv(), 'setDevicePower', {
        target: bench.target(id),
        action: 'off',
        settleTimeoutS: 10,
      });
      assert.deepEqual(off, { deviceId: `dev-${id}`, action: 'off', powerState: 'Off', resetSent: true });
      const on = await runActivity(mockEnv(), 'setDevicePower', {
        target: bench.target(id),
        action: 'on',
        settleTimeoutS: 10,
      });
      assert.equal(on.powerState, 'On');
      const again = await runActivity(mockEnv(), 'setDevicePower', {
        target: bench.target(id),
        action: 'on',
        settleTimeoutS: 10,
      });
      assert.equal(again.resetSent, false);
      assert.deepEqual(
        bench.posts(id).map((r) => [r.path, r.body]),
        [
          [CHASSIS_RESET, { ResetType: 'ForceOff' }],
          [CHASSIS_RESET, { ResetType: 'On' }],
        ],
      );
    });
  }

  it('switch tray: on through ComputerSystem.Reset, settled', async () => {
    const result = await runActivity(mockEnv(), 'setDevicePower', {
      target: bench.target('switch'),
      action: 'on',
      settleTimeoutS: 10,
    });
    assert.deepEqual(result, { deviceId: 'dev-switch', action: 'on', powerState: 'On', resetSent: true });
    assert.deepEqual(
      bench.posts('switch').map((r) => [r.path, r.body]),
      [['/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset', { ResetType: 'On' }]],
    );
  });

  it('GB300 compute tray: off is a graceful shutdown', async () => {
    const result = await runActivity(mockEnv(), 'setDevicePower', {
      target: bench.target('gb300'),
      action: 'off',
      settleTimeoutS: 10,
    });
    assert.equal(result.powerState, 'Off');
    assert.deepEqual(
      bench.posts('gb300').map((r) => r.body),
      [{ ResetType: 'GracefulShutdown' }],
    );
  });

  it('a graceful shutdown of a shelf is refused, typed and non-retryable, with nothing sent', async () => {
    await assert.rejects(
      runActivity(mockEnv(), 'setDevicePower', {
        target: bench.target('shelf3'),
        action: 'graceful-shutdown',
        settleTimeoutS: 10,
      }),
      (err: unknown) =>
        err instanceof ApplicationFailure &&
        err.type === 'FAILED_PRECONDITION' &&
        err.nonRetryable &&
        /dev-shelf3/.test(err.message),
    );
    assert.equal(bench.posts('shelf3').length, 0);
  });
});
