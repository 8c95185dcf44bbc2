import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { BmcResetHeartbeat } from '../src/activities/bmc-reset.js';
import { mockEnv, runActivity, sleep, startBench, type Bench } from './helpers/devices.js';

const BMC_RESET = '/redfish/v1/Managers/BMC_0/Actions/Manager.Reset';
const HMC_RESET = '/redfish/v1/Managers/HGX_BMC_0/Actions/Manager.Reset';

describe('resetBmc activity', () => {
  let bench: Bench;
  before(async () => {
    bench = await startBench({
      bmc: { nodeType: 'compute_gb200_nvidia' },
      hmc: { nodeType: 'compute_gb300_nvidia' },
      retried: { nodeType: 'compute_gb200_nvidia' },
      lost: { nodeType: 'compute_gb200_nvidia' },
      slow: { nodeType: 'compute_gb200_nvidia' },
      hung: { nodeType: 'compute_gb200_nvidia' },
      shelf: { nodeType: 'powershelf_gb200_liteon' },
    });
  });
  after(() => bench.close());

  it('compute BMC: Manager.Reset, then waits through the 503 window until the BMC answers', async () => {
    const env = mockEnv();
    const beats: BmcResetHeartbeat[] = [];
    env.on('heartbeat', (d: BmcResetHeartbeat) => beats.push(d));
    const result = await runActivity(env, 'resetBmc', {
      target: bench.target('bmc'),
      manager: 'bmc',
      waitUntilBackS: 10,
    });
    assert.equal(result.deviceId, 'dev-bmc');
    assert.equal(result.outageSeen, true);
    assert.ok(result.backAfterS >= 1, `back after ${result.backAfterS}s; the simulated reboot takes 1.2 s`);
    assert.deepEqual(
      bench.posts('bmc').map((r) => [r.path, r.body]),
      [[BMC_RESET, { ResetType: 'GracefulRestart' }]],
    );
    const statuses = bench.sim.bmc('bmc').log.map((r) => r.status);
    assert.ok(statuses.includes(503), 'polled while the BMC answered 503');
    assert.equal(statuses.at(-1), 200);
    assert.ok(beats.some((b) => b.resetSent && b.outageSeen));
  });

  it('compute HMC: Manager.Reset on HGX_BMC_0 and the wait for it', async () => {
    const result = await runActivity(mockEnv(), 'resetBmc', {
      target: bench.target('hmc'),
      manager: 'hmc',
      waitUntilBackS: 10,
    });
    assert.equal(result.outageSeen, true);
    assert.deepEqual(
      bench.posts('hmc').map((r) => r.path),
      [HMC_RESET],
    );
  });

  it('a retry whose heartbeat says the reset was sent does not send it again', async () => {
    // Attempt 1 is lost right after it recorded the reset (worker gone: here, cancelled).
    const first = mockEnv();
    let recorded: BmcResetHeartbeat | undefined;
    first.on('heartbeat', (d: BmcResetHeartbeat) => {
      if (d.resetSent && !recorded) {
        recorded = d;
        first.cancel();
      }
    });
    await assert.rejects(
      runActivity(first, 'resetBmc', { target: bench.target('retried'), manager: 'bmc', waitUntilBackS: 10 }),
      CancelledFailure,
    );
    assert.ok(recorded);
    const second = mockEnv({ heartbeatDetails: recorded, attempt: 2 });
    const result = await runActivity(second, 'resetBmc', {
      target: bench.target('retried'),
      manager: 'bmc',
      waitUntilBackS: 10,
    });
    assert.equal(result.outageSeen, true);
    assert.equal(bench.posts('retried', '/Manager.Reset').length, 1);
  });

  it('an attempt that died while sending: a BMC found rebooting took the reset, which is not sent again', async () => {
    bench.sim.bmc('lost').rebootManager();
    const env = mockEnv({
      heartbeatDetails: { sending: true, resetSent: false, outageSeen: false } satisfies BmcResetHeartbeat,
      attempt: 2,
    });
    const result = await runActivity(env, 'resetBmc', {
      target: bench.target('lost'),
      manager: 'bmc',
      waitUntilBackS: 10,
    });
    assert.equal(result.outageSeen, true);
    assert.equal(bench.posts('lost').length, 0);
  });

  it('a BMC hung before the reset: an attempt that died sending sends it again, past the hung reads', async () => {
    // Reads hang; Manager.Reset is still taken and the reboot clears the hang (a wedged web server).
    bench.sim.bmc('hung').setUnresponsive({
      mode: 'timeout',
      clearOnReboot: true,
      answersManagerReset: true,
      since: new Date().toISOString(),
    });
    const env = mockEnv({
      heartbeatDetails: {
        sending: true,
        upBefore: false,
        resetSent: false,
        outageSeen: false,
      } satisfies BmcResetHeartbeat,
      attempt: 2,
    });
    const result = await runActivity(env, 'resetBmc', {
      target: bench.target('hung'),
      manager: 'bmc',
      waitUntilBackS: 10,
    });
    assert.equal(result.outageSeen, true);
    assert.deepEqual(
      bench.posts('hung').map((r) => r.path),
      [BMC_RESET],
      'sent once, straight to the action target: discovery hangs',
    );
  });

  it('a BMC not back within waitUntilBackS is DEADLINE_EXCEEDED (retryable), the reset sent once', async () => {
    await assert.rejects(
      runActivity(mockEnv(), 'resetBmc', { target: bench.target('slow'), manager: 'bmc', waitUntilBackS: 0.3 }),
      (err: unknown) =>
        err instanceof ApplicationFailure &&
        err.type === 'DEADLINE_EXCEEDED' &&
        !err.nonRetryable &&
        /dev-slow/.test(err.message),
    );
    assert.equal(bench.posts('slow').length, 1);
    await sleep(1_300);
  });

  it('a power shelf has no HMC: typed, non-retryable, nothing sent', async () => {
    await assert.rejects(
      runActivity(mockEnv(), 'resetBmc', { target: bench.target('shelf'), manager: 'hmc', waitUntilBackS: 10 }),
      (err: unknown) => err instanceof ApplicationFailure && err.type === 'FAILED_PRECONDITION' && err.nonRetryable,
    );
    assert.equal(bench.posts('shelf').length, 0);
  });
});
