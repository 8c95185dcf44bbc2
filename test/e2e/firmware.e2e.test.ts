import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildFwpkg } from '@fleet/fwpkg';
import { profilePackageSpec, profileParts } from '@fleet/simulators';
import { duplicates, flashes, installed, manifestFor, setFaults, uploadPackage, waitFor } from '../harness/firmware.js';
import { Stack, expectStatus } from '../harness/stack.js';

type Job = {
  id: string;
  state: string;
  progress?: { stage?: string };
  result?: { status: string; components: { id: string; status: string; code: string }[] };
  error?: { code: string; message: string };
};

describe('firmware updates against simulated trays, faults included', () => {
  // 600 s simulated flash → 3 s; BMC reboot 120 s → 0.6 s; power-on 30 s → 0.15 s.
  const stack = new Stack({
    bmcs: 8,
    // The hub on HTTPS: the satellite fetches packages and stores inventory documents over TLS with the site's CA.
    tls: true,
    // The BMCs on HTTPS, each with its own certificate from the site's BMC CA: packages are pushed over TLS too.
    bmcTls: true,
    timeScale: 0.005,
    power: { heartbeatTimeoutS: 3 },
    firmware: { taskPollS: 0.2, pushDelayS: 0.5, acStabilizeS: 0.5, powerStateTimeoutS: 30, bmcRecoveryS: 60 },
  });
  let manifest: { manifestId: string; components: string[] };
  before(
    async () => {
      await stack.start();
      manifest = await manifestFor(stack, 'gb200-compute', 'compute_gb200_nvidia', '25.09.1', { isDefault: true });
    },
    { timeout: 180_000 },
  );
  after(() => stack.stop(), { timeout: 60_000 });

  const update = async (bmc: string, body: Record<string, unknown> = {}): Promise<string> => {
    const res = expectStatus(202)(
      await stack.api('POST', `/v1/devices/${stack.deviceIds.get(bmc)}/firmware-update`, body, stack.tokens.operator),
    );
    return (res.body as { id: string }).id;
  };
  const job = async (id: string) =>
    (await stack.api('GET', `/v1/jobs/${id}`, undefined, stack.tokens.viewer)).body as Job;

  it(
    'updates a compute tray: BMC tray then compute tray, activation, every component verified, flashed once',
    { timeout: 120_000 },
    async () => {
      assert.match(stack.bmcs.find((b) => b.id === 'bmc-0001')!.url, /^https:\/\//);
      const done = (await stack.waitForJob(await update('bmc-0001'), 90_000)) as unknown as Job;
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      assert.equal(done.result!.status, 'updated');
      assert.ok(done.result!.components.every((c) => c.status === 'updated' && c.code === 'SUCCESS'));
      const now = await installed(stack, 'bmc-0001');
      for (const id of manifest.components) assert.equal(now.get(id), '25.09.1', id);
      // The hub shows the versions the job verified on the device.
      const device = expectStatus(200)(
        await stack.api('GET', `/v1/devices/${stack.deviceIds.get('bmc-0001')}`, undefined, stack.tokens.viewer),
      ).body as { firmware: { component_id: string; version: string; job_id: string }[] };
      const verified = new Map(device.firmware.map((f) => [f.component_id, [f.version, f.job_id]]));
      for (const id of manifest.components) assert.deepEqual(verified.get(id), ['25.09.1', done.id], id);
      const log = await flashes(stack, 'bmc-0001');
      assert.equal(log.length, manifest.components.length);
      assert.deepEqual(duplicates(log), []);
      // The BMC tray package went first (nvfwupd: never both at once).
      const pushes = (await stack.simRequests('bmc-0001')).filter(
        (r) => r.method === 'POST' && r.path.includes('update-multipart'),
      );
      assert.equal(pushes.length, 2);

      // Compliant now: a second update pushes nothing.
      const again = (await stack.waitForJob(await update('bmc-0001'), 60_000)) as unknown as Job;
      assert.equal(again.state, 'succeeded');
      assert.equal(again.result!.status, 'skipped');
      assert.equal((await flashes(stack, 'bmc-0001')).length, manifest.components.length);
    },
  );

  it(
    'a BMC that reboots mid-update: the push is made again, the device ends updated, nothing flashed twice',
    { timeout: 120_000 },
    async () => {
      await setFaults(stack, 'bmc-0002', { rebootDuringUpdate: true });
      const id = await update('bmc-0002');
      await waitFor(
        'the BMC reboot',
        async () =>
          ((await (await fetch(`${stack.simAdminUrl}/bmcs/bmc-0002`)).json()) as { rebooting: boolean }).rebooting,
      );
      await setFaults(stack, 'bmc-0002', {});
      const done = (await stack.waitForJob(id, 90_000)) as unknown as Job;
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      assert.deepEqual(duplicates(await flashes(stack, 'bmc-0002')), []);
      const now = await installed(stack, 'bmc-0002');
      for (const c of manifest.components) assert.equal(now.get(c), '25.09.1');
    },
  );

  it(
    'a BMC that reboots in the middle of an upload: the upload is made again, nothing flashed twice',
    { timeout: 120_000 },
    async () => {
      await setFaults(stack, 'bmc-0007', { rebootDuringUpload: true });
      const done = (await stack.waitForJob(await update('bmc-0007'), 90_000)) as unknown as Job;
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      const uploads = (await stack.simRequests('bmc-0007')).filter(
        (r) => r.method === 'POST' && r.path.includes('update-multipart'),
      );
      assert.equal(uploads[0]!.status, 0, 'the first upload got no answer');
      assert.equal(uploads.filter((r) => r.status === 202).length, 2, 'then one accepted upload per package');
      const log = await flashes(stack, 'bmc-0007');
      assert.deepEqual(duplicates(log), []);
      assert.equal(log.length, manifest.components.length);
    },
  );

  it(
    'a failing task fails the job with TASK_EXCEPTION per component and changes nothing',
    { timeout: 120_000 },
    async () => {
      const before = await installed(stack, 'bmc-0003');
      await setFaults(stack, 'bmc-0003', { taskFailure: true });
      const done = (await stack.waitForJob(await update('bmc-0003'), 90_000)) as unknown as Job;
      await setFaults(stack, 'bmc-0003', {});
      assert.equal(done.state, 'failed');
      assert.equal(done.error!.code, 'FIRMWARE_UPDATE_FAILED');
      const failed = done.result!.components.filter((c) => c.status === 'failed');
      assert.equal(failed.length, manifest.components.length, 'every component reported failed, none succeeded');
      assert.ok(
        failed.every((c) => c.code === 'TASK_EXCEPTION' || c.code === 'TASK_FAILED'),
        JSON.stringify(failed),
      );
      assert.deepEqual(await flashes(stack, 'bmc-0003'), []);
      assert.deepEqual(await installed(stack, 'bmc-0003'), before);
    },
  );

  it('the hub and the satellite export their direct-write fallbacks by reason from 0', async () => {
    for (const [p, name] of [
      [stack.hub, 'fleet_hub_blob_direct_write_fallbacks_total'],
      [stack.satellite, 'fleet_satellite_artifact_direct_write_fallbacks_total'],
    ] as const) {
      const text = await (await fetch(`http://127.0.0.1:${stack.metricsPort(p)}/metrics`)).text();
      for (const reason of ['open_failed', 'write_refused'])
        assert.match(text, new RegExp(`^${name}\\{reason="${reason}"\\} 0$`, 'm'), `${p.name}: ${name} ${reason}`);
    }
  });

  it('a package for the wrong tray is refused before anything is flashed', { timeout: 120_000 }, async () => {
    // A power-shelf package in a compute manifest: same component ids claimed, wrong PLDM device.
    const [shelfPart] = profileParts('powershelf-liteon');
    const pkg = await uploadPackage(
      stack,
      buildFwpkg(profilePackageSpec('powershelf-liteon', shelfPart!, '25.09.1')),
      'wrong-tray.fwpkg',
    );
    const wrong = expectStatus(201)(
      await stack.api(
        'POST',
        '/v1/firmware/manifests',
        {
          name: 'wrong-tray',
          hardware_type: 'compute_gb200_nvidia',
          steps: [
            { name: 'bmc', package_id: pkg.id, targets: [], components: [{ id: 'FW_BMC_0', version: '25.09.1' }] },
          ],
        },
        stack.tokens.operator,
      ),
    );
    const done = (await stack.waitForJob(
      await update('bmc-0004', { manifest_id: (wrong.body as { id: string }).id }),
      60_000,
    )) as unknown as Job;
    assert.equal(done.state, 'failed');
    assert.equal(done.result!.components[0]!.code, 'TARGET_NOT_FOUND', JSON.stringify(done.result));
    assert.deepEqual(await flashes(stack, 'bmc-0004'), []);
  });

  it(
    'a worker killed mid-upload: the job completes on the next worker, each image flashed once',
    { timeout: 180_000 },
    async () => {
      // Slow the BMC so the upload is in flight when the satellite dies.
      await setFaults(stack, 'bmc-0005', { latencyMs: 1500 });
      const id = await update('bmc-0005');
      await waitFor('the upload to start', async () => (await job(id)).progress?.stage?.startsWith('update') ?? false);
      await stack.satellite.kill();
      await setFaults(stack, 'bmc-0005', {});
      await stack.startSatellite();
      const done = (await stack.waitForJob(id, 150_000)) as unknown as Job;
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      const log = await flashes(stack, 'bmc-0005');
      assert.deepEqual(duplicates(log), []);
      assert.equal(log.length, manifest.components.length);
    },
  );

  it(
    'a worker killed mid-activation: activation resumes, the device ends updated, each image flashed once',
    { timeout: 180_000 },
    async () => {
      const id = await update('bmc-0006');
      await waitFor(
        'activation',
        async () =>
          (await job(id)).progress?.stage === 'activate' ||
          JSON.stringify(await job(id)).includes('"currentStage":"activate"'),
        90_000,
      );
      await stack.satellite.kill();
      await stack.startSatellite();
      const done = (await stack.waitForJob(id, 150_000)) as unknown as Job;
      assert.equal(done.state, 'succeeded', JSON.stringify(done.error));
      const log = await flashes(stack, 'bmc-0006');
      assert.deepEqual(duplicates(log), []);
      assert.equal(log.length, manifest.components.length);
    },
  );
});
