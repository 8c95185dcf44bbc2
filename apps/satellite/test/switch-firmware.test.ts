import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { SwitchFirmwareStep } from '@fleet/domain';
import { NvueClient, startAction } from '@fleet/nvue';
import type { FirmwareInstallHeartbeat } from '../src/activities/switch-firmware.js';
import { createSwitchFirmwareActivities } from '../src/activities/switch-firmware.js';
import { createSwitchPowerCycleActivity, type PowerCycleHeartbeat } from '../src/activities/switch-power-cycle.js';
import { mockEnv, sleep } from './helpers/devices.js';
import { nvueLines, runIn, startSwitchBench, USER, type SwitchBench } from './switch-helpers.js';

describe('switch firmware activities', () => {
  let bench: SwitchBench;
  let fw: ReturnType<typeof createSwitchFirmwareActivities>;
  let power: ReturnType<typeof createSwitchPowerCycleActivity>['powerCycleSwitch'];
  const steps: Record<string, SwitchFirmwareStep> = {};
  const poll = { pollIntervalS: 0.005, timeoutS: 5 };

  before(async () => {
    bench = await startSwitchBench(
      ['sw', 'resume', 'lost', 'fails', 'stall', 'cycle', 'dark'].map((id) => ({ id, password: `pw-${id}` })),
      // A reboot longer than the NVUE client's own retries of a refused connection (about a second), so probes see it.
      // An install long enough (0.6 s) for a retry to find it running.
      { sftpStepTimeoutS: 0.3, timings: { rebootS: 1500, firmwareInstallS: 600 } },
    );
    steps['bmc'] = bench.firmwareStep('bmc', '88.0002.1400');
    steps['erot'] = bench.firmwareStep('erot', '1.4.9');
    steps['fpga'] = bench.firmwareStep('fpga', '0.27.0');
    steps['old-fpga'] = bench.firmwareStep('fpga', '0.25.0');
    steps['big'] = bench.firmwareStep('cpld1', '0.2.2', 1 << 20);
    fw = createSwitchFirmwareActivities({ ...bench.access, artifacts: bench.artifacts });
    power = createSwitchPowerCycleActivity(bench.access).powerCycleSwitch;
  });
  after(() => bench.close());

  const stage = (id: string, step: SwitchFirmwareStep) =>
    runIn(mockEnv(), fw.stageSwitchFirmware, { target: bench.target(id), step });
  const install = (id: string, step: SwitchFirmwareStep, force = false, env = mockEnv()) =>
    runIn(env, fw.installSwitchFirmware, { target: bench.target(id), step, force, ...poll });

  it('reads the running and the pending versions from GET /nvue_v1/platform/firmware', async () => {
    const r = await runIn(mockEnv(), fw.readSwitchFirmware, { target: bench.target('sw') });
    assert.deepEqual(r, {
      deviceId: 'dev-sw',
      components: [
        { id: 'bios', version: '2.13.0' },
        { id: 'bmc', version: '88.0002.1300' },
        { id: 'cpld1', version: '0.2.1' },
        { id: 'erot', version: '1.4.8' },
        { id: 'fpga', version: '0.26.0' },
      ],
      pending: [],
    });
  });

  it('stages over SFTP into /host/fw-images, once: a file of the same size is not sent again', async () => {
    assert.deepEqual(await stage('sw', steps['bmc']!), {
      remotePath: `/host/fw-images/${steps['bmc']!.fileName}`,
      bytes: 64 * 1024,
      uploaded: true,
    });
    assert.equal((await stage('sw', steps['bmc']!)).uploaded, false);
    const file = bench.sim.switch('sw').fs.file(`/host/fw-images/${steps['bmc']!.fileName}`);
    assert.equal(file?.sha256, steps['bmc']!.packageDigest, 'the bytes the cache holds');
    assert.equal(file?.uploads, 1);
  });

  it(`installs a staged component with the NVUE action, heartbeating its id; the new version waits for a power \
cycle`, async () => {
    const env = mockEnv();
    const beats: FirmwareInstallHeartbeat[] = [];
    env.on('heartbeat', (d: FirmwareInstallHeartbeat) => beats.push(d));
    const outcome = await install('sw', steps['bmc']!, false, env);
    assert.equal(outcome.state, 'installed');
    assert.ok(outcome.state === 'installed' && outcome.actionId && !outcome.alreadyInstalled);
    assert.ok(
      beats.length > 0 && beats.every((b) => b.actionId === (outcome.state === 'installed' ? outcome.actionId : '')),
    );
    const post = nvueLines(bench.sim, 'sw').find((r) => r.line.startsWith('POST'));
    assert.deepEqual(post, {
      line: `POST /nvue_v1/platform/firmware/bmc/files/${steps['bmc']!.fileName}`,
      status: 202,
      body: { '@install': { state: 'start', parameters: { force: false } } },
    });
    const r = await runIn(mockEnv(), fw.readSwitchFirmware, { target: bench.target('sw') });
    assert.deepEqual(r.pending, [{ id: 'bmc', version: '88.0002.1400' }]);
    assert.equal(r.components.find((c) => c.id === 'bmc')?.version, '88.0002.1300');

    // Asked again (a retry whose heartbeat was lost): installed already, nothing sent.
    const again = await install('sw', steps['bmc']!);
    assert.deepEqual(again, { state: 'installed', installed: '88.0002.1400', alreadyInstalled: true });
    assert.equal(bench.sim.switch('sw').counters.firmwareInstallsStarted, 1);
  });

  it('a retry follows the action its heartbeat recorded instead of installing again', async () => {
    await stage('resume', steps['erot']!);
    const first = mockEnv();
    let recorded: FirmwareInstallHeartbeat | undefined;
    first.on('heartbeat', (d: FirmwareInstallHeartbeat) => {
      recorded ??= d;
      first.cancel();
    });
    await assert.rejects(install('resume', steps['erot']!, false, first), CancelledFailure);
    assert.ok(recorded?.actionId);
    const outcome = await install('resume', steps['erot']!, false, mockEnv({ heartbeatDetails: recorded, attempt: 2 }));
    assert.deepEqual(outcome, {
      state: 'installed',
      installed: '1.4.9',
      alreadyInstalled: false,
      actionId: recorded.actionId,
    });
    assert.equal(bench.sim.switch('resume').counters.firmwareInstallsStarted, 1);
  });

  it(`a retry whose first attempt lost the answer to its POST follows the install the switch runs, not a second \
one`, async () => {
    await stage('lost', steps['fpga']!);
    // The first attempt's POST landed, but its answer (the action id) never came back.
    const c = new NvueClient({
      baseUrl: bench.sim.nvueUrl('lost'),
      credentials: { username: USER, password: 'pw-lost' },
      maxAttempts: 1,
    });
    const started = await startAction(c, `/platform/firmware/fpga/files/${steps['fpga']!.fileName}`, {
      '@install': { state: 'start', parameters: { force: false } },
    });
    const outcome = await install('lost', steps['fpga']!, false, mockEnv({ attempt: 2 }));
    assert.deepEqual(outcome, { state: 'installed', installed: '0.27.0', alreadyInstalled: false, actionId: started });
    assert.equal(bench.sim.switch('lost').counters.firmwareInstallsStarted, 1);
    assert.equal(
      nvueLines(bench.sim, 'lost').filter((r) => r.line.startsWith('POST /nvue_v1/platform')).length,
      1,
      'one install POST in all',
    );
  });

  it('a failed install is a TASK_FAILED result carrying the switch detail; a downgrade needs force', async () => {
    await stage('fails', steps['fpga']!);
    bench.sim.switch('fails').setFaults({ installFailure: true });
    const failed = await install('fails', steps['fpga']!);
    assert.equal(failed.state, 'failed');
    assert.ok(
      failed.state === 'failed' &&
        failed.code === 'TASK_FAILED' &&
        /fpga: action \d+ action_failed: .*flash write error/.test(failed.message),
      JSON.stringify(failed),
    );
    bench.sim.switch('fails').setFaults({});

    await stage('fails', steps['old-fpga']!);
    const refused = await install('fails', steps['old-fpga']!);
    assert.ok(
      refused.state === 'failed' &&
        refused.code === 'TASK_FAILED' &&
        /Component comparison stamp is lower: 0\.25\.0 < 0\.26\.0/.test(refused.message),
      JSON.stringify(refused),
    );
    const forced = await install('fails', steps['old-fpga']!, true);
    assert.equal(forced.state, 'installed');
    const post = nvueLines(bench.sim, 'fails')
      .filter((r) => r.line.startsWith('POST'))
      .at(-1);
    assert.deepEqual(post?.body, { '@install': { state: 'start', parameters: { force: true } } });
  });

  it('refuses steps that are not a switch component, or whose file name could leave the firmware folder', async () => {
    for (const step of [
      { ...steps['bmc']!, name: 'hmc' as 'bmc' },
      { ...steps['bmc']!, components: [{ id: 'erot', version: '1' }] },
      { ...steps['bmc']!, fileName: '../etc/passwd' },
    ]) {
      const err = await stage('sw', step).catch((e: unknown) => e);
      assert.ok(err instanceof ApplicationFailure && err.type === 'INVALID_ARGUMENT' && err.nonRetryable, String(err));
      assert.match(err.message, /^dev-sw: /);
    }
  });

  it(`a stalled SFTP transfer fails SFTP_STALL naming the switch and the file; the retry uploads it \
whole`, async () => {
    bench.sim.switch('stall').setFaults({ sftpStallAfterBytes: 128 * 1024 });
    const err = await stage('stall', steps['big']!).catch((e: unknown) => e);
    assert.ok(err instanceof ApplicationFailure, String(err));
    assert.equal(err.type, 'SFTP_STALL');
    assert.equal(err.nonRetryable, false);
    assert.match(
      err.message,
      new RegExp(`dev-stall .*no progress on /host/fw-images/${steps['big']!.fileName} for 300 ms`),
    );
    // Once the abandoned channel is gone, clearing the fault drops the held writes: the switch keeps a partial file.
    await sleep(100);
    bench.sim.switch('stall').setFaults({});
    assert.deepEqual(await stage('stall', steps['big']!), {
      remotePath: `/host/fw-images/${steps['big']!.fileName}`,
      bytes: 1 << 20,
      uploaded: true,
    });
    assert.equal(
      bench.sim.switch('stall').fs.file(`/host/fw-images/${steps['big']!.fileName}`)?.sha256,
      steps['big']!.packageDigest,
    );
  });

  it(`activation: one power cycle, then the platform-firmware probe until the switch is back with the new \
versions`, async () => {
    await stage('cycle', steps['bmc']!);
    assert.equal((await install('cycle', steps['bmc']!)).state, 'installed');
    const env = mockEnv();
    const beats: PowerCycleHeartbeat[] = [];
    env.on('heartbeat', (d: PowerCycleHeartbeat) => beats.push(d));
    const back = await runIn(env, power, { target: bench.target('cycle'), probeIntervalS: 0.01, probes: 300 });
    assert.equal(back.outageSeen, true);
    assert.equal(bench.sim.switch('cycle').counters.reboots, 1);
    assert.deepEqual(bench.sim.switch('cycle').firmware.bmc, { actual: '88.0002.1400', installed: '88.0002.1400' });
    assert.ok(beats[0]?.actionId && beats.some((b) => b.outageSeen));
    assert.deepEqual(
      nvueLines(bench.sim, 'cycle')
        .filter((r) => r.line === 'POST /nvue_v1/system')
        .map((r) => r.body),
      [{ '@power-cycle': { state: 'start', parameters: { force: true } } }],
    );

    // A retry whose heartbeat says the cycle was sent only waits: no second power cycle.
    const retried = await runIn(mockEnv({ heartbeatDetails: beats.at(-1), attempt: 2 }), power, {
      target: bench.target('cycle'),
      probeIntervalS: 0.01,
      probes: 300,
    });
    assert.equal(retried.outageSeen, true);
    assert.equal(bench.sim.switch('cycle').counters.reboots, 1);
  });

  it(`rides over NVUE staying unavailable after the reboot, and fails DEADLINE_EXCEEDED when it never \
returns`, async () => {
    const sw = bench.sim.switch('dark');
    /** Takes NVUE away once the power cycle has been taken, for the reboot and after. */
    const darkAfterCycle = async () => {
      while (!sw.rebooting) await sleep(1);
      sw.setFaults({ nvueUnavailable: true });
    };
    const running = runIn(mockEnv(), power, { target: bench.target('dark'), probeIntervalS: 0.01, probes: 300 });
    await darkAfterCycle();
    setTimeout(() => sw.setFaults({}), 2_000);
    const back = await running;
    assert.equal(back.outageSeen, true);
    assert.ok(back.backAfterS >= 2, `back after ${back.backAfterS}s; NVUE was away for 2 s`);

    const never = runIn(mockEnv(), power, { target: bench.target('dark'), probeIntervalS: 0.02, probes: 20 });
    await darkAfterCycle();
    const err = await never.catch((e: unknown) => e);
    sw.setFaults({});
    assert.ok(err instanceof ApplicationFailure, String(err));
    assert.equal(err.type, 'DEADLINE_EXCEEDED');
    assert.match(
      err.message,
      /dev-dark: no answer to GET \/nvue_v1\/platform\/firmware within 0\.4s of the reboot request \(it went down\)/,
    );
  });
});
