import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NvosSimulator } from '@fleet/simulators';
import {
  factoryReset,
  getImage,
  getPlatformFirmware,
  getSystem,
  getVersion,
  installImage,
  installPlatformFirmware,
  isRetryableDuringReboot,
  listImageFiles,
  NvueClient,
  NvueError,
  powerCycle,
  uninstallImage,
  waitForBuild,
  waitUntilReady,
  type ActionProgress,
} from '../src/index.js';
import { clientFor, fast, requests, startSim } from './helpers.js';

const IMAGE = 'nvos-amd64-25.02.5000.bin';
const INSTALL = { '@install': { state: 'start', parameters: { force: true, 'image-file': IMAGE } } };

describe('system, image and platform firmware against the NVOS simulator', () => {
  let sim: NvosSimulator;
  before(async () => {
    sim = await startSim([
      { id: 'new' },
      { id: 'old', imageShape: 'string', installEndState: 'action_success' },
      { id: 'fw' },
      { id: 'fd' },
      { id: 'bad' },
    ]);
  });
  after(() => sim.close());
  const stage = (id: string, name: string) => sim.switch(id).fs.put(`/host/nos-images/${name}`, Buffer.alloc(2048, 1));

  it('reads both system/image shapes into the same state', async () => {
    const expected = { current: '25.02.4282', next: '25.02.4282', partitions: { 1: '25.02.4282' } };
    const a = clientFor(sim, 'new');
    const b = clientFor(sim, 'old');
    try {
      assert.deepEqual(await getImage(a), { ...expected, issuStatus: 'disabled' });
      assert.deepEqual(await getImage(b), expected);
      assert.equal((await getVersion(a)).build, '25.02.4282');
      assert.equal((await getSystem(a))['hostname'], 'new');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('installs an image through the reboot handoff and waits for the new build', async () => {
    stage('new', IMAGE);
    const c = clientFor(sim, 'new', { maxAttempts: 1 });
    try {
      assert.deepEqual(await listImageFiles(c), [IMAGE]);
      const progress: ActionProgress[] = [];
      const result = await installImage(c, IMAGE, { ...fast, onProgress: (p) => progress.push(p) });
      assert.deepEqual([result.state, result.percent, result.rebootHandoff], ['action_error', 100, true]);
      assert.ok(
        progress.some((p) => (p.status?.percent ?? 0) > 0 && (p.status?.percent ?? 0) < 100),
        'progress was reported on the way',
      );
      const install = requests(sim, 'new').find((r) => r.line.startsWith('POST'));
      assert.deepEqual(install, { line: `POST /nvue_v1/system/image/files/${IMAGE}`, status: 202, body: INSTALL });

      // While the switch reboots, NVUE refuses connections: a retryable error.
      while (!sim.switch('new').rebooting) await new Promise((r) => setTimeout(r, 5));
      const down = await getImage(c).catch((e: unknown) => e);
      assert.ok(down instanceof NvueError);
      assert.equal(down.kind, 'Unavailable');
      assert.match(down.causeText, /ECONNREFUSED/);
      assert.equal(isRetryableDuringReboot(down), true);

      const polls: (string | undefined)[] = [];
      const image = await waitForBuild(c, '25.02.5000', { ...fast, onPoll: (s) => polls.push(s?.current) });
      assert.deepEqual([image.current, image.next, image.partitions[2]], ['25.02.5000', '25.02.5000', '25.02.5000']);
      assert.ok(polls.includes(undefined), 'the wait rode over the outage');
      assert.equal(sim.switch('new').counters.installsStarted, 1);

      await uninstallImage(c, fast);
      assert.deepEqual((await getImage(c)).partitions, { 2: '25.02.5000' });
    } finally {
      await c.close();
    }
  });

  it('takes action_success as an ordinary install end too', async () => {
    stage('old', IMAGE);
    const c = clientFor(sim, 'old');
    try {
      const result = await installImage(c, IMAGE, fast);
      assert.deepEqual([result.state, result.rebootHandoff], ['action_success', false]);
      assert.equal((await waitForBuild(c, '25.02.5000', fast)).current, '25.02.5000');
    } finally {
      await c.close();
    }
  });

  it('fails an install of a file that is not there, or one a reboot interrupts, with the switch detail', async () => {
    const c = clientFor(sim, 'bad');
    try {
      const missing = await installImage(c, 'nvos-amd64-25.02.9999.bin', fast).catch((e: unknown) => e);
      assert.ok(missing instanceof NvueError);
      assert.equal(missing.kind, 'ActionFailed');
      assert.match(
        missing.message,
        new RegExp(
          /action \d+ action_failed: Installing image; /.source +
            /image file nvos-amd64-25\.02\.9999\.bin not found in \/host\/nos-images/.source,
        ),
      );

      stage('bad', IMAGE);
      sim.switch('bad').setFaults({ rebootDuringInstall: true });
      const unreachable: NvueError[] = [];
      const cut = await installImage(c, IMAGE, {
        ...fast,
        onProgress: (p) => p.unreachable && unreachable.push(p.unreachable),
      }).catch((e: unknown) => e);
      assert.ok(cut instanceof NvueError);
      assert.equal(cut.kind, 'ActionFailed');
      assert.match(cut.message, /interrupted: the system rebooted/);
      assert.ok(unreachable.length > 0, 'the wait rode over the reboot before reading the failure');
      assert.equal((await getImage(c)).current, '25.02.4282');

      await assert.rejects(installImage(c, '.hidden.bin'), RangeError);
    } finally {
      sim.switch('bad').setFaults({});
      await c.close();
    }
  });

  it('installs platform firmware and sees it run after a power cycle', async () => {
    sim.switch('fw').fs.put('/host/fw-images/nvfw-bmc-88.0002.1400.fwpkg', Buffer.alloc(1024));
    const c = clientFor(sim, 'fw');
    try {
      const before = await getPlatformFirmware(c);
      assert.deepEqual(
        before.map((f) => f.component),
        ['bios', 'bmc', 'cpld1', 'erot', 'fpga'],
      );
      const result = await installPlatformFirmware(c, 'bmc', 'nvfw-bmc-88.0002.1400.fwpkg', fast);
      assert.equal(result.state, 'action_success');
      const post = requests(sim, 'fw').find((r) => r.line.startsWith('POST'));
      assert.deepEqual(post, {
        line: 'POST /nvue_v1/platform/firmware/bmc/files/nvfw-bmc-88.0002.1400.fwpkg',
        status: 202,
        body: { '@install': { state: 'start', parameters: { force: false } } },
      });
      const bmc = (await getPlatformFirmware(c)).find((f) => f.component === 'bmc')!;
      assert.deepEqual([bmc.installed, bmc.actual], ['88.0002.1400', '88.0002.1300']);

      await powerCycle(c);
      await waitUntilReady(c, { ...fast, outageWithinMs: 5_000 });
      assert.equal(sim.switch('fw').counters.reboots, 1);
      assert.equal((await getPlatformFirmware(c)).find((f) => f.component === 'bmc')!.actual, '88.0002.1400');
    } finally {
      await c.close();
    }
  });

  it('factory-resets the switch back to admin/admin', async () => {
    const c = clientFor(sim, 'fd');
    const fresh = new NvueClient({
      baseUrl: sim.nvueUrl('fd'),
      switchId: 'fd',
      credentials: { username: 'admin', password: 'admin' },
      retryBaseDelayMs: 5,
      maxRetryDelayMs: 20,
    });
    try {
      await factoryReset(c);
      assert.deepEqual(requests(sim, 'fd').at(-1), {
        line: 'POST /nvue_v1/system/factory-default',
        status: 202,
        body: { '@reset': { state: 'start', parameters: { force: true } } },
      });
      await waitUntilReady(fresh, { ...fast, outageWithinMs: 5_000 });
      const old = await getSystem(c).catch((e: unknown) => e);
      assert.ok(old instanceof NvueError && old.kind === 'Unauthenticated');
    } finally {
      await c.close();
      await fresh.close();
    }
  });
});
