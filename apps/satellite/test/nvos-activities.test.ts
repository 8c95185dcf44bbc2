import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { pino } from 'pino';
import type { NvosActivities, NvosTarget } from '@fleet/domain';
import { startNvosSimulator, type NvosSimulator, type SwitchSpec } from '@fleet/simulators';
import { createNvosActivities } from '../src/activities/nvos.js';
import type { InstallHeartbeat } from '../src/activities/nvos-install.js';
import { SatelliteConfig } from '../src/config.js';
import { KnownHosts } from '../src/nvos/known-hosts.js';
import { UnknownCredentialError, type SecretStore } from '../src/secrets/index.js';
import { mockEnv, sleep } from './helpers/devices.js';

type Env = ReturnType<typeof mockEnv>;

const PASSWORD = `pw-${randomBytes(6).toString('hex')}`;
const FILE = 'nvos-amd64-25.06.1000.bin';
const BUILD = '25.06.1000';
const secrets: SecretStore = {
  resolve: async (ref) => {
    if (ref === 'nvos/good') return { username: 'admin', password: PASSWORD };
    throw new UnknownCredentialError(ref);
  },
};

describe('NVOS activities against the simulated switch', () => {
  let sim: NvosSimulator;
  let dir: string;
  let imagePath: string;
  let image: { digest: string; size: number; fileName: string };
  let activities: ReturnType<typeof createNvosActivities>;
  const ids = ['fresh', 'pinned', 'stall', 'install', 'resume', 'unrecorded', 'interrupted', 'broken', 'away', 'tofu'];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleet-nvos-'));
    // Larger than the SFTP client's write window (64 × 128 KiB), so a stall leaves a short file behind.
    const bytes = randomBytes(12 * 1024 * 1024 + 17);
    imagePath = join(dir, 'image.bin');
    await writeFile(imagePath, bytes);
    image = { digest: createHash('sha256').update(bytes).digest('hex'), size: bytes.length, fileName: FILE };
    const switches: SwitchSpec[] = ids.map((id, i) => ({
      id,
      address: `127.0.0.${20 + i}`,
      nvuePort: 0,
      sshPort: 0,
      username: 'admin',
      password: PASSWORD,
      nvosVersion: '25.02.4282',
    }));
    // 1/1000 speed: install 0.3 s; a 2 s reboot, long enough for the NVUE client's own retries to give up on it.
    sim = await startNvosSimulator({ switches, timeScale: 0.001, timings: { rebootS: 2000 } });
    const nvos = SatelliteConfig.shape.nvos.parse({
      sftpStepTimeoutS: 2,
      connectTimeoutMs: 2_000,
      requestTimeoutMs: 2_000,
    });
    activities = createNvosActivities({
      secrets,
      log: pino({ level: 'silent' }),
      knownHosts: new KnownHosts(join(dir, 'data', 'nvos-known-hosts.json')),
      nvos,
      artifacts: { acquire: async () => ({ path: imagePath, release: () => undefined }) },
    });
  });
  after(async () => {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  const target = (id: string, extra: Partial<NvosTarget> = {}): NvosTarget => ({
    deviceId: `dev-${id}`,
    nvueUrl: sim.nvueUrl(id),
    ssh: sim.ssh(id),
    credentialRef: 'nvos/good',
    ...extra,
  });
  const run = <K extends keyof NvosActivities>(
    env: Env,
    name: K,
    input: Parameters<NvosActivities[K]>[0],
    from: NvosActivities = activities,
  ): ReturnType<NvosActivities[K]> =>
    env.run(from[name] as (i: typeof input) => ReturnType<NvosActivities[K]>, input) as ReturnType<NvosActivities[K]>;
  const install = (id: string, env = mockEnv()) =>
    run(env, 'installNvosImage', {
      target: target(id),
      fileName: FILE,
      buildId: BUILD,
      pollIntervalS: 0.02,
      timeoutS: 20,
    });
  const awaitBuild = (id: string, timeoutS = 20) =>
    run(mockEnv(), 'awaitNvosBuild', { target: target(id), buildId: BUILD, pollIntervalS: 0.02, timeoutS });
  const stage = (id: string, extra: Partial<NvosTarget> = {}) =>
    run(mockEnv(), 'stageNvosImage', { target: target(id, extra), image });
  const failure = async (p: Promise<unknown>): Promise<ApplicationFailure> => {
    const err = await p.then(
      () => assert.fail('expected a failure'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApplicationFailure, String(err));
    return err;
  };

  it('reads the image state, stages the image once, and trusts the host key it first saw', async () => {
    assert.deepEqual(await run(mockEnv(), 'readNvosImage', { target: target('fresh') }), {
      deviceId: 'dev-fresh',
      current: '25.02.4282',
      next: '25.02.4282',
    });
    const first = await stage('fresh');
    assert.deepEqual(first, { remotePath: `/host/nos-images/${FILE}`, bytes: image.size, uploaded: true });
    const file = sim.switch('fresh').fs.file(`/host/nos-images/${FILE}`)!;
    assert.equal(file.sha256, image.digest, 'the switch holds the image byte for byte');
    assert.equal((await stage('fresh')).uploaded, false, 'same size on the switch: not sent again');
    assert.equal(file.uploads, 1);
    const known = JSON.parse(await readFile(join(dir, 'data', 'nvos-known-hosts.json'), 'utf8')) as Record<
      string,
      { fingerprint: string }
    >;
    assert.equal(known['dev-fresh']!.fingerprint, sim.switch('fresh').hostKey.sha256);
  });

  it('a host key other than the pinned or first-seen one is refused before the password is sent', async () => {
    assert.equal((await stage('pinned', { hostKeyFingerprint: sim.switch('pinned').hostKey.sha256 })).uploaded, true);
    const pinned = await failure(stage('pinned', { hostKeyFingerprint: sim.switch('fresh').hostKey.sha256 }));
    assert.equal(pinned.type, 'HOST_KEY_MISMATCH');
    assert.equal(pinned.nonRetryable, true);
    // A device whose first-seen key is another switch's: TOFU behaves as pinned to it.
    const knownHosts = join(dir, 'data', 'nvos-known-hosts.json');
    const known = JSON.parse(await readFile(knownHosts, 'utf8')) as Record<string, unknown>;
    await writeFile(
      knownHosts,
      JSON.stringify({
        ...known,
        'dev-tofu': { fingerprint: sim.switch('fresh').hostKey.sha256, host: 'x', firstSeenAt: 'x' },
      }),
    );
    const fresh = createNvosActivities({
      secrets,
      log: pino({ level: 'silent' }),
      knownHosts: new KnownHosts(knownHosts),
      nvos: SatelliteConfig.shape.nvos.parse({}),
      artifacts: { acquire: async () => ({ path: imagePath, release: () => undefined }) },
    });
    const tofu = await failure(run(mockEnv(), 'stageNvosImage', { target: target('tofu'), image }, fresh));
    assert.equal(tofu.type, 'HOST_KEY_MISMATCH');
    assert.match(tofu.message, /does not match/);
    const logins = sim.switch('tofu').sshRequests.filter((r) => r.op === 'auth');
    assert.deepEqual(logins, [], 'no credential reached the impostor');
  });

  it('an SFTP stall fails the upload after the step timeout, naming the step and the file', async () => {
    sim.switch('stall').setFaults({ sftpStallAfterBytes: 1024 * 1024 });
    const stalled = await failure(stage('stall'));
    assert.equal(stalled.type, 'SFTP_STALL');
    assert.equal(stalled.nonRetryable, false, 'worth another attempt');
    assert.match(
      stalled.message,
      /upload: no progress on \/host\/nos-images\/nvos-amd64-25\.06\.1000\.bin for 2000 ms/,
    );
    assert.doesNotMatch(stalled.message, new RegExp(PASSWORD));
    sim.switch('stall').setFaults({});
    assert.equal((await stage('stall')).uploaded, true, 'the partial file is replaced once the switch answers again');
    assert.equal(sim.switch('stall').fs.file(`/host/nos-images/${FILE}`)!.sha256, image.digest);
  });

  it(`installs up to the reboot handoff, then sees the switch come back running the build; again is a \
no-op`, async () => {
    await stage('install');
    const env = mockEnv();
    const beats: InstallHeartbeat[] = [];
    env.on('heartbeat', (d: InstallHeartbeat) => beats.push(d));
    const done = await install('install', env);
    assert.equal(done.alreadyCurrent, false);
    assert.equal(done.installsStarted, 1);
    assert.ok(
      beats.some((b) => b.actionId === done.actionId),
      'the action id was heartbeated',
    );
    assert.deepEqual(await awaitBuild('install'), { deviceId: 'dev-install', current: BUILD, next: BUILD });
    assert.equal(sim.switch('install').counters.installsStarted, 1);
    assert.equal(sim.switch('install').counters.reboots, 1);
    assert.deepEqual(await install('install'), { alreadyCurrent: true, actionId: null, installsStarted: 0 });
    assert.equal(sim.switch('install').counters.installsStarted, 1);
  });

  it('a retry after a lost worker follows the recorded action and never installs twice', async () => {
    await stage('resume');
    const first = mockEnv();
    let recorded: InstallHeartbeat | undefined;
    first.on('heartbeat', (d: InstallHeartbeat) => {
      if (d.actionId && !recorded) {
        recorded = d;
        first.cancel();
      }
    });
    await assert.rejects(install('resume', first), CancelledFailure);
    assert.ok(recorded);
    const done = await install('resume', mockEnv({ heartbeatDetails: recorded, attempt: 2 }));
    assert.equal(done.actionId, recorded.actionId);
    assert.equal(done.alreadyCurrent, false);
    await awaitBuild('resume');
    assert.equal(sim.switch('resume').counters.installsStarted, 1);
  });

  it('a retry whose heartbeat never carried the action id follows the install the switch is running', async () => {
    await stage('unrecorded');
    const sw = sim.switch('unrecorded');
    const first = mockEnv();
    const lost = install('unrecorded', first);
    while (sw.counters.installsStarted === 0) await sleep(1);
    first.cancel();
    await assert.rejects(lost, CancelledFailure);
    const done = await install('unrecorded', mockEnv({ attempt: 2 }));
    assert.equal(done.alreadyCurrent, false);
    assert.equal(done.installsStarted, 1);
    await awaitBuild('unrecorded');
    assert.equal(sw.counters.installsStarted, 1);
  });

  it('an install a reboot interrupted is started once more; the switch ends on the build', async () => {
    await stage('interrupted');
    const sw = sim.switch('interrupted');
    sw.setFaults({ rebootDuringInstall: true });
    const running = install('interrupted');
    while (sw.counters.reboots === 0) await sleep(5);
    sw.setFaults({});
    const done = await running;
    assert.equal(done.installsStarted, 2);
    await awaitBuild('interrupted');
    assert.equal(sw.counters.installsStarted, 2);
  });

  it('a failed install fails with the switch issue text and is not retried', async () => {
    await stage('broken');
    sim.switch('broken').setFaults({ installFailure: true });
    const failed = await failure(install('broken'));
    sim.switch('broken').setFaults({});
    assert.equal(failed.type, 'NVOS_INSTALL_FAILED');
    assert.equal(failed.nonRetryable, true);
    assert.match(failed.message, /dev-broken: .*image install failed: nvos-amd64-25\.06\.1000\.bin did not verify/);
    assert.equal(sim.switch('broken').counters.installsStarted, 1);
  });

  it(`waits out NVUE being unavailable after the reboot; a switch back on the old build fails \
verification`, async () => {
    await stage('away');
    await install('away');
    const sw = sim.switch('away');
    sw.setFaults({ nvueUnavailable: true });
    const waiting = awaitBuild('away');
    while (sw.rebooting || sw.counters.reboots === 0) await sleep(5);
    await sleep(200);
    sw.setFaults({});
    assert.equal((await waiting).current, BUILD);

    const noBuild = await failure(awaitBuild('broken', 5));
    assert.equal(noBuild.type, 'VERIFICATION_FAILED');
    assert.match(noBuild.message, /came back running 25\.02\.4282, not 25\.06\.1000/);
  });
});
