import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { mockEnv, runActivity, startBench, type Bench } from './helpers/devices.js';

// The satellite path end to end: the device's Redfish system and the BMC's ActionInfo decide what is sent.
describe('setDevicePower: the device names its Redfish system; reset types come from the ActionInfo', () => {
  let bench: Bench;
  before(async () => {
    bench = await startBench({
      blades: { nodeType: 'compute_gb200_nvidia', quirks: { extraSystems: ['System_1', 'System_2'] } },
      shelf: {
        nodeType: 'powershelf_gb200_liteon',
        quirks: { resetTypesInActionInfoOnly: true, resetTypes: ['On', 'PowerCycle'] },
      },
    });
  });
  after(() => bench.close());

  it('several systems and none named: a non-retryable FAILED_PRECONDITION listing them, nothing sent', async () => {
    await assert.rejects(
      runActivity(mockEnv(), 'setDevicePower', { target: bench.target('blades'), action: 'on', settleTimeoutS: 10 }),
      (err: unknown) =>
        err instanceof ApplicationFailure &&
        err.type === 'FAILED_PRECONDITION' &&
        err.nonRetryable &&
        /device dev-blades: the BMC has several systems \(System_0, HGX_Baseboard_0, System_1, System_2\)/.test(
          err.message,
        ),
    );
    assert.equal(bench.posts('blades').length, 0);
  });

  it('the system the device names is the one powered', async () => {
    const result = await runActivity(mockEnv(), 'setDevicePower', {
      target: bench.target('blades', 'bmc/good', 'System_0'),
      action: 'on',
      settleTimeoutS: 10,
    });
    assert.deepEqual(result, { deviceId: 'dev-blades', action: 'on', powerState: 'On', resetSent: true });
    assert.deepEqual(
      bench.posts('blades').map((r) => r.path),
      ['/redfish/v1/Systems/System_0/Actions/ComputerSystem.Reset'],
    );
  });

  it('a named system the BMC does not have: a non-retryable NOT_FOUND', async () => {
    await assert.rejects(
      runActivity(mockEnv(), 'setDevicePower', {
        target: bench.target('blades', 'bmc/good', 'Blade_4'),
        action: 'off',
        settleTimeoutS: 10,
      }),
      (err: unknown) =>
        err instanceof ApplicationFailure &&
        err.type === 'NOT_FOUND' &&
        err.nonRetryable &&
        /no system Blade_4 \(the BMC lists: /.test(err.message),
    );
  });

  it('a shelf that allows only On and PowerCycle (in its ActionInfo) is never sent ForceOff', async () => {
    await assert.rejects(
      runActivity(mockEnv(), 'setDevicePower', { target: bench.target('shelf'), action: 'off', settleTimeoutS: 10 }),
      (err: unknown) =>
        err instanceof ApplicationFailure &&
        err.type === 'INVALID_ARGUMENT' &&
        err.nonRetryable &&
        new RegExp(
          /\/Chassis\/powershelf\/Actions\/Chassis\.Reset: device dev-shelf: /.source +
            /ResetType ForceOff not allowed \(allowed: On, PowerCycle\)/.source,
        ).test(err.message),
    );
    assert.equal(bench.posts('shelf').length, 0);
  });
});
