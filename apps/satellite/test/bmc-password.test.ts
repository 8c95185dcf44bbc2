import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ApplicationFailure } from '@temporalio/common';
import { pino } from 'pino';
import type { BmcPasswordRotationResult, BmcTarget } from '@fleet/domain';
import { findAccount, RedfishClient, RedfishError } from '@fleet/redfish';
import { startRedfishSimulator, type RedfishSimulator } from '@fleet/simulators';
import { createBmcPasswordActivity, type BmcRotationHeartbeat } from '../src/activities/bmc-password.js';
import { PendingPasswords } from '../src/credentials/pending-passwords.js';
import { createSecretWriter, type SecretWriter } from '../src/credentials/secret-writer.js';
import { createFileSecretStore } from '../src/secrets/file-store.js';
import { mockEnv } from './helpers/devices.js';
import { randomInt } from 'node:crypto';
import { openTestJournal } from './helpers/journal.js';

const testJournal = await openTestJournal();

const USER = 'admin';
type Stored = Record<string, { username: string; password: string }>;

describe('rotateBmcPassword activity', () => {
  const ids = ['ok', 'refuses', 'crash', 'ro'];
  let sim: RedfishSimulator;
  let dir: string;
  let secretsFile: string;
  let pending: PendingPasswords;
  let writer: SecretWriter;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-bmc-rotation-'));
    secretsFile = join(dir, 'secrets.json');
    const block = `127.${randomInt(2, 250)}.${randomInt(0, 250)}`;
    sim = await startRedfishSimulator({
      bmcs: ids.map((id, i) => ({
        id,
        address: `${block}.${i + 1}`,
        port: 20_000 + randomInt(0, 20_000),
        username: USER,
        password: `initial-${id}`,
      })),
      timeScale: 0.01,
    });
    writeFileSync(
      secretsFile,
      JSON.stringify(Object.fromEntries(ids.map((id) => [`bmc/${id}`, { username: USER, password: `initial-${id}` }]))),
      { mode: 0o600 },
    );
    pending = new PendingPasswords(join(dir, 'pending.json'));
    writer = createSecretWriter({ provider: 'file', path: secretsFile });
  });
  after(async () => {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const target = (id: string): BmcTarget => ({
    deviceId: `dev-${id}`,
    nodeType: 'compute_gb200_nvidia',
    bmcUrl: sim.bmcUrl(id),
    credentialRef: `bmc/${id}`,
  });
  const rotation = (secretWriter: SecretWriter = writer) =>
    createBmcPasswordActivity({
      secrets: createFileSecretStore(secretsFile),
      log: pino({ level: 'silent' }),
      pollIntervalMs: 5,
      journal: testJournal,
      redfish: { auth: 'session', requestTimeoutMs: 2_000, maxAttempts: 2 },
      secretWriter,
      pendingPasswords: pending,
    }).rotateBmcPassword;
  const stored = () => JSON.parse(readFileSync(secretsFile, 'utf8')) as Stored;
  const logsIn = async (id: string, password: string) => {
    const c = new RedfishClient({
      baseUrl: sim.bmcUrl(id),
      credentials: { username: USER, password },
      auth: 'session',
    });
    try {
      await findAccount(c, USER);
      return true;
    } catch (err) {
      if (err instanceof RedfishError && err.code === 'Unauthenticated') return false;
      throw err;
    } finally {
      await c.close();
    }
  };
  const patches = (id: string) => sim.bmc(id).log.filter((r) => r.method === 'PATCH');

  it('stages the new password, applies it, proves it with a fresh session, then makes it current', async () => {
    const env = mockEnv({ activityId: 'rotate-1' });
    const beats: BmcRotationHeartbeat[] = [];
    env.on('heartbeat', (d: BmcRotationHeartbeat) => beats.push(d));
    const result = await env.run(rotation(), { target: target('ok') });
    assert.deepEqual(result, { deviceId: 'dev-ok', username: USER, rotatedNow: true });
    assert.deepEqual(
      beats.map((b) => Object.keys(b)),
      beats.map(() => ['phase']),
      'heartbeats carry the phase only',
    );
    assert.deepEqual([...new Set(beats.map((b) => b.phase))], ['generated', 'staged', 'applied', 'verified', 'stored']);

    const now = stored();
    const next = now['bmc/ok']!.password;
    assert.notEqual(next, 'initial-ok');
    assert.equal(next.length, 20, "the BMC's MaxPasswordLength");
    assert.deepEqual(now['bmc/ok#previous'], { username: USER, password: 'initial-ok' });
    assert.equal(now['bmc/ok#next'], undefined, 'nothing left staged');
    assert.equal(await logsIn('ok', 'initial-ok'), false);
    assert.equal(await logsIn('ok', next), true);
    assert.equal(patches('ok').length, 1);
    assert.ok(!JSON.stringify(sim.bmc('ok').log).includes(next));
    const record = await pending.get('bmc/ok');
    assert.equal(record?.state, 'stored');
    assert.ok(!JSON.stringify(record).includes(next), 'no password left pending');

    // The same activity retried after its end only checks the stored password.
    assert.deepEqual(await env.run(rotation(), { target: target('ok') }), { ...result, rotatedNow: false });
    assert.equal(patches('ok').length, 1);
  });

  it('rolls back when the BMC refuses the new password: the old one logs in and is the stored one', async () => {
    sim.bmc('refuses').setFaults({ refuseNewPassword: true });
    const env = mockEnv({ activityId: 'rotate-refuses' });
    const beats: string[] = [];
    env.on('heartbeat', (d: BmcRotationHeartbeat) => beats.push(d.phase));
    await assert.rejects(env.run(rotation(), { target: target('refuses') }), (err: ApplicationFailure) => {
      assert.equal(err.type, 'VERIFICATION_FAILED');
      assert.equal(err.nonRetryable, true);
      assert.match(err.message, /dev-refuses: .*refused a login with it; rolled back/);
      return true;
    });
    assert.ok(beats.includes('rolling_back'));
    assert.deepEqual(
      patches('refuses').map((p) => (p.body as { Password?: string }).Password),
      ['(redacted)', '(redacted)'],
      'the new password, then the old one again',
    );
    sim.bmc('refuses').setFaults({});
    assert.equal(await logsIn('refuses', 'initial-refuses'), true);
    const now = stored();
    assert.deepEqual(now['bmc/refuses'], { username: USER, password: 'initial-refuses' });
    assert.equal(now['bmc/refuses#next'], undefined, 'the staged password is dropped');
    assert.equal(await pending.get('bmc/refuses'), undefined);
  });

  it('a retry after a crash past the apply finishes with the same password, applied once', async () => {
    // The first attempt dies on the write that makes the password current (the BMC has it, the store as #next).
    let writes = 0;
    const crashing: SecretWriter = {
      assertWritable: () => undefined,
      write: async (entries) => {
        if (++writes === 2) throw new Error('satellite killed');
        await writer.write(entries);
      },
    };
    const first = mockEnv({ activityId: 'rotate-crash' });
    await assert.rejects(first.run(rotation(crashing), { target: target('crash') }), /satellite killed/);
    const staged = stored()['bmc/crash#next']!.password;
    assert.equal(await logsIn('crash', staged), true, 'the BMC took it before the crash');
    assert.deepEqual(stored()['bmc/crash'], { username: USER, password: 'initial-crash' });

    const retry = mockEnv({ activityId: 'rotate-crash', attempt: 2, heartbeatDetails: { phase: 'applied' } });
    const result = (await retry.run(rotation(), { target: target('crash') })) as BmcPasswordRotationResult;
    assert.equal(result.rotatedNow, true);
    assert.equal(stored()['bmc/crash']!.password, staged, 'no second password was generated');
    assert.equal(patches('crash').length, 1, 'applied once');
    assert.equal(await logsIn('crash', staged), true);
  });

  it('refuses a read-only secret store before touching the BMC', async () => {
    const env = mockEnv({ activityId: 'rotate-ro' });
    const readOnly = createSecretWriter({ provider: 'env', prefix: 'FLEET_SECRET' });
    await assert.rejects(env.run(rotation(readOnly), { target: target('ro') }), (err: ApplicationFailure) => {
      assert.equal(err.type, 'FAILED_PRECONDITION');
      assert.match(err.message, /^dev-ro: .*cannot be written/);
      return true;
    });
    assert.equal(patches('ro').length, 0);
  });
});
