import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { duplicates, flashes, installed, manifestFor, setFaults, waitFor } from '../harness/firmware.js';
import { Stack, expectStatus } from '../harness/stack.js';

type Campaign = {
  id: string;
  state: string;
  progress?: { stage?: string; message?: string };
  children?: Record<string, number>;
};

describe('firmware campaign: canary, waves, failure budget', () => {
  const stack = new Stack({
    bmcs: 6,
    timeScale: 0.005,
    firmware: {
      taskPollS: 0.2,
      pushDelayS: 0.2,
      acStabilizeS: 0.2,
      powerStateTimeoutS: 30,
      bmcRecoveryS: 60,
      // Below the history of the canary and its approval: wave 1 always starts by continuing as new. At 40 the
      // budget could be crossed only after every device of the last wave had started, and the run then ended as one.
      campaignHistoryBudget: 15,
    },
  });
  before(
    async () => {
      await stack.start();
      await manifestFor(stack, 'gb200-compute', 'compute_gb200_nvidia', '25.10.0', { isDefault: true });
    },
    { timeout: 180_000 },
  );
  after(() => stack.stop(), { timeout: 60_000 });

  const jobOf = async (id: string) =>
    (await stack.api('GET', `/v1/jobs/${id}`, undefined, stack.tokens.viewer)).body as Campaign;

  it(
    'plans first (dry run writes nothing), waits for approval after the canary, pauses when the failure ' +
      'budget is exceeded, and finishes once resumed',
    { timeout: 240_000 },
    async () => {
      const request = {
        name: 'gb200 25.10',
        site_id: stack.siteId,
        policy: { canarySize: 1, waveSize: 5, maxConcurrentPerSite: 3, maxConcurrentPerRack: 18, failureBudget: 0 },
      };
      const plan = expectStatus(200)(
        await stack.api('POST', '/v1/firmware-campaigns', { ...request, dry_run: true }, stack.tokens.operator),
      ).body as {
        plan: {
          devices: unknown[];
          waves: { kind: string; device_ids: string[] }[];
          estimated_duration_s: number;
          lower_bound_s: number;
        };
      };
      assert.equal(plan.plan.devices.length, 6);
      assert.deepEqual(
        plan.plan.waves.map((w) => [w.kind, w.device_ids.length]),
        [
          ['canary', 1],
          ['wave', 5],
        ],
      );
      assert.ok(plan.plan.estimated_duration_s >= plan.plan.lower_bound_s && plan.plan.lower_bound_s > 0);
      assert.equal(
        (
          (await stack.api('GET', '/v1/firmware-campaigns', undefined, stack.tokens.viewer)).body as {
            items: unknown[];
          }
        ).items.length,
        0,
      );

      const created = expectStatus(202)(
        await stack.api('POST', '/v1/firmware-campaigns', request, stack.tokens.operator),
      ).body as { id: string };
      const id = created.id;
      await waitFor(
        'the canary to finish and the approval gate',
        async () => (await jobOf(id)).progress?.stage === 'awaiting_approval',
        90_000,
      );

      // Two trays of the first wave will fail their task: the budget (0) is exceeded at the first.
      const byName = [...stack.deviceIds.keys()];
      const canaryDone = (
        await Promise.all(byName.map(async (b) => [b, (await flashes(stack, b)).length] as const))
      ).filter(([, n]) => n > 0);
      assert.equal(canaryDone.length, 1, 'only the canary was updated before approval');
      const failing = byName.filter((b) => b !== canaryDone[0]![0]).slice(0, 2);
      for (const b of failing) await setFaults(stack, b, { taskFailure: true });

      expectStatus(202)(await stack.api('POST', `/v1/firmware-campaigns/${id}/approve`, {}, stack.tokens.operator));
      await waitFor(
        'the campaign to pause on its failure budget',
        async () => (await jobOf(id)).progress?.stage === 'paused',
        120_000,
      );
      const paused = await jobOf(id);
      assert.match(paused.progress?.message ?? '', /failure budget exceeded/);
      assert.equal(paused.state, 'running');

      for (const b of failing) await setFaults(stack, b, {});
      expectStatus(202)(await stack.api('POST', `/v1/firmware-campaigns/${id}/resume`, {}, stack.tokens.operator));
      const done = await stack.waitForJob(id, 150_000);
      // Failed devices stay failed (never reported as success); the campaign fails as a batch would.
      assert.equal(done['state'], 'failed', JSON.stringify(done));
      assert.equal((done['error'] as { code: string }).code, 'CAMPAIGN_FAILED');
      const devices = (await stack.api('GET', `/v1/firmware-campaigns/${id}/devices`, undefined, stack.tokens.viewer))
        .body as { items: { device_id: string; state: string }[] };
      const failed = devices.items.filter((d) => d.state === 'failed');
      assert.ok(failed.length >= 1 && failed.length <= 2, JSON.stringify(devices.items));
      // A small history budget: the campaign continued as new (mid-wave) and still finished.
      let runs = 0;
      await stack.withTemporal(async (c) => {
        for await (const _run of c.workflow.list({ query: `WorkflowId = '${id}'` })) runs++;
      });
      assert.ok(runs > 1, `expected continue-as-new, saw ${runs} run(s)`);
      for (const b of byName) {
        assert.deepEqual(duplicates(await flashes(stack, b)), [], `${b} flashed twice`);
        const isFailed = failing.includes(b) && failed.some((f) => f.device_id === stack.deviceIds.get(b));
        if (!isFailed) assert.equal((await installed(stack, b)).get('FW_BMC_0'), '25.10.0', b);
      }
    },
  );

  it(
    'a campaign cancelled while devices update ends after them: each running device ends cancelled from its own ' +
      'workflow, the devices never started end as not reached, and every device is free again',
    { timeout: 180_000 },
    async () => {
      // Slow BMCs (every answer 150 ms late) keep the two running updates busy while the campaign is cancelled.
      const byName = [...stack.deviceIds.keys()];
      for (const b of byName) await setFaults(stack, b, { latencyMs: 150 });
      try {
        const created = expectStatus(202)(
          await stack.api(
            'POST',
            '/v1/firmware-campaigns',
            {
              name: 'gb200 25.10 again',
              site_id: stack.siteId,
              policy: { canarySize: 0, waveSize: 6, maxConcurrentPerSite: 2, force: true },
            },
            stack.tokens.operator,
          ),
        ).body as { id: string };
        type DeviceRow = { device_id: string; job_id: string; state: string };
        const devices = async () =>
          (
            (await stack.api('GET', `/v1/firmware-campaigns/${created.id}/devices`, undefined, stack.tokens.viewer))
              .body as { items: DeviceRow[] }
          ).items;
        let running: DeviceRow[] = [];
        await waitFor(
          'two devices updating',
          async () => (running = (await devices()).filter((d) => d.state === 'running')).length === 2,
          60_000,
        );
        expectStatus(202)(
          await stack.api('POST', `/v1/firmware-campaigns/${created.id}/cancel`, {}, stack.tokens.operator),
        );
        assert.equal((await stack.waitForJob(created.id, 60_000))['state'], 'cancelled');

        const ended = await devices();
        const codeOf = async (jobId: string) =>
          (
            (await stack.api('GET', `/v1/jobs/${jobId}`, undefined, stack.tokens.viewer)).body as {
              error?: { code: string };
            }
          ).error?.code;
        for (const d of ended) {
          const wasRunning = running.some((r) => r.job_id === d.job_id);
          assert.ok(['cancelled', 'succeeded'].includes(d.state), `${d.device_id}: ${d.state}`);
          const code = await codeOf(d.job_id);
          if (wasRunning) assert.notEqual(code, 'NOT_REACHED', `${d.device_id} ran: written from its own workflow`);
          else if (d.state === 'cancelled') assert.equal(code, 'NOT_REACHED', `${d.device_id} never started`);
        }
        assert.ok(
          ended.filter((d) => d.state === 'cancelled' && !running.some((r) => r.job_id === d.job_id)).length >= 1,
          'some devices were never started',
        );
        // In Temporal too: each running device's workflow closed before the campaign's did.
        await stack.withTemporal(async (c) => {
          const campaignClosed = (await c.workflow.getHandle(created.id).describe()).closeTime!.getTime();
          for (const r of running) {
            const closed = (await c.workflow.getHandle(r.job_id).describe()).closeTime;
            assert.ok(closed && closed.getTime() <= campaignClosed, `${r.device_id} closed after its campaign`);
          }
        });
      } finally {
        for (const b of byName) await setFaults(stack, b, {});
      }
    },
  );
});
