import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Stack, expectStatus } from '../harness/stack.js';

describe('Temporal down: the hub keeps answering and nothing is lost', () => {
  const stack = new Stack({ bmcs: 1, persistentTemporal: true });
  before(() => stack.start(), { timeout: 120_000 });
  after(() => stack.stop(), { timeout: 60_000 });

  it(
    'reads answer and a POST is accepted while Temporal is stopped; the job completes once it is back',
    { timeout: 180_000 },
    async () => {
      const deviceId = stack.deviceIds.get('bmc-0001')!;
      await stack.temporal.stop();

      expectStatus(200)(await stack.api('GET', `/v1/devices/${deviceId}`, undefined, stack.tokens.viewer));
      expectStatus(200)(await stack.api('GET', '/v1/jobs', undefined, stack.tokens.viewer));
      const res = expectStatus(202)(
        await stack.api('POST', `/v1/devices/${deviceId}/power`, { action: 'on' }, stack.tokens.operator),
      );
      const jobId = (res.body as { id: string }).id;

      // The agent tries, fails, and keeps the intent pending with the reason.
      const deadline = Date.now() + 30_000;
      let intent: { status: string; attempts: number; last_error: string | null } | undefined;
      while (Date.now() < deadline) {
        intent = (
          await stack.dbHandle.pool.query('select status, attempts, last_error from intents where job_id = $1', [jobId])
        ).rows[0];
        if (intent && intent.attempts >= 2 && intent.last_error) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(intent?.status, 'pending');
      assert.ok(intent!.attempts >= 2, 'the agent retried');
      assert.ok(intent!.last_error, 'the failure is recorded');
      const queued = await stack.api('GET', `/v1/jobs/${jobId}`, undefined, stack.tokens.viewer);
      assert.equal((queued.body as { state: string }).state, 'queued');

      await stack.startTemporal();
      const job = await stack.waitForJob(jobId, 120_000);
      assert.equal(job['state'], 'succeeded', JSON.stringify(job['error']));
      const device = await stack.api('GET', `/v1/devices/${deviceId}`, undefined, stack.tokens.viewer);
      assert.equal((device.body as { power_state: string }).power_state, 'On');
      const resets = (await stack.simRequests('bmc-0001')).filter((r) => r.method === 'POST');
      assert.equal(resets.length, 1, 'the BMC was reset exactly once');
    },
  );
});
