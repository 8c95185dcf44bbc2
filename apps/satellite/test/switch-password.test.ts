import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { createSwitchPasswordActivity, type RotationHeartbeat } from '../src/activities/switch-password.js';
import { createSecretWriter, type SecretWriter } from '../src/credentials/secret-writer.js';
import { mockEnv } from './helpers/devices.js';
import { logsIn, nvueLines, runIn, startSwitchBench, USER, type SwitchBench } from './switch-helpers.js';

describe('rotateSwitchPassword activity', () => {
  let bench: SwitchBench;
  before(async () => {
    bench = await startSwitchBench([
      { id: 'sw1', password: 'initial-pw-1' },
      { id: 'retry', password: 'initial-pw-2' },
      { id: 'apply-fails', password: 'initial-pw-3' },
      { id: 'env', password: 'initial-pw-4' },
      { id: 'stale', password: 'on-the-switch-only' },
      { id: 'elsewhere', password: 'initial-pw-6' },
      { id: 'bmc-ref', password: 'initial-pw-7' },
    ]);
    // What the satellite believes `stale`'s password is differs from what the switch has.
    await bench.secretWriter.write({ 'switch/stale': { username: USER, password: 'long-forgotten' } });
  });
  after(() => bench.close());

  const rotation = (writer: SecretWriter = bench.secretWriter) =>
    createSwitchPasswordActivity({
      ...bench.access,
      secretWriter: writer,
      pendingPasswords: bench.pendingPasswords,
      pollIntervalMs: 5,
    }).rotateSwitchPassword;

  it('generates a password, applies it with a revision, proves it over NVUE and SSH, then stores it', async () => {
    const env = mockEnv();
    const beats: RotationHeartbeat[] = [];
    env.on('heartbeat', (d: RotationHeartbeat) => beats.push(d));
    const result = await runIn(env, rotation(), { target: bench.target('sw1') });
    assert.deepEqual(result, { deviceId: 'dev-sw1', username: USER, rotatedNow: true, verifiedWith: ['nvue', 'ssh'] });
    assert.deepEqual([...new Set(beats.map((b) => b.phase))], ['generated', 'applied', 'verified', 'stored']);

    const stored = bench.secrets();
    const next = stored['switch/sw1']!.password;
    assert.notEqual(next, 'initial-pw-1');
    assert.ok(
      next.length >= 32 && /[A-Z]/.test(next) && /[a-z]/.test(next) && /\d/.test(next) && /[^A-Za-z0-9]/.test(next),
      'a strong password',
    );
    assert.deepEqual(
      stored['switch/sw1#previous'],
      { username: USER, password: 'initial-pw-1' },
      'the old one is kept for rollback',
    );
    assert.equal(statSync(bench.secretsFile).mode & 0o777, 0o600);
    assert.deepEqual(
      await logsIn(bench, 'sw1', 'initial-pw-1'),
      { nvue: false, ssh: false },
      'the old password is refused',
    );
    assert.deepEqual(await logsIn(bench, 'sw1', next), { nvue: true, ssh: true });
    // The file secret store the other activities use reads the new password without a restart.
    assert.equal((await bench.access.secrets.resolve('switch/sw1')).password, next);

    // Wire shapes (docs/reference/rms-behaviours.md#nvue-revisions): revision, the base64 password staged (masked in
    // the switch's log), apply, save.
    const lines = nvueLines(bench.sim, 'sw1').filter((r) => r.line.startsWith('POST') || r.line.startsWith('PATCH'));
    assert.deepEqual(
      lines.map((r) => [r.line.replace(/rev=\d+/, 'rev=N').replace(/revision\/\d+/, 'revision/N'), r.body]),
      [
        ['POST /nvue_v1/revision', {}],
        ['PATCH /nvue_v1/system/aaa/user/admin?rev=N', { password: '***' }],
        ['PATCH /nvue_v1/revision/N', { state: 'apply', 'auto-prompt': { ays: 'ays_yes' } }],
        ['PATCH /nvue_v1/revision/applied', { state: 'save', 'auto-prompt': { ays: 'ays_yes' } }],
      ],
    );
    assert.equal(bench.sim.switch('sw1').counters.saves, 1);
    const record = await bench.pendingPasswords.get('switch/sw1');
    assert.equal(record?.state, 'stored');
    assert.ok(!JSON.stringify(record).includes(next), 'no password is left pending');
    assert.ok(bench.logs.length > 0);
    assert.ok(!bench.logs.join('').includes(next), 'the logs never carry the password');
  });

  it('a retry after the switch took the new password stores that one: no second password', async () => {
    // Attempt 1 gets as far as storing, and the secret store write fails.
    const broken: SecretWriter = {
      assertWritable: () => undefined,
      write: () => Promise.reject(new Error('disk full')),
    };
    const first = mockEnv();
    let last: RotationHeartbeat | undefined;
    first.on('heartbeat', (d: RotationHeartbeat) => (last = d));
    await assert.rejects(runIn(first, rotation(broken), { target: bench.target('retry') }), /disk full/);
    assert.deepEqual(last, { phase: 'verified' });
    const pending = await bench.pendingPasswords.get('switch/retry');
    assert.equal(pending?.state, 'generated');
    assert.equal(bench.secrets()['switch/retry']!.password, 'initial-pw-2', 'not stored yet');

    const second = mockEnv({ heartbeatDetails: last, attempt: 2 });
    const result = await runIn(second, rotation(), { target: bench.target('retry') });
    assert.equal(result.rotatedNow, true);
    assert.equal(bench.sim.switch('retry').counters.passwordChanges, 1, 'applied once');
    const stored = bench.secrets()['switch/retry']!.password;
    assert.equal(pending?.state === 'generated' && pending.password, stored, 'the pending password is the one stored');
    assert.deepEqual(await logsIn(bench, 'retry', stored), { nvue: true, ssh: true });

    // A third attempt of the same activity finds its rotation done and changes nothing.
    const third = await runIn(mockEnv({ heartbeatDetails: { phase: 'stored' }, attempt: 3 }), rotation(), {
      target: bench.target('retry'),
    });
    assert.deepEqual(third, { deviceId: 'dev-retry', username: USER, rotatedNow: false, verifiedWith: ['nvue'] });
    assert.equal(bench.sim.switch('retry').counters.passwordChanges, 1);
    assert.equal(bench.secrets()['switch/retry']!.password, stored);
  });

  it('a failed apply surfaces the switch issue; the pending password is reused by the next job', async () => {
    bench.sim
      .switch('apply-fails')
      .setFaults({ revisionApplyFails: 'Invalid config: password rejected by the aaa policy' });
    const err = await runIn(mockEnv(), rotation(), { target: bench.target('apply-fails') }).catch((e: unknown) => e);
    assert.ok(err instanceof ApplicationFailure);
    assert.equal(err.type, 'NVUE_APPLY_FAILED');
    assert.equal(err.nonRetryable, true);
    assert.match(
      err.message,
      /dev-apply-fails .*revision \d+ failed: Invalid config: password rejected by the aaa policy/,
    );
    assert.equal(bench.secrets()['switch/apply-fails']!.password, 'initial-pw-3');
    assert.deepEqual(
      await logsIn(bench, 'apply-fails', 'initial-pw-3'),
      { nvue: true, ssh: true },
      'the switch keeps the old password',
    );
    const pending = await bench.pendingPasswords.get('switch/apply-fails');
    assert.equal(pending?.state, 'generated');

    bench.sim.switch('apply-fails').setFaults({});
    const result = await runIn(mockEnv({ workflowExecution: { workflowId: 'next-job', runId: 'r' } }), rotation(), {
      target: bench.target('apply-fails'),
    });
    assert.equal(result.rotatedNow, true);
    assert.equal(
      bench.secrets()['switch/apply-fails']!.password,
      pending?.state === 'generated' ? pending.password : undefined,
    );
  });

  it('an env secret store cannot take the new password: FAILED_PRECONDITION before the switch is touched', async () => {
    bench.sim.switch('env').clearNvueLog();
    const envWriter = createSecretWriter({ provider: 'env', prefix: 'FLEET_SECRET' });
    const err = await runIn(mockEnv(), rotation(envWriter), { target: bench.target('env') }).catch((e: unknown) => e);
    assert.ok(err instanceof ApplicationFailure);
    assert.equal(err.type, 'FAILED_PRECONDITION');
    assert.match(err.message, /dev-env: .*environment \(FLEET_SECRET_\*\) and cannot be written/);
    assert.deepEqual(nvueLines(bench.sim, 'env'), []);
  });

  it('a switch refusing the stored password fails UNAUTHENTICATED without generating one', async () => {
    const err = await runIn(mockEnv(), rotation(), { target: bench.target('stale') }).catch((e: unknown) => e);
    assert.ok(err instanceof ApplicationFailure);
    assert.equal(err.type, 'UNAUTHENTICATED');
    assert.match(err.message, /dev-stale: the switch refuses the stored password of admin/);
    assert.equal(await bench.pendingPasswords.get('switch/stale'), undefined);
  });

  it(`a heartbeat saying the switch was changed, with no pending password here, stops instead of \
guessing`, async () => {
    bench.sim.switch('elsewhere').config.users[USER]!.password = 'set-by-another-host';
    const err = await runIn(mockEnv({ heartbeatDetails: { phase: 'applied' }, attempt: 2 }), rotation(), {
      target: bench.target('elsewhere'),
    }).catch((e: unknown) => e);
    assert.ok(err instanceof ApplicationFailure);
    assert.equal(err.type, 'FAILED_PRECONDITION');
    assert.match(err.message, /holds no pending password for switch\/elsewhere/);
  });
  it(`never writes the device's BMC reference: FAILED_PRECONDITION, not retried, before the switch or the store is \
touched`, async () => {
    bench.sim.switch('bmc-ref').clearNvueLog();
    // An NVOS reference that fell back to the BMC's (or names it): other BMCs may log in with it too.
    const target = { ...bench.target('bmc-ref'), bmcCredentialRef: 'switch/bmc-ref' };
    const err = await runIn(mockEnv(), rotation(), { target }).catch((e: unknown) => e);
    assert.ok(err instanceof ApplicationFailure);
    assert.equal(err.type, 'FAILED_PRECONDITION');
    assert.equal(err.nonRetryable, true);
    assert.match(
      err.message,
      new RegExp(
        /dev-bmc-ref: the NVOS credential reference switch\/bmc-ref is the device's BMC reference: /.source +
          /.*fleet_nvos_credential_ref/.source,
      ),
    );
    assert.deepEqual(nvueLines(bench.sim, 'bmc-ref'), []);
    assert.deepEqual(bench.secrets()['switch/bmc-ref'], { username: USER, password: 'initial-pw-7' });
    assert.equal(bench.secrets()['switch/bmc-ref#previous'], undefined);
    assert.equal(await bench.pendingPasswords.get('switch/bmc-ref'), undefined);

    // The same switch with an NVOS reference of its own beside a BMC one rotates.
    const own = await runIn(mockEnv(), rotation(), {
      target: { ...bench.target('bmc-ref'), bmcCredentialRef: 'bmc/default' },
    });
    assert.equal(own.rotatedNow, true);
    assert.notEqual(bench.secrets()['switch/bmc-ref']!.password, 'initial-pw-7');
  });
});
