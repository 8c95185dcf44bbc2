import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SimulatorConfig } from '../src/config.js';
import {
  admin,
  APPLY,
  applyRevision,
  b64,
  eventually,
  finishedAction,
  nv,
  nvueRefused,
  PASSWORD,
  sshLogin,
  startSwitches,
  USER,
  type SwitchSim,
} from './nvos-helpers.js';

const IMAGE = 'nvos-amd64-25.02.5000.bin';

describe('NVOS simulator: NVUE REST', () => {
  let t: SwitchSim;
  before(async () => {
    t = await startSwitches(
      [
        { id: 'obj' },
        { id: 'str', imageShape: 'string', installEndState: 'action_success' },
        { id: 'fw' },
        { id: 'auth' },
        { id: 'faulty' },
      ],
      { timeScale: 0.001, timings: { rebootS: 400, handoffS: 300 } },
    );
  });
  after(() => t.close());
  const stage = (id: string, file: string, size = 4096) => t.nvos.switch(id).fs.put(file, Buffer.alloc(size, 7));

  it('answers only the exact NVUE request bodies, with problem JSON otherwise', async () => {
    const bad = await nv(t, 'obj', 'POST', '/revision', { body: { description: 'x' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.title, 'Bad Request');
    assert.match(bad.body.detail, /Unrecognized key/);
    assert.equal(
      (
        await nv(t, 'obj', 'POST', '/system', {
          body: { '@power-cycle': { state: 'start', parameters: { force: false } } },
        })
      ).status,
      400,
    );
    assert.equal(
      (
        await nv(t, 'obj', 'POST', `/system/image/files/${IMAGE}`, {
          body: { '@install': { state: 'start', parameters: { 'image-file': IMAGE } } },
        })
      ).status,
      400,
    );
    const wrongFile = await nv(t, 'obj', 'POST', `/system/image/files/${IMAGE}`, {
      body: { '@install': { state: 'start', parameters: { force: true, 'image-file': 'other.bin' } } },
    });
    assert.equal(wrongFile.status, 400);
    const rev = (await nv(t, 'obj', 'POST', '/revision', { body: {} })).body;
    assert.equal(typeof rev, 'string', 'the revision id is a JSON string');
    assert.equal((await nv(t, 'obj', 'PATCH', `/revision/${rev}`, { body: { state: 'apply' } })).status, 400);
    assert.equal(
      (await nv(t, 'obj', 'PATCH', '/system/aaa/user/admin', { body: { password: b64('x') } })).status,
      400,
      'a change needs ?rev=',
    );
    assert.equal(
      (await nv(t, 'obj', 'PATCH', `/system/aaa/user/admin?rev=${rev}`, { body: { password: 'not base64!' } })).status,
      400,
    );
    assert.equal((await nv(t, 'obj', 'PATCH', `/system/hostname?rev=${rev}`, { body: { hostname: 'x' } })).status, 400);
    assert.equal((await nv(t, 'obj', 'GET', '/system/nothing')).status, 404);
  });

  it(`runs revisions pending → applying → applied; an apply that changes nothing is invalid with the no-diff \
issue`, async () => {
    const rev = (await nv(t, 'obj', 'POST', '/revision', { body: {} })).body as string;
    assert.equal((await nv(t, 'obj', 'GET', `/revision/${rev}`)).body.state, 'pending');
    assert.equal(
      (await nv(t, 'obj', 'PATCH', `/system/gnmi-server?rev=${rev}`, { body: { state: 'enabled' } })).status,
      200,
    );
    const applying = await nv(t, 'obj', 'PATCH', `/revision/${rev}`, { body: APPLY });
    assert.equal(applying.body.state, 'applying');
    assert.equal(
      (await nv(t, 'obj', 'PATCH', `/system/gnmi-server?rev=${rev}`, { body: { state: 'disabled' } })).status,
      409,
      'no staging into an applied revision',
    );
    const done = await eventually(async () =>
      (await nv(t, 'obj', 'GET', `/revision/${rev}`)).body.state === 'applied' ? true : undefined,
    );
    assert.ok(done);
    assert.equal((await nv(t, 'obj', 'GET', '/system/gnmi-server')).body.state, 'enabled');
    const again = await applyRevision(t, 'obj', [{ path: '/system/gnmi-server', body: { state: 'enabled' } }]);
    assert.equal(again.state, 'invalid');
    assert.deepEqual(again.transition.issue, {
      '00000': { message: 'config apply executed with no config diff', severity: 'info' },
    });
  });

  it('fails applies with the injected issue text', async () => {
    assert.equal(
      (await admin(t, 'PUT', '/switches/faulty/faults', { revisionApplyFails: 'Invalid config: aaa user locked' }))
        .status,
      200,
    );
    const r = await applyRevision(t, 'faulty', [{ path: '/system/gnmi-server', body: { state: 'enabled' } }]);
    assert.equal(r.state, 'failed');
    assert.equal(r.transition.issue['00000'].message, 'Invalid config: aaa user locked');
    await admin(t, 'DELETE', '/switches/faulty/faults');
  });

  it('a new password is what NVUE and SSH accept; unsaved, a reboot brings the old one back', async () => {
    const r = await applyRevision(
      t,
      'auth',
      [{ path: '/system/aaa/user/admin', body: { password: b64('rotated-1') } }],
      {},
      { password: 'rotated-1' },
    );
    assert.equal(r.state, 'applied');
    assert.equal((await nv(t, 'auth', 'GET', '/system')).status, 401);
    assert.equal((await nv(t, 'auth', 'GET', '/system', { password: 'rotated-1' })).status, 200);
    await assert.rejects(sshLogin(t, 'auth'), /authentication methods failed/);
    (await sshLogin(t, 'auth', { password: 'rotated-1' })).end();
    const log = (await admin(t, 'GET', '/switches/auth/requests')).body.items;
    const patch = log.find(
      (e: { method: string; path: string }) =>
        e.method === 'PATCH' && e.path.startsWith('/nvue_v1/system/aaa/user/admin?rev='),
    );
    assert.deepEqual(patch.body, { password: '***' }, 'the log masks the password');

    // Not saved: the power cycle boots the saved configuration.
    const action = (
      await nv(t, 'auth', 'POST', '/system', {
        body: { '@power-cycle': { state: 'start', parameters: { force: true } } },
        password: 'rotated-1',
      })
    ).body;
    assert.equal((await finishedAction(t, 'auth', action, { password: 'rotated-1' })).state, 'action_success');
    await eventually(async () => (t.nvos.switch('auth').rebooting ? true : undefined));
    await eventually(async () => ((await nv(t, 'auth', 'GET', '/system')).status === 200 ? true : undefined));

    await applyRevision(
      t,
      'auth',
      [{ path: '/system/aaa/user/admin', body: { password: b64('rotated-2') } }],
      {},
      { password: 'rotated-2' },
    );
    assert.equal(
      (
        await nv(t, 'auth', 'PATCH', '/revision/applied', {
          body: { state: 'save', 'auto-prompt': { ays: 'ays_yes' } },
          password: 'rotated-2',
        })
      ).status,
      200,
    );
    t.nvos.switch('auth').reboot();
    await eventually(async () =>
      (await nv(t, 'auth', 'GET', '/system', { password: 'rotated-2' })).status === 200 ? true : undefined,
    );
    const state = (await admin(t, 'GET', '/switches/auth')).body;
    assert.equal(state.counters.passwordChanges, 2);
    assert.equal(state.counters.saves, 1);
  });

  it('reports system/image in both shapes', async () => {
    assert.deepEqual((await nv(t, 'obj', 'GET', '/system/image')).body, {
      current: 'partition1',
      next: 'partition1',
      partition1: { 'build-id': '25.02.4282' },
      'issu-status': 'disabled',
    });
    assert.deepEqual((await nv(t, 'str', 'GET', '/system/image')).body, {
      current: '25.02.4282',
      next: '25.02.4282',
      partition1: '25.02.4282',
    });
  });

  it(`installs an image: steps, action_error at 100%, connections refused while rebooting, then the new build \
runs`, async () => {
    stage('obj', `/host/nos-images/${IMAGE}`);
    assert.deepEqual(Object.keys((await nv(t, 'obj', 'GET', '/system/image/files')).body), [IMAGE]);
    const id = (
      await nv(t, 'obj', 'POST', `/system/image/files/${IMAGE}`, {
        body: { '@install': { state: 'start', parameters: { force: true, 'image-file': IMAGE } } },
      })
    ).body;
    const seen = new Set<number>();
    const end = await eventually(async () => {
      const a = (await nv(t, 'obj', 'GET', `/action/${id}`)).body;
      seen.add(a.percentage);
      return a.state === 'action_running' || a.state === 'start' ? undefined : a;
    });
    assert.equal(end.state, 'action_error');
    assert.equal(end.percentage, 100);
    assert.equal(end.status, 'Installing image');
    assert.ok(seen.size >= 2, `progress went through steps: ${[...seen]}`);
    assert.deepEqual((await nv(t, 'obj', 'GET', '/system/image')).body.next, 'partition2');
    await eventually(async () => (t.nvos.switch('obj').rebooting ? true : undefined));
    assert.equal(await nvueRefused(t, 'obj'), true);
    const image = await eventually(
      async () =>
        (await nv(t, 'obj', 'GET', '/system/image')).body as { current: string; partition2: { 'build-id': string } },
    );
    assert.equal(image.current, 'partition2');
    assert.equal(image.partition2['build-id'], '25.02.5000');
    assert.equal((await nv(t, 'obj', 'GET', '/system/version')).body.image, '25.02.5000');
    assert.equal((await admin(t, 'GET', '/switches/obj')).body.counters.installsStarted, 1);

    // Uninstall frees the partition that is not running.
    const un = (
      await nv(t, 'obj', 'POST', '/system/image', {
        body: { '@uninstall': { state: 'start', parameters: { force: true } } },
      })
    ).body;
    assert.equal((await finishedAction(t, 'obj', un)).state, 'action_success');
    assert.deepEqual((await nv(t, 'obj', 'GET', '/system/image')).body, {
      current: 'partition2',
      next: 'partition2',
      partition2: { 'build-id': '25.02.5000' },
      'issu-status': 'disabled',
    });
  });

  it(`can end an install action_success instead, and fails installs of missing files or interrupted by a \
reboot`, async () => {
    stage('str', `/host/nos-images/${IMAGE}`);
    const ok = (
      await nv(t, 'str', 'POST', `/system/image/files/${IMAGE}`, {
        body: { '@install': { state: 'start', parameters: { force: true, 'image-file': IMAGE } } },
      })
    ).body;
    assert.equal((await finishedAction(t, 'str', ok)).state, 'action_success');
    await eventually(async () =>
      (await nv(t, 'str', 'GET', '/system/image')).body.current === '25.02.5000' ? true : undefined,
    );

    const missing = (
      await nv(t, 'str', 'POST', '/system/image/files/nvos-amd64-25.02.9999.bin', {
        body: {
          '@install': { state: 'start', parameters: { force: true, 'image-file': 'nvos-amd64-25.02.9999.bin' } },
        },
      })
    ).body;
    const m = await finishedAction(t, 'str', missing);
    assert.equal(m.state, 'action_failed');
    assert.match(m.detail, /nvos-amd64-25\.02\.9999\.bin not found/);

    await admin(t, 'PUT', '/switches/str/faults', { rebootDuringInstall: true });
    stage('str', '/host/nos-images/nvos-amd64-25.02.6000.bin');
    const cut = (
      await nv(t, 'str', 'POST', '/system/image/files/nvos-amd64-25.02.6000.bin', {
        body: {
          '@install': { state: 'start', parameters: { force: true, 'image-file': 'nvos-amd64-25.02.6000.bin' } },
        },
      })
    ).body;
    await eventually(async () => (t.nvos.switch('str').rebooting ? true : undefined));
    const interrupted = await finishedAction(t, 'str', cut);
    assert.equal(interrupted.state, 'action_failed');
    assert.match(interrupted.detail, /rebooted/);
    assert.equal((await nv(t, 'str', 'GET', '/system/image')).body.current, '25.02.5000', 'the old image still runs');
    await admin(t, 'DELETE', '/switches/str/faults');
  });

  it('installs platform firmware from /host/fw-images; it runs after the next power cycle', async () => {
    const before = (await nv(t, 'fw', 'GET', '/platform/firmware')).body;
    assert.deepEqual(Object.keys(before), ['BMC', 'EROT', 'FPGA', 'CPLD1', 'BIOS']);
    assert.equal((await admin(t, 'GET', '/switches/fw')).body.firmware.bmc.actual, before.BMC['actual-firmware']);
    stage('fw', '/host/fw-images/nvfw-bmc-88.0002.1400.fwpkg');
    t.nvos.switch('fw').fs.mkdir('/host/fw-images/cpld');
    stage('fw', '/host/fw-images/cpld/cpld-0.1.0.vme');
    const res = await nv(t, 'fw', 'POST', '/platform/firmware/bmc/files/nvfw-bmc-88.0002.1400.fwpkg', {
      body: { '@install': { state: 'start', parameters: { force: false } } },
    });
    assert.equal(res.status, 202);
    assert.equal(res.headers.get('content-type'), 'text/plain', 'nvfwupd reads a bare job id');
    assert.equal((await finishedAction(t, 'fw', String(res.body))).state, 'action_success');
    const installed = (await nv(t, 'fw', 'GET', '/platform/firmware/BMC')).body;
    assert.deepEqual([installed['installed-firmware'], installed['actual-firmware']], ['88.0002.1400', '88.0002.1300']);

    const down = await nv(t, 'fw', 'POST', '/platform/firmware/cpld1/files/cpld-0.1.0.vme', {
      body: { '@install': { state: 'start', parameters: { force: false } } },
    });
    const refused = await finishedAction(t, 'fw', String(down.body));
    assert.equal(refused.state, 'action_failed');
    assert.match(refused.detail, /comparison stamp is lower/);
    const forced = await nv(t, 'fw', 'POST', '/platform/firmware/cpld1/files/cpld-0.1.0.vme', {
      body: { '@install': { state: 'start', parameters: { force: true } } },
    });
    assert.equal((await finishedAction(t, 'fw', String(forced.body))).state, 'action_success');

    t.nvos.switch('fw').reboot();
    const after = await eventually(
      async () => (await nv(t, 'fw', 'GET', '/platform/firmware')).body as Record<string, Record<string, string>>,
    );
    assert.equal(after['BMC']!['actual-firmware'], '88.0002.1400');
    assert.equal(after['CPLD1']!['actual-firmware'], '0.1.0');
    assert.equal((await admin(t, 'GET', '/switches/fw')).body.counters.firmwareInstallsStarted, 2);
  });

  it('factory default brings back admin/admin and an empty configuration', async () => {
    await applyRevision(t, 'fw', [{ path: '/system/gnmi-server', body: { state: 'enabled' } }]);
    const id = (
      await nv(t, 'fw', 'POST', '/system/factory-default', {
        body: { '@reset': { state: 'start', parameters: { force: true } } },
      })
    ).body;
    assert.equal((await finishedAction(t, 'fw', id)).state, 'action_success');
    await eventually(async () =>
      (await nv(t, 'fw', 'GET', '/system', { user: 'admin', password: 'admin' })).status === 200 ? true : undefined,
    );
    assert.equal((await nv(t, 'fw', 'GET', '/system')).status, 401, 'the configured password is gone');
    assert.equal((await nv(t, 'fw', 'GET', '/system/gnmi-server', { password: 'admin' })).body.state, 'disabled');
    (await sshLogin(t, 'fw', { password: 'admin' })).end();
    assert.equal((await admin(t, 'GET', '/switches/fw')).body.counters.factoryResets, 1);
  });

  it('fetches an image from a URL into /host/nos-images', async () => {
    const { createServer } = await import('node:http');
    const payload = Buffer.alloc(100_000, 3);
    const server = createServer((_req, res) => res.end(payload)).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/images/nvos-amd64-25.02.7000.bin`;
    try {
      const id = (
        await nv(t, 'faulty', 'POST', '/system/image', {
          body: { '@fetch': { state: 'start', parameters: { 'remote-url': url } } },
        })
      ).body;
      assert.equal((await finishedAction(t, 'faulty', id)).state, 'action_success');
      const files = (await admin(t, 'GET', '/switches/faulty/files')).body.items;
      assert.deepEqual(
        files.map((f: { path: string; size: number }) => [f.path, f.size]),
        [['/host/nos-images/nvos-amd64-25.02.7000.bin', 100_000]],
      );
    } finally {
      server.close();
    }
  });

  it('injects faults through the admin API: 503 with Retry-After, refused connections, hangs', async () => {
    assert.equal((await admin(t, 'PUT', '/switches/faulty/faults', { errorRate: 2 })).status, 400);
    await admin(t, 'PUT', '/switches/faulty/faults', { errorRate: 1, errorStatus: 503 });
    const busy = await nv(t, 'faulty', 'GET', '/system');
    assert.equal(busy.status, 503);
    assert.equal(busy.headers.get('retry-after'), '1');

    await admin(t, 'PUT', '/switches/faulty/faults', { nvueUnavailable: true });
    await eventually(async () => ((await nvueRefused(t, 'faulty')) ? true : undefined));
    (await sshLogin(t, 'faulty')).end();

    await admin(t, 'PUT', '/switches/faulty/faults', { hang: true });
    let settled = false;
    const held = nv(t, 'faulty', 'GET', '/system').then((r) => ((settled = true), r));
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(settled, false);
    await admin(t, 'DELETE', '/switches/faulty/faults');
    assert.equal((await held).status, 200);
    const log = (await admin(t, 'GET', '/switches/faulty/requests')).body.items;
    assert.equal(log.at(-1).status, 200);
  });

  it('lists switches with their host key fingerprints', async () => {
    const list = (await admin(t, 'GET', '/switches')).body.items;
    assert.deepEqual(
      list.map((s: { id: string }) => s.id),
      ['obj', 'str', 'fw', 'auth', 'faulty'],
    );
    assert.match(list[0].hostKeySha256, /^SHA256:[A-Za-z0-9+/]{43}$/);
    assert.equal((await admin(t, 'GET', '/switches/nope')).status, 404);
  });
});

describe('simulator config', () => {
  it('takes switches alone, and refuses a bad build id', () => {
    const sw = {
      id: 's1',
      address: '127.0.0.5',
      nvuePort: 8444,
      sshPort: 8445,
      username: USER,
      password: PASSWORD,
      nvosVersion: '25.02.4282',
      imageShape: 'string',
    };
    assert.equal(SimulatorConfig.parse({ admin: { port: 0 }, switches: [sw] }).switches.length, 1);
    assert.equal(
      SimulatorConfig.safeParse({ admin: { port: 0 }, switches: [{ ...sw, nvosVersion: 'latest' }] }).success,
      false,
    );
    assert.equal(SimulatorConfig.safeParse({ admin: { port: 0 } }).success, false);
  });
});
