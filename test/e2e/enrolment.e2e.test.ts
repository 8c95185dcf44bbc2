import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { manifestFor, waitFor } from '../harness/firmware.js';
import { Stack, expectStatus } from '../harness/stack.js';

interface JobBody {
  id: string;
  state: string;
  progress?: { stage?: string; decision?: { stage: string; devices: Record<string, string> } } | null;
  timeline?: { stages: { name: string; status: string; startedAt?: string; finishedAt?: string }[] } | null;
  result?: Record<string, unknown> | null;
  error?: { code: string; message: string } | null;
}
interface DeviceBody {
  id: string;
  lifecycle: { state: string };
  conditions: { type: string; status: string; reason: string; message: string }[];
}

const stackTimings = {
  firmware: { taskPollS: 0.2, pushDelayS: 0.2, acStabilizeS: 0.2, powerStateTimeoutS: 60, bmcRecoveryS: 120 },
  enrolment: { burnInHeartbeatTimeoutS: 10 },
};

/** The stack's API as a test uses it. */
function api(stack: Stack) {
  const job = async (id: string) =>
    expectStatus(200)(await stack.api('GET', `/v1/jobs/${id}`, undefined, stack.tokens.viewer)).body as JobBody;
  const device = async (id: string) =>
    expectStatus(200)(await stack.api('GET', `/v1/devices/${id}`, undefined, stack.tokens.viewer)).body as DeviceBody;
  const waitForDecision = async (jobId: string, timeoutMs = 180_000) => {
    let last: JobBody | undefined;
    await waitFor(
      `job ${jobId} to wait for a decision`,
      async () => {
        last = await job(jobId);
        assert.ok(!['succeeded', 'failed', 'cancelled'].includes(last.state), JSON.stringify(last));
        return Boolean(last.progress?.decision);
      },
      timeoutMs,
    );
    return last!.progress!.decision!;
  };
  return { job, device, waitForDecision };
}

describe('rack enrolment from NetBox to certified, with burn-in on a real SLURM', () => {
  const stack = new Stack({
    racks: 1,
    netbox: true,
    timeScale: 0.01,
    burnIn: { startDeadlineS: 600 },
    ...stackTimings,
  });
  const { job, device, waitForDecision } = api(stack);
  const name = (tray: string) => `${stack.siteId}-r001-${tray}`;
  const id = (tray: string) => stack.deviceIds.get(name(tray))!;

  before(
    async () => {
      await stack.start();
      await manifestFor(stack, 'gb200-compute', 'compute_gb200_nvidia', '25.10.0', { isDefault: true });
    },
    { timeout: 240_000 },
  );
  after(() => stack.stop(), { timeout: 90_000 });

  it(
    'a GPU fault fails its tray in burn-in; the rack waits, survives a satellite kill and an agent restart, and ' +
      'after a reject the rest of the rack is certified',
    { timeout: 600_000 },
    async () => {
      const rackId = stack.rackIds.get('r001')!;
      const faulty = 'ct03';
      const res = expectStatus(202)(await stack.api('POST', `/v1/racks/${rackId}/enrol`, {}, stack.tokens.operator));
      const jobId = (res.body as JobBody).id;
      // A second enrolment of the same rack is refused while the first runs (the rack guard).
      expectStatus(409)(await stack.api('POST', `/v1/racks/${rackId}/enrol`, {}, stack.tokens.operator));

      // The GPU fails under load, after the enrolment has checked the hardware.
      await waitFor(
        'the profile check',
        async () => (await job(jobId)).timeline?.stages.find((s) => s.name === 'profile_check')?.status === 'completed',
        120_000,
      );
      const enrolling = await device(id('ct01'));
      assert.equal(enrolling.lifecycle.state, 'enrolling');
      assert.equal(enrolling.conditions.find((c) => c.type === 'BMCReachable')?.status, 'True');
      const fault = await fetch(`${stack.simAdminUrl}/bmcs/${name(faulty)}/health/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ part: 'gpu', gpu: 2, reason: 'XID 79' }),
      });
      assert.equal(fault.status, 200, await fault.text());

      // Kill the satellite once SLURM has the burn-in's jobs; the next one follows them.
      const slurm = stack.slurm!;
      await waitFor('burn-in jobs in SLURM', async () => (await slurm.client.listJobs()).length > 0, 240_000);
      await stack.satellite.kill();
      await stack.startSatellite();

      const decision = await waitForDecision(jobId, 300_000);
      assert.equal(decision.stage, 'burn_in');
      assert.deepEqual(Object.keys(decision.devices), [id(faulty)], JSON.stringify(decision));
      assert.match(decision.devices[id(faulty)]!, /gpu_stress: TestFailed: .*GPU_2: Critical \(XID 79\)/);
      const waiting = await device(id(faulty));
      assert.equal(waiting.lifecycle.state, 'burning_in');
      assert.equal(waiting.conditions.find((c) => c.type === 'BurnInPassed')?.reason, 'TestFailed');

      // The workflow agent restarts while the rack waits; the decision still reaches the workflow.
      await stack.agent.stop();
      await stack.startAgent();

      // Bad decisions are refused and lose nothing: skip is for admins, devices must be waiting.
      const forbidden = await stack.api(
        'POST',
        `/v1/jobs/${jobId}/decision`,
        { action: 'skip', reason: 'ship it' },
        stack.tokens.operator,
      );
      assert.equal(forbidden.status, 403, JSON.stringify(forbidden.body));
      const stranger = await stack.api(
        'POST',
        `/v1/jobs/${jobId}/decision`,
        { action: 'reject', reason: 'x', device_ids: [id('ct01')] },
        stack.tokens.operator,
      );
      assert.equal(stranger.status, 400);
      assert.match(JSON.stringify(stranger.body), /device_ids/);
      const noReason = await stack.api(
        'POST',
        `/v1/jobs/${jobId}/decision`,
        { action: 'reject', reason: ' ' },
        stack.tokens.operator,
      );
      assert.equal(noReason.status, 400);

      expectStatus(202)(
        await stack.api(
          'POST',
          `/v1/jobs/${jobId}/decision`,
          { action: 'reject', reason: 'GPU_2 XID 79: RMA', device_ids: [id(faulty)] },
          stack.tokens.operator,
        ),
      );
      const done = await stack.waitForJob(jobId, 180_000);
      assert.equal(done['state'], 'succeeded', JSON.stringify(done['error']));
      const result = done['result'] as { devices: number; certified: number; rejected: number };
      assert.deepEqual([result.devices, result.certified, result.rejected], [35, 34, 1]);

      // The stage timeline, each stage with its times.
      const timeline = (await job(jobId)).timeline!;
      assert.deepEqual(
        timeline.stages.map((s) => s.name),
        [
          'bmc_reachable',
          'credentials_verified',
          'inventory_read',
          'profile_check',
          'nvlink_topology',
          'firmware_baseline',
          'burn_in',
          'certified',
        ],
      );
      for (const s of timeline.stages) {
        assert.equal(s.status, 'completed', JSON.stringify(s));
        assert.ok(s.startedAt && s.finishedAt, `${s.name} has its times`);
      }

      // Lifecycle and conditions reach the projection; the history keeps every move.
      await waitFor(
        'the last lifecycle moves',
        async () => (await device(id('ct01'))).lifecycle.state === 'certified',
        30_000,
      );
      for (const tray of ['ct01', 'ct18', 'nvsw01', 'ps01']) {
        const d = await device(id(tray));
        assert.equal(d.lifecycle.state, 'certified', tray);
        assert.equal(d.conditions.find((c) => c.type === 'BurnInPassed')?.status, 'True', tray);
      }
      const rejected = await device(id(faulty));
      assert.equal(rejected.lifecycle.state, 'failed');
      const history = expectStatus(200)(
        await stack.api('GET', `/v1/devices/${id(faulty)}/history?axis=lifecycle`, undefined, stack.tokens.viewer),
      ).body as { items: { to: string; reason: string }[] };
      assert.deepEqual(history.items.map((h) => h.to).reverse(), ['enrolling', 'enrolled', 'burning_in', 'failed']);

      // The firmware baseline ran: the trays report the default manifest's versions.
      const fw = (await (await fetch(`${stack.simAdminUrl}/bmcs/${name('ct01')}/firmware`)).json()) as {
        items: { version: string }[];
      };
      assert.ok(
        fw.items.some((i) => i.version === '25.10.0'),
        JSON.stringify(fw.items),
      );

      // The hardware as read: NetBox's serial confirmed.
      const hw = expectStatus(200)(
        await stack.api('GET', `/v1/devices/${id('ct01')}/hardware`, undefined, stack.tokens.viewer),
      ).body as {
        serial_matches_netbox: boolean;
        digest: string;
        gpu_count: number;
        parts: { kind: string; serial_number: string | null }[];
        differences: unknown[];
      };
      assert.equal(hw.serial_matches_netbox, true);
      assert.equal(hw.gpu_count, 4);
      assert.equal(hw.parts.filter((p) => p.kind === 'gpu' && p.serial_number).length, 4);
      assert.deepEqual(hw.differences, []);
      // The Redfish document it was parsed from went to the hub by digest, as firmware packages come from it.
      const digest = hw.digest;
      const document = await fetch(`${stack.hubUrl}/v1/devices/${id('ct01')}/hardware/document`, {
        headers: { authorization: `Bearer ${stack.tokens.viewer}` },
      });
      assert.equal(document.status, 200);
      const bytes = Buffer.from(await document.arrayBuffer());
      assert.equal(`sha256:${createHash('sha256').update(bytes).digest('hex')}`, digest);
      assert.ok(Object.keys(JSON.parse(bytes.toString()) as object).some((uri) => uri.includes('/Processors')));
      // A write can add a document, never change one: the body must hash to its digest; a viewer cannot write.
      const put = (token: string, body: string) =>
        fetch(`${stack.hubUrl}/v1/hardware-documents/${digest}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
          body,
        });
      const forged = await put(stack.tokens.operator, '{"forged":true}');
      assert.equal(forged.status, 400);
      assert.match(await forged.text(), /path\.digest/);
      assert.equal((await put(stack.tokens.viewer, bytes.toString())).status, 403);
      assert.equal((await put(stack.tokens.operator, bytes.toString())).status, 200);

      // Nothing was submitted twice to SLURM: one job per name, 18 trays × 2 tests + the rack test, and the
      // faulty tray's retry-free run.
      const jobs = await slurm.client.listJobs();
      const names = jobs.map((j) => j.name);
      assert.equal(new Set(names).size, names.length, `duplicate SLURM jobs: ${names.sort().join(', ')}`);
      assert.equal(names.length, 18 * 2 + 1);

      // Illegal transitions through the API: the certified rack cannot enrol again, the failed tray cannot burn in.
      const again = await stack.api('POST', `/v1/racks/${rackId}/enrol`, {}, stack.tokens.operator);
      assert.equal(again.status, 409);
      assert.match(JSON.stringify(again.body), /is certified/);
      const burn = await stack.api('POST', `/v1/devices/${id(faulty)}/burn-in`, {}, stack.tokens.operator);
      assert.equal(burn.status, 409);
      assert.match(JSON.stringify(burn.body), /device is failed: it cannot move to burning_in/);
    },
  );

  it(
    'a burn-in whose SLURM partition is down fails closed with NeverStarted and waits for a decision',
    {
      timeout: 300_000,
    },
    async () => {
      // Re-certify a certified tray with the partition down, then retry once it is up. The satellite gives a PENDING
      // job 8 s (the first test gave the rack's 37 jobs all the time a 2-CPU node needs).
      stack.opts.burnIn!.startDeadlineS = 8;
      await stack.satellite.stop();
      await stack.startSatellite();
      const tray = id('ct05');
      stack.slurm!.scontrol('update', `PartitionName=${stack.slurm!.partition}`, 'State=DOWN');
      const res = expectStatus(202)(await stack.api('POST', `/v1/devices/${tray}/burn-in`, {}, stack.tokens.operator));
      const jobId = (res.body as JobBody).id;
      assert.equal((await job(jobId)).state, 'queued');
      const decision = await waitForDecision(jobId, 240_000);
      assert.match(decision.devices[tray]!, /NeverStarted/);
      assert.match(decision.devices[tray]!, /PartitionDown/);
      assert.equal((await device(tray)).lifecycle.state, 'burning_in');
      stack.slurm!.scontrol('update', `PartitionName=${stack.slurm!.partition}`, 'State=UP');
      expectStatus(202)(
        await stack.api(
          'POST',
          `/v1/jobs/${jobId}/decision`,
          { action: 'retry', reason: 'partition back' },
          stack.tokens.operator,
        ),
      );
      const done = await stack.waitForJob(jobId, 180_000);
      assert.equal(done['state'], 'succeeded', JSON.stringify(done['error']));
      await waitFor('certified again', async () => (await device(tray)).lifecycle.state === 'certified', 30_000);
    },
  );
});
