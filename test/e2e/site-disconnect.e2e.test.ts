import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { duplicates, flashes, installed, manifestFor, setFaults, waitFor } from '../harness/firmware.js';
import { Stack, expectStatus } from '../harness/stack.js';

interface Job {
  id: string;
  state: string;
  error: { code: string; message: string } | null;
  result: { status?: string; components?: { status: string }[] } | null;
  children?: { total: number; by_state: Record<string, number> };
}
interface Logged {
  method: string;
  path: string;
  status: number;
  body?: { ResetType?: string };
}

/** Longer than every activity's heartbeat timeout below, so the server gives up on the attempts the cut caught. */
const cutS = 8;
const heartbeatTimeoutS = 2;

// One simulated NVL72 rack whose satellite reaches Temporal through a link the test cuts (docs/deployment.md,
// "A site cut off"): the hub, the agent and the BMCs stay reachable; only the site's uplink to Temporal goes silent.
describe('a site cut off from Temporal in the middle of its work', () => {
  const stack = new Stack({
    racks: 1,
    satelliteLink: true,
    timeScale: 0.05,
    power: { heartbeatTimeoutS, maximumAttempts: 5, settleTimeoutS: 60 },
    firmware: { taskPollS: 0.2, pushDelayS: 0.5, acStabilizeS: 0.5, powerStateTimeoutS: 60, bmcRecoveryS: 60 },
    pollIntervalMs: 100,
  });
  const names = (kind: string) => stack.fleet!.devices.filter((d) => d.kind === kind).map((d) => d.name);
  const resets = async (bmc: string) =>
    ((await stack.simRequests(bmc)) as Logged[]).filter((r) => r.method === 'POST' && r.path.endsWith('.Reset'));
  const clearLogs = async () => {
    for (const d of stack.fleet!.devices)
      await fetch(`${stack.simAdminUrl}/bmcs/${d.name}/requests`, { method: 'DELETE' });
  };
  const job = async (id: string) =>
    (await stack.api('GET', `/v1/jobs/${id}`, undefined, stack.tokens.viewer)).body as Job;
  const satelliteStatus = async () =>
    (
      (await stack.api('GET', `/v1/sites/${stack.siteId}`, undefined, stack.tokens.viewer)).body as {
        satellite: { status: string };
      }
    ).satellite.status;
  /**
   * Cuts the link for `cutS`, or until `until` holds if given, checking the job does not report success while the
   * site is away.
   */
  const cutWhileRunning = async (jobId: string, until?: () => Promise<boolean>) => {
    stack.satelliteLink!.cut();
    const deadline = Date.now() + (until ? 180_000 : cutS * 1000);
    while (Date.now() < deadline) {
      assert.notEqual((await job(jobId)).state, 'succeeded', 'no success reported while the site is cut off');
      if (until && (await until())) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    stack.satelliteLink!.restore();
  };

  let rackId = '';
  let manifest: { manifestId: string; components: string[] };
  before(
    async () => {
      await stack.start();
      rackId = stack.rackIds.get('r001')!;
      manifest = await manifestFor(stack, 'gb200-compute', 'compute_gb200_nvidia', '25.09.1');
    },
    { timeout: 180_000 },
  );
  after(() => stack.stop(), { timeout: 60_000 });

  it(
    'a rack power-on cut off while the shelves power on resumes, every device switched on once; the hub showed the ' +
      'site disconnected meanwhile',
    { timeout: 420_000 },
    async () => {
      const off = expectStatus(202)(
        await stack.api('POST', `/v1/racks/${rackId}/power`, { op: 'off' }, stack.tokens.operator),
      ).body as Job;
      assert.equal(((await stack.waitForJob(off.id, 120_000)) as unknown as Job).state, 'succeeded');
      await clearLogs();

      const on = expectStatus(202)(
        await stack.api('POST', `/v1/racks/${rackId}/power`, { op: 'on' }, stack.tokens.operator),
      ).body as Job;
      await waitFor('the first shelf reset', async () => (await resets(names('powershelf')[0]!)).length > 0);
      assert.equal(await satelliteStatus(), 'connected');
      // Until the hub shows the site disconnected: no poll from its satellite for longer than the liveness limit.
      let disconnected = false;
      await cutWhileRunning(on.id, async () => (disconnected = (await satelliteStatus()) === 'disconnected'));
      assert.ok(disconnected, 'the hub showed the site disconnected while it was cut off');
      await waitFor('the site connected again', async () => (await satelliteStatus()) === 'connected', 60_000);

      const done = (await stack.waitForJob(on.id, 180_000)) as unknown as Job;
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      assert.deepEqual(done.children, { total: 35, by_state: { succeeded: 35 } });
      for (const bmc of stack.fleet!.devices.map((d) => d.name)) {
        const sent = (await resets(bmc)).filter((r) => r.status < 300);
        assert.deepEqual(
          sent.map((r) => r.body?.ResetType),
          ['On'],
          `${bmc}: switched on exactly once`,
        );
      }
    },
  );

  it(
    'a power cycle whose reset went out while the site was cut off is not sent again by the retry',
    { timeout: 120_000 },
    async () => {
      const tray = names('compute')[1]!;
      await clearLogs();
      // A slow BMC: the link is cut while the activity is between its first read and its reset, so no heartbeat
      // saying "reset sent" reaches Temporal before the attempt is given up.
      await setFaults(stack, tray, { latencyMs: 1_000 });
      const res = expectStatus(202)(
        await stack.api(
          'POST',
          `/v1/devices/${stack.deviceIds.get(tray)}/power`,
          { action: 'power-cycle' },
          stack.tokens.operator,
        ),
      );
      const jobId = (res.body as { id: string }).id;
      await waitFor('the first BMC request', async () => (await stack.simRequests(tray)).length > 0);
      await cutWhileRunning(jobId);
      await setFaults(stack, tray, {});

      const done = (await stack.waitForJob(jobId, 90_000)) as unknown as Job;
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      const sent = (await resets(tray)).filter((r) => r.status < 300);
      assert.equal(sent.length, 1, `one reset, as asked: ${JSON.stringify(sent.map((r) => r.body))}`);
    },
  );

  it(
    'a firmware update cut off after its first push resumes: each component flashed once, the version verified',
    { timeout: 240_000 },
    async () => {
      const tray = names('compute')[0]!;
      const res = expectStatus(202)(
        await stack.api(
          'POST',
          `/v1/devices/${stack.deviceIds.get(tray)}/firmware-update`,
          { manifest_id: manifest.manifestId },
          stack.tokens.operator,
        ),
      );
      const jobId = (res.body as { id: string }).id;
      const pushes = async () =>
        ((await stack.simRequests(tray)) as Logged[]).filter(
          (r) => r.method === 'POST' && r.path.includes('update-multipart') && r.status === 202,
        );
      await waitFor('the first package push', async () => (await pushes()).length > 0, 120_000);
      await cutWhileRunning(jobId);

      const done = (await stack.waitForJob(jobId, 180_000)) as unknown as Job;
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      assert.equal(done.result!.status, 'updated');
      const log = await flashes(stack, tray);
      assert.deepEqual(duplicates(log), [], 'nothing flashed twice');
      assert.equal(log.length, manifest.components.length);
      assert.equal((await pushes()).length, 2, 'one accepted push per package');
      const now = await installed(stack, tray);
      for (const id of manifest.components) assert.equal(now.get(id), '25.09.1', id);
    },
  );
});
