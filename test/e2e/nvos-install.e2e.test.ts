import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { uploadPackage, waitFor } from '../harness/firmware.js';
import { nvosInstall, setSwitchFaults, stagedFile, switchState } from '../harness/switches.js';
import { Stack, expectStatus } from '../harness/stack.js';

type Stage = { name: string; status: string; message?: string };
type Job = {
  id: string;
  state: string;
  timeline?: { stages: Stage[] };
  result?: { from: string; to: string; uploaded: boolean; installed: boolean; status: string };
  error?: { code: string; message: string };
};

const FILE = 'nvos-amd64-25.06.1000.bin';
const BUILD = '25.06.1000';
const SIZE = 8 * 1024 * 1024;

describe('NVOS image install on simulated switches, faults and worker crashes included', () => {
  // 1/50 speed: install 8 s, reboot 2.4 s. Activities heartbeat every few seconds (3 s timeout) and get 3 attempts.
  const stack = new Stack({
    bmcs: 0,
    switches: 7,
    timeScale: 0.02,
    nvosTimings: { installS: 400 },
    power: { heartbeatTimeoutS: 3, maximumAttempts: 3 },
    nvos: { sftpStepTimeoutS: 4 },
    nvosInstall: { pollIntervalS: 0.2, installTimeoutS: 120, rebootTimeoutS: 120 },
  });
  const image = randomBytes(SIZE);
  const digest = createHash('sha256').update(image).digest('hex');
  let packageId = '';
  before(
    async () => {
      await stack.start();
      packageId = (await uploadPackage(stack, image, FILE, 'nvos')).id;
    },
    { timeout: 180_000 },
  );
  after(() => stack.stop(), { timeout: 60_000 });

  const finished = async (id: string) => (await stack.waitForJob(id, 150_000)) as unknown as Job;
  const imageOpens = async (sw: string) =>
    (
      (await (await fetch(`${stack.simAdminUrl}/switches/${sw}/ssh-requests`)).json()) as {
        items: { op: string; path?: string }[];
      }
    ).items.filter((r) => r.op === 'sftp-open' && r.path === `/host/nos-images/${FILE}`).length;

  it('the catalog keeps the image with its build id', async () => {
    const pkg = expectStatus(200)(
      await stack.api('GET', `/v1/firmware/packages/${packageId}`, undefined, stack.tokens.viewer),
    ).body as Record<string, unknown>;
    assert.deepEqual(
      [pkg['format'], pkg['build_id'], pkg['package_version'], pkg['digest']],
      ['nvos', BUILD, BUILD, digest],
    );
  });

  it(
    'installs a new build: one upload, one install, the switch comes back running it; a second job exits early',
    { timeout: 180_000 },
    async () => {
      const job = await finished(await nvosInstall(stack, 'sw-0001', packageId));
      assert.equal(job.state, 'succeeded', JSON.stringify(job.error));
      assert.deepEqual(job.result, {
        deviceId: stack.deviceIds.get('sw-0001'),
        from: '25.02.4282',
        to: BUILD,
        uploaded: true,
        installed: true,
        status: 'installed',
      });
      assert.deepEqual(
        job.timeline!.stages.map((s) => s.status),
        ['completed', 'completed', 'completed', 'completed', 'completed'],
      );
      const sw = await switchState(stack, 'sw-0001');
      assert.equal(sw.image.current, BUILD);
      assert.equal(sw.counters.installsStarted, 1);
      assert.equal(
        (await stagedFile(stack, 'sw-0001', FILE))!.sha256,
        digest,
        'the switch holds the image byte for byte',
      );
      assert.equal(await imageOpens('sw-0001'), 1);
      // The hub records the build the job verified on the device.
      const device = expectStatus(200)(
        await stack.api('GET', `/v1/devices/${stack.deviceIds.get('sw-0001')}`, undefined, stack.tokens.viewer),
      ).body as { firmware_version: string; firmware: { component_id: string; version: string; job_id: string }[] };
      assert.equal(device.firmware_version, BUILD);
      assert.deepEqual(
        device.firmware.map((f) => [f.component_id, f.version, f.job_id]),
        [['NVOS', BUILD, job.id]],
      );

      const again = await finished(await nvosInstall(stack, 'sw-0001', packageId));
      assert.equal(again.state, 'succeeded');
      assert.equal(again.result!.status, 'already_current');
      assert.deepEqual(
        again.timeline!.stages.map((s) => s.status),
        ['completed', 'skipped', 'skipped', 'skipped', 'skipped'],
      );
      assert.equal((await switchState(stack, 'sw-0001')).counters.installsStarted, 1, 'no second install');
      assert.equal(await imageOpens('sw-0001'), 1, 'no second upload');
    },
  );

  it(
    'a failed install surfaces the switch issue text; the next job finds the file there and skips the upload',
    { timeout: 180_000 },
    async () => {
      await setSwitchFaults(stack, 'sw-0002', { installFailure: true });
      const failed = await finished(await nvosInstall(stack, 'sw-0002', packageId));
      await setSwitchFaults(stack, 'sw-0002', {});
      assert.equal(failed.state, 'failed');
      assert.equal(failed.error!.code, 'NVOS_INSTALL_FAILED');
      assert.match(failed.error!.message, /image install failed: nvos-amd64-25\.06\.1000\.bin did not verify/);
      assert.equal(failed.timeline!.stages.find((s) => s.name === 'install')!.status, 'failed');
      assert.equal(
        (await switchState(stack, 'sw-0002')).counters.installsStarted,
        1,
        'a failure that is not a reboot is not retried',
      );

      const job = await finished(await nvosInstall(stack, 'sw-0002', packageId));
      assert.equal(job.state, 'succeeded', JSON.stringify(job.error));
      assert.equal(job.result!.uploaded, false);
      assert.equal(job.timeline!.stages.find((s) => s.name === 'stage_image')!.message, 'already on the switch');
      assert.equal(await imageOpens('sw-0002'), 1, 'uploaded by the first job only');
      assert.equal((await switchState(stack, 'sw-0002')).image.current, BUILD);
    },
  );

  it(
    'an SFTP stall fails each attempt after the step timeout; the job fails naming the step, and succeeds ' +
      'once the switch answers',
    { timeout: 180_000 },
    async () => {
      await setSwitchFaults(stack, 'sw-0003', { sftpStallAfterBytes: SIZE / 4 });
      const stalled = await finished(await nvosInstall(stack, 'sw-0003', packageId));
      assert.equal(stalled.state, 'failed');
      assert.equal(stalled.error!.code, 'SFTP_STALL');
      assert.match(
        stalled.error!.message,
        /upload: no progress on \/host\/nos-images\/nvos-amd64-25\.06\.1000\.bin for 4000 ms/,
      );
      assert.equal(stalled.timeline!.stages.find((s) => s.name === 'stage_image')!.status, 'failed');
      assert.equal(await imageOpens('sw-0003'), 3, 'every attempt tried');
      assert.equal((await switchState(stack, 'sw-0003')).counters.installsStarted, 0);

      await setSwitchFaults(stack, 'sw-0003', {});
      const job = await finished(await nvosInstall(stack, 'sw-0003', packageId));
      assert.equal(job.state, 'succeeded', JSON.stringify(job.error));
      assert.equal(job.result!.uploaded, true, 'the short file left by the stall is replaced');
      assert.equal((await stagedFile(stack, 'sw-0003', FILE))!.sha256, digest);
    },
  );

  it(
    'a reboot in the middle of the install, with NVUE unavailable after it: installed again once, the job succeeds',
    { timeout: 180_000 },
    async () => {
      await setSwitchFaults(stack, 'sw-0004', { rebootDuringInstall: true });
      const id = await nvosInstall(stack, 'sw-0004', packageId);
      await waitFor(
        'the reboot during the install',
        async () => (await switchState(stack, 'sw-0004')).rebooting,
        120_000,
      );
      await setSwitchFaults(stack, 'sw-0004', { nvueUnavailable: true });
      await waitFor('the switch booted', async () => !(await switchState(stack, 'sw-0004')).rebooting);
      await new Promise((r) => setTimeout(r, 3_000));
      await setSwitchFaults(stack, 'sw-0004', {});
      const job = await finished(id);
      assert.equal(job.state, 'succeeded', JSON.stringify(job.error));
      const sw = await switchState(stack, 'sw-0004');
      assert.equal(sw.image.current, BUILD);
      assert.equal(sw.counters.installsStarted, 2, 'the interrupted install and one more');
      assert.equal(await imageOpens('sw-0004'), 1);
    },
  );

  it(
    'a worker killed in the middle of the upload: the job completes, the image is uploaded in full once ' +
      'and installed once',
    { timeout: 180_000 },
    async () => {
      await setSwitchFaults(stack, 'sw-0005', { sftpStallAfterBytes: SIZE / 2 });
      const id = await nvosInstall(stack, 'sw-0005', packageId);
      await waitFor(
        'half the image on the switch',
        async () => ((await stagedFile(stack, 'sw-0005', FILE))?.bytesReceived ?? 0) >= SIZE / 4,
        120_000,
      );
      await stack.satellite.kill();
      // Read before clearing the stall: held writes of the dead session must not count as received.
      const partial = (await stagedFile(stack, 'sw-0005', FILE))!;
      await setSwitchFaults(stack, 'sw-0005', {});
      await stack.startSatellite();
      assert.ok(partial.size < SIZE, `killed with ${partial.size} of ${SIZE} bytes on the switch`);
      const job = await finished(id);
      assert.equal(job.state, 'succeeded', JSON.stringify(job.error));
      const file = (await stagedFile(stack, 'sw-0005', FILE))!;
      assert.equal(file.sha256, digest);
      assert.equal(file.uploads, 2, 'the interrupted upload and one full one');
      assert.ok(file.bytesReceived < 2 * SIZE, `one full upload: ${file.bytesReceived} bytes received in all`);
      assert.equal((await switchState(stack, 'sw-0005')).counters.installsStarted, 1);
    },
  );

  it(
    'a worker killed in the middle of the install: the new worker follows the same install, nothing is ' +
      'uploaded or installed twice',
    { timeout: 180_000 },
    async () => {
      const id = await nvosInstall(stack, 'sw-0006', packageId);
      await waitFor(
        'the install started',
        async () => (await switchState(stack, 'sw-0006')).counters.installsStarted === 1,
        120_000,
      );
      await stack.satellite.kill();
      await stack.startSatellite();
      const job = await finished(id);
      assert.equal(job.state, 'succeeded', JSON.stringify(job.error));
      assert.equal(job.result!.installed, true);
      const sw = await switchState(stack, 'sw-0006');
      assert.equal(sw.image.current, BUILD);
      assert.equal(sw.counters.installsStarted, 1, 'no second install');
      assert.equal((await stagedFile(stack, 'sw-0006', FILE))!.uploads, 1, 'no second upload');
    },
  );

  it(
    'a switch presenting a host key other than the pinned one gets no SSH login and no image',
    { timeout: 120_000 },
    async () => {
      const [sw7, sw1] = [
        stack.switches.find((s) => s.id === 'sw-0007')!,
        stack.switches.find((s) => s.id === 'sw-0001')!,
      ];
      const res = expectStatus(201)(
        await stack.api(
          'POST',
          '/v1/devices',
          stack.switchDevice(sw7, `${stack.siteId}-pinned`, { nvos_host_key: sw1.hostKeySha256 }),
          stack.tokens.admin,
        ),
      );
      const started = expectStatus(202)(
        await stack.api(
          'POST',
          `/v1/devices/${(res.body as { id: string }).id}/nvos-install`,
          { package_id: packageId },
          stack.tokens.operator,
        ),
      );
      const job = await finished((started.body as { id: string }).id);
      assert.equal(job.state, 'failed');
      assert.equal(job.error!.code, 'HOST_KEY_MISMATCH');
      const logins = (
        (await (await fetch(`${stack.simAdminUrl}/switches/sw-0007/ssh-requests`)).json()) as {
          items: { op: string }[];
        }
      ).items.filter((r) => r.op === 'auth');
      assert.deepEqual(logins, []);
      assert.equal(await stagedFile(stack, 'sw-0007', FILE), undefined);
    },
  );
});
