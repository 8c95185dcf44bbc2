import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { AwaitProgress } from '../src/activities/await-devices.js';
import { mockEnv, runActivity, startBench, type Bench } from './helpers/devices.js';

describe('awaitDevices and readDevicePower', () => {
  let bench: Bench;
  const trays = ['t1', 't2', 't3'];
  before(async () => {
    bench = await startBench({
      t1: { nodeType: 'compute_gb200_nvidia', powerState: 'On' },
      t2: { nodeType: 'compute_gb200_nvidia', powerState: 'On' },
      t3: { nodeType: 'compute_gb300_nvidia', powerState: 'On' },
      stuck: { nodeType: 'compute_gb200_nvidia', powerState: 'On' },
      reboot: { nodeType: 'switch_gb200_nvidia' },
      shelf: { nodeType: 'powershelf_gb300_delta' },
      'r1-shelf': { nodeType: 'powershelf_gb200_liteon', powerDomain: 'r1' },
      'r1-switch': { nodeType: 'switch_gb200_nvidia', powerDomain: 'r1' },
      'r1-tray': { nodeType: 'compute_gb200_nvidia', powerDomain: 'r1' },
    });
  });
  after(() => bench.close());

  it("meets 'off' on a set of trays after a graceful shutdown, heartbeating progress", async () => {
    for (const id of trays) bench.sim.bmc(id).reset('GracefulShutdown');
    const env = mockEnv();
    const beats: AwaitProgress[] = [];
    env.on('heartbeat', (d: AwaitProgress) => beats.push(d));
    const result = await runActivity(env, 'awaitDevices', {
      targets: trays.map((id) => bench.target(id)),
      condition: 'off',
      pollIntervalS: 0.05,
      maxWaitS: 10,
    });
    assert.deepEqual([...result.met].sort(), ['dev-t1', 'dev-t2', 'dev-t3']);
    assert.deepEqual(result.notMet, []);
    assert.ok(result.elapsedS >= 0.15 && result.elapsedS < 5, `took ${result.elapsedS}s; a shutdown takes 0.2 s`);
    assert.deepEqual(beats.at(-1), { met: 3, of: 3 });
    assert.ok(
      beats.some((b) => b.met < 3),
      'progress reported before all were off',
    );
  });

  it('returns notMet with the last observation once maxWaitS passes (no throw)', async () => {
    const started = Date.now();
    const result = await runActivity(mockEnv(), 'awaitDevices', {
      targets: [bench.target('t1'), bench.target('stuck'), bench.target('t2', 'bmc/missing')],
      condition: 'off',
      pollIntervalS: 0.05,
      maxWaitS: 0.5,
    });
    assert.ok(Date.now() - started >= 500 && Date.now() - started < 3_000);
    assert.deepEqual(result.met, ['dev-t1']);
    assert.deepEqual(result.notMet[0], { deviceId: 'dev-stuck', last: { reachable: true, powerState: 'On' } });
    assert.equal(result.notMet[1]?.deviceId, 'dev-t2');
    assert.equal(result.notMet[1]?.error?.type, 'FAILED_PRECONDITION');
  });

  it('stops on cancellation', async () => {
    const env = mockEnv();
    env.on('heartbeat', () => env.cancel());
    const started = Date.now();
    await assert.rejects(
      runActivity(env, 'awaitDevices', {
        targets: [bench.target('stuck')],
        condition: 'off',
        pollIntervalS: 0.05,
        maxWaitS: 60,
      }),
      CancelledFailure,
    );
    assert.ok(Date.now() - started < 2_000);
  });

  it(`follows a BMC reboot: 'unreachable' while it answers 503, then 'reachable'; the shelf stays \
reachable`, async () => {
    bench.sim.bmc('reboot').rebootManager();
    const down = await runActivity(mockEnv(), 'awaitDevices', {
      targets: [bench.target('reboot')],
      condition: 'unreachable',
      pollIntervalS: 0.05,
      maxWaitS: 5,
    });
    assert.deepEqual(down.met, ['dev-reboot']);
    const reading = await runActivity(mockEnv(), 'readDevicePower', { target: bench.target('reboot') });
    assert.equal(reading.reachable, false);
    const up = await runActivity(mockEnv(), 'awaitDevices', {
      targets: [bench.target('reboot'), bench.target('shelf')],
      condition: 'reachable',
      pollIntervalS: 0.05,
      maxWaitS: 5,
    });
    assert.deepEqual([...up.met].sort(), ['dev-reboot', 'dev-shelf']);
    assert.deepEqual(await runActivity(mockEnv(), 'readDevicePower', { target: bench.target('shelf') }), {
      deviceId: 'dev-shelf',
      reachable: true,
      powerState: 'On',
    });
  });

  it('the cold-reboot gates: trays go dark when their shelf is off and come back when it is on', async () => {
    const trays = [bench.target('r1-switch'), bench.target('r1-tray')];
    const gate = (condition: 'unreachable' | 'reachable') =>
      runActivity(mockEnv(), 'awaitDevices', { targets: trays, condition, pollIntervalS: 0.05, maxWaitS: 5 });
    await runActivity(mockEnv(), 'setDevicePower', {
      target: bench.target('r1-shelf'),
      action: 'off',
      settleTimeoutS: 5,
    });
    assert.deepEqual((await gate('unreachable')).notMet, []);
    // The shelf's PMC is on standby power: still answering, output Off.
    assert.deepEqual(await runActivity(mockEnv(), 'readDevicePower', { target: bench.target('r1-shelf') }), {
      deviceId: 'dev-r1-shelf',
      reachable: true,
      powerState: 'Off',
    });
    await runActivity(mockEnv(), 'setDevicePower', {
      target: bench.target('r1-shelf'),
      action: 'on',
      settleTimeoutS: 5,
    });
    const up = await gate('reachable');
    assert.deepEqual(up.notMet, []);
    assert.ok(up.elapsedS >= 1, `BMCs boot for 1.2 s after AC returns; met after ${up.elapsedS}s`);
    assert.deepEqual(await runActivity(mockEnv(), 'readDevicePower', { target: bench.target('r1-tray') }), {
      deviceId: 'dev-r1-tray',
      reachable: true,
      powerState: 'Off',
    });
  });

  it('rejects a non-positive poll interval as INVALID_ARGUMENT', async () => {
    await assert.rejects(
      runActivity(mockEnv(), 'awaitDevices', {
        targets: [bench.target('t1')],
        condition: 'off',
        pollIntervalS: 0,
        maxWaitS: 1,
      }),
      (err: unknown) => err instanceof ApplicationFailure && err.type === 'INVALID_ARGUMENT' && err.nonRetryable,
    );
  });
});
