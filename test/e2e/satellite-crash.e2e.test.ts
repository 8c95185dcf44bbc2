import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Stack, expectStatus } from '../harness/stack.js';

describe('satellite killed or stopped in the middle of a power activity', () => {
  // A 30 s simulated power-on scaled to 6 s, so the kill lands while the tray is powering on;
  // SIGTERM gives running activities 20 s, enough to finish.
  const stack = new Stack({ bmcs: 2, timeScale: 0.2, power: { heartbeatTimeoutS: 2 }, shutdownGraceTimeS: 20 });
  before(() => stack.start(), { timeout: 120_000 });
  after(() => stack.stop(), { timeout: 60_000 });

  it('the job completes on a new worker and the BMC was reset exactly once', { timeout: 180_000 }, async () => {
    const deviceId = stack.deviceIds.get('bmc-0001')!;
    const res = expectStatus(202)(
      await stack.api('POST', `/v1/devices/${deviceId}/power`, { action: 'on' }, stack.tokens.operator),
    );
    const jobId = (res.body as { id: string }).id;

    const deadline = Date.now() + 60_000;
    while (!(await stack.simRequests('bmc-0001')).some((r) => r.method === 'POST')) {
      assert.ok(Date.now() < deadline, 'the reset never reached the BMC');
      await new Promise((r) => setTimeout(r, 50));
    }
    await stack.satellite.kill();
    const bmc = (await (await fetch(`${stack.simAdminUrl}/bmcs/bmc-0001`)).json()) as { powerState: string };
    assert.equal(bmc.powerState, 'PoweringOn', 'killed while the tray was still powering on');
    const running = await stack.api('GET', `/v1/jobs/${jobId}`, undefined, stack.tokens.viewer);
    assert.notEqual((running.body as { state: string }).state, 'succeeded');

    await stack.startSatellite();
    const job = await stack.waitForJob(jobId, 120_000);
    assert.equal(job['state'], 'succeeded', JSON.stringify(job['error']));
    assert.equal((job['result'] as { powerState: string }).powerState, 'On');
    const resets = (await stack.simRequests('bmc-0001')).filter((r) => r.method === 'POST');
    assert.deepEqual(
      resets.map((r) => r.body),
      [{ ResetType: 'On' }],
      'exactly one reset, as asked',
    );
  });

  it(
    'SIGTERM lets the running activity finish, exits cleanly, and the job completes on the next worker',
    { timeout: 180_000 },
    async () => {
      const deviceId = stack.deviceIds.get('bmc-0002')!;
      const res = expectStatus(202)(
        await stack.api('POST', `/v1/devices/${deviceId}/power`, { action: 'on' }, stack.tokens.operator),
      );
      const jobId = (res.body as { id: string }).id;
      const deadline = Date.now() + 60_000;
      while (!(await stack.simRequests('bmc-0002')).some((r) => r.method === 'POST')) {
        assert.ok(Date.now() < deadline, 'the reset never reached the BMC');
        await new Promise((r) => setTimeout(r, 50));
      }
      const code = await stack.satellite.stop();
      assert.equal(code, 0, 'graceful exit');
      assert.match(stack.satellite.output, /satellite worker stopped/);
      // The activity was allowed to finish: it saw the tray settle before the process left.
      assert.match(stack.satellite.output, new RegExp(`"deviceId":"${deviceId}"[^\n]*"msg":"device settled"`));
      await stack.startSatellite();
      const job = await stack.waitForJob(jobId, 120_000);
      assert.equal(job['state'], 'succeeded', JSON.stringify(job['error']));
      const resets = (await stack.simRequests('bmc-0002')).filter((r) => r.method === 'POST');
      assert.equal(resets.length, 1);
    },
  );
});
