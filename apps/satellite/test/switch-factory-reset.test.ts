import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import {
  createSwitchFactoryResetActivity,
  type FactoryResetHeartbeat,
} from '../src/activities/switch-factory-reset.js';
import { openSsh } from '../src/nvos/connect.js';
import { loggingInAs } from '../src/switch/access.js';
import { createSecretWriter, type SecretWriter } from '../src/credentials/secret-writer.js';
import { mockEnv } from './helpers/devices.js';
import { nvueLines, runIn, startSwitchBench, USER, type SwitchBench } from './switch-helpers.js';

const FACTORY_RESET = 'POST /nvue_v1/system/factory-default';
const RESET_BODY = { '@reset': { state: 'start', parameters: { force: true } } };

describe('resetSwitchToFactoryDefault activity', () => {
  let bench: SwitchBench;
  before(async () => {
    bench = await startSwitchBench([
      { id: 'sw', password: 'configured-pw' },
      { id: 'defaults', password: 'admin' },
      { id: 'retried', password: 'configured-pw' },
      { id: 'env', password: 'configured-pw' },
      { id: 'locked', password: 'unknown-pw' },
      { id: 'rekeyed', password: 'configured-pw', newHostKeyOnFactoryReset: true },
      { id: 'pinned', password: 'configured-pw', newHostKeyOnFactoryReset: true },
    ]);
    // The site believes these switches still have passwords they no longer have.
    await bench.secretWriter.write({
      'switch/defaults': { username: USER, password: 'stale-pw' },
      'switch/locked': { username: USER, password: 'stale-pw' },
    });
  });
  after(() => bench.close());

  const timings = { pollIntervalS: 0.01, maxWaitS: 10 };
  const reset = (writer: SecretWriter = bench.secretWriter) =>
    createSwitchFactoryResetActivity({ ...bench.access, secretWriter: writer }).resetSwitchToFactoryDefault;
  /** The key the satellite's known-hosts file holds for a device. */
  const recorded = (deviceId: string) =>
    (JSON.parse(readFileSync(join(bench.dir, 'known-hosts.json'), 'utf8')) as Record<string, { fingerprint: string }>)[
      deviceId
    ]?.fingerprint;
  const posts = (id: string) => nvueLines(bench.sim, id).filter((r) => r.line === FACTORY_RESET);

  it(`submits the reset, waits for admin/admin over SSH after the reboot, and stores admin/admin under the \
reference`, async () => {
    const env = mockEnv();
    const beats: FactoryResetHeartbeat[] = [];
    env.on('heartbeat', (d: FactoryResetHeartbeat) => beats.push(d));
    const result = await runIn(env, reset(), { target: bench.target('sw'), timings });
    assert.equal(result.submittedWithDefaults, false);
    assert.equal(result.storedDefaultCredentials, true);
    assert.ok(result.backAfterS > 0);
    assert.deepEqual(posts('sw'), [{ line: FACTORY_RESET, status: 202, body: RESET_BODY }]);
    assert.equal(bench.sim.switch('sw').counters.factoryResets, 1);
    assert.ok(
      beats.some((b) => b.outageSeen),
      'waited through the reboot',
    );
    assert.ok(
      bench.sim.switch('sw').sshRequests.some((r) => r.op === 'auth' && r.user === 'admin' && r.ok),
      'admin/admin logged in',
    );
    assert.deepEqual(bench.secrets()['switch/sw'], { username: 'admin', password: 'admin' });
    assert.deepEqual(bench.secrets()['switch/sw#previous'], { username: USER, password: 'configured-pw' });
  });

  it(`a switch that comes back with a new SSH host key: trusted once admin/admin logs in through it, so later logins \
work`, async () => {
    const target = bench.target('rekeyed');
    const before = bench.sim.switch('rekeyed').hostKey.sha256;
    (await openSsh(bench.access, target, new AbortController().signal)).close();
    assert.equal(recorded(target.deviceId), before, 'trusted on first use');
    await runIn(mockEnv(), reset(), { target, timings });
    const after = bench.sim.switch('rekeyed').hostKey.sha256;
    assert.notEqual(after, before);
    assert.equal(recorded(target.deviceId), after);
    (
      await openSsh(
        loggingInAs(bench.access, { username: 'admin', password: 'admin' }),
        target,
        new AbortController().signal,
      )
    ).close();
    assert.ok(bench.logs.some((l) => l.includes('new SSH host key') && l.includes(after)));
  });

  it(`a pinned switch that comes back with another key fails HOST_KEY_MISMATCH naming both keys: a pin is never \
replaced`, async () => {
    const pinned = bench.sim.switch('pinned').hostKey.sha256;
    const err = await runIn(mockEnv(), reset(), {
      target: { ...bench.target('pinned'), hostKeyFingerprint: pinned },
      timings,
    }).catch((e: unknown) => e);
    assert.ok(err instanceof ApplicationFailure, String(err));
    assert.equal(err.type, 'HOST_KEY_MISMATCH');
    assert.ok(
      err.message.includes(pinned) && err.message.includes(bench.sim.switch('pinned').hostKey.sha256),
      err.message,
    );
    assert.equal(bench.sim.switch('pinned').counters.factoryResets, 1);
  });

  it('submits with admin/admin when the switch refuses the configured credentials', async () => {
    const result = await runIn(mockEnv(), reset(), { target: bench.target('defaults'), timings });
    assert.equal(result.submittedWithDefaults, true);
    assert.deepEqual(
      posts('defaults').map((r) => r.status),
      [401, 202],
    );
    assert.equal(bench.sim.switch('defaults').counters.factoryResets, 1);
  });

  it('a retry after the submission only waits: one reset', async () => {
    const first = mockEnv();
    let sent: FactoryResetHeartbeat | undefined;
    first.on('heartbeat', (d: FactoryResetHeartbeat) => {
      sent ??= d;
      first.cancel();
    });
    await assert.rejects(runIn(first, reset(), { target: bench.target('retried'), timings }), CancelledFailure);
    assert.ok(sent);
    const result = await runIn(mockEnv({ heartbeatDetails: sent, attempt: 2 }), reset(), {
      target: bench.target('retried'),
      timings,
    });
    assert.equal(result.submittedWithDefaults, false);
    assert.equal(posts('retried').length, 1);
    assert.equal(bench.sim.switch('retried').counters.factoryResets, 1);
  });

  it('with an env secret store the reset completes and says the store could not follow', async () => {
    const result = await runIn(mockEnv(), reset(createSecretWriter({ provider: 'env', prefix: 'FLEET_SECRET' })), {
      target: bench.target('env'),
      timings,
    });
    assert.equal(result.storedDefaultCredentials, false);
    assert.deepEqual(bench.secrets()['switch/env'], { username: USER, password: 'configured-pw' });
  });

  it(`a switch refusing both the configured credentials and admin/admin fails FAILED_PRECONDITION, nothing \
reset`, async () => {
    const err = await runIn(mockEnv(), reset(), { target: bench.target('locked'), timings }).catch((e: unknown) => e);
    assert.ok(err instanceof ApplicationFailure);
    assert.equal(err.type, 'FAILED_PRECONDITION');
    assert.match(
      err.message,
      /dev-locked: the switch refuses both the configured credentials \(switch\/locked\) and admin\/admin/,
    );
    assert.equal(bench.sim.switch('locked').counters.factoryResets, 0);
  });
});
