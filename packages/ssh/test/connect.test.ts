import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { NvosSimulator } from '@fleet/simulators';
import { HostKeyMismatchError, normaliseFingerprint, SshError, type HostKeyPolicy } from '../src/index.js';
import { open, PASSWORD, rotatePassword, startSim, USER } from './helpers.js';

describe('SSH connect: host keys, credentials, failures', () => {
  let sim: NvosSimulator;
  let dir: string;
  let silent: Server;
  const held = new Set<Socket>();
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ssh-connect-'));
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'id')]);
    sim = await startSim([
      { id: 'sw1', authorizedKeys: [readFileSync(join(dir, 'id.pub'), 'utf8').trim()] },
      { id: 'sw2' },
      { id: 'sw3' },
    ]);
    // Accepts TCP and never speaks SSH: a hung sshd.
    silent = createServer((s) => held.add(s)).listen(0, '127.0.0.1');
    await new Promise((r) => silent.once('listening', r));
  });
  after(async () => {
    for (const s of held) s.destroy();
    silent.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const failure = async (p: Promise<unknown>) => {
    const e = await p.catch((err: unknown) => err);
    assert.ok(e instanceof SshError, String(e));
    return e;
  };
  const logins = (id: string) => sim.switch(id).sshRequests.filter((r) => r.op === 'auth');

  it('connects to a pinned host key, given as SHA256:base64 or hex', async () => {
    const fp = sim.switch('sw1').hostKey.sha256;
    const s = await open(sim, 'sw1');
    assert.equal(s.hostKeySha256, fp);
    // An AEAD cipher (AES-GCM where the CPU has AES-NI): images go through it at hundreds of MiB/s.
    assert.match(s.cipher, /^(aes128-gcm|aes256-gcm|chacha20-poly1305)@openssh\.com$/);
    s.close();
    const hex = Buffer.from(fp.slice(7), 'base64')
      .toString('hex')
      .replace(/(..)(?!$)/g, '$1:');
    (await open(sim, 'sw1', { hostKey: { mode: 'pinned', sha256: hex } })).close();
    assert.equal(normaliseFingerprint(hex), fp);
  });

  it('refuses another key before sending any credential, naming both fingerprints', async () => {
    const before = logins('sw2').length;
    const e = await failure(
      open(sim, 'sw2', { hostKey: { mode: 'pinned', sha256: sim.switch('sw1').hostKey.sha256 } }),
    );
    assert.ok(e instanceof HostKeyMismatchError);
    assert.equal(e.expected, sim.switch('sw1').hostKey.sha256);
    assert.equal(e.actual, sim.switch('sw2').hostKey.sha256);
    assert.equal(e.retryable, false);
    assert.match(
      e.message,
      /^HostKeyMismatch: sw2 \(127\.0\.0\.1\) host-key: host key SHA256:\S+ does not match the expected SHA256:\S+$/,
    );
    assert.equal(logins('sw2').length, before, 'no password was offered');
  });

  it('trusts on first use: records the key, then holds the switch to it', async () => {
    const recorded: string[] = [];
    const policy: HostKeyPolicy = { mode: 'tofu', onFirstUse: async (fp) => void recorded.push(fp) };
    (await open(sim, 'sw1', { hostKey: policy })).close();
    assert.deepEqual(recorded, [sim.switch('sw1').hostKey.sha256]);
    (await open(sim, 'sw1', { hostKey: policy })).close();
    assert.equal(recorded.length, 1, 'asked once');
    // Same policy, different key (another machine answering at the address): refused.
    assert.ok((await failure(open(sim, 'sw2', { hostKey: policy }))) instanceof HostKeyMismatchError);
    // A stored fingerprint passed back in behaves as pinned.
    const stored: HostKeyPolicy = {
      mode: 'tofu',
      known: recorded[0]!,
      onFirstUse: () => Promise.reject(new Error('not called')),
    };
    assert.ok((await failure(open(sim, 'sw2', { hostKey: stored }))) instanceof HostKeyMismatchError);
    const broken = await failure(
      open(sim, 'sw3', { hostKey: { mode: 'tofu', onFirstUse: () => Promise.reject(new Error('store unavailable')) } }),
    );
    assert.match(broken.causeText, /store unavailable/);
  });

  it('reports refused credentials without the password, and logs in with a key', async () => {
    const e = await failure(open(sim, 'sw1', { password: 'hunter2-wrong' }));
    assert.deepEqual([e.kind, e.step, e.device, e.retryable], ['Auth', 'auth', 'sw1', false]);
    assert.doesNotMatch(e.message, /hunter2/);
    assert.doesNotMatch(JSON.stringify(sim.switch('sw1').sshRequests), new RegExp(PASSWORD));
    (await open(sim, 'sw1', { password: undefined, privateKey: readFileSync(join(dir, 'id'), 'utf8') })).close();
    assert.deepEqual(logins('sw1').at(-1), { ...logins('sw1').at(-1), ok: true, detail: 'publickey' });
  });

  it(`follows the switch password: the old one is refused after a change, admin/admin after a factory \
reset`, async () => {
    await rotatePassword(sim, 'sw3', 'rotated-Pw-1');
    assert.equal((await failure(open(sim, 'sw3'))).kind, 'Auth');
    (await open(sim, 'sw3', { password: 'rotated-Pw-1' })).close();
    sim.switch('sw3').reboot({ factoryReset: true });
    while (sim.switch('sw3').rebooting) await new Promise((r) => setTimeout(r, 10));
    (await open(sim, 'sw3', { username: USER, password: 'admin' })).close();
    assert.equal((await failure(open(sim, 'sw3', { password: 'rotated-Pw-1' }))).kind, 'Auth');
  });

  it(`times out on a server that never speaks, is cancellable, and reports refused connections as \
retryable`, async () => {
    const port = (silent.address() as { port: number }).port;
    const hostKey = { mode: 'pinned' as const, sha256: sim.switch('sw1').hostKey.sha256 };
    const started = Date.now();
    const t = await failure(open(sim, 'sw1', { port, connectTimeoutMs: 150, hostKey }));
    assert.deepEqual([t.kind, t.step, t.retryable], ['Timeout', 'connect', true]);
    assert.ok(Date.now() - started < 1_000);
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('activity cancelled')), 50);
    await assert.rejects(open(sim, 'sw1', { port, signal: ac.signal, hostKey }), /activity cancelled/);

    sim.switch('sw2').reboot();
    await new Promise((r) => setTimeout(r, 20));
    const down = await failure(open(sim, 'sw2'));
    assert.deepEqual([down.kind, down.retryable], ['Connect', true]);
    assert.match(down.causeText, /ECONNREFUSED/);
  });
});
