import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client, SFTPWrapper } from 'ssh2';
import { hostKeyFor } from '../src/nvos/host-key.js';
import { admin, eventually, finishedAction, nv, sshLogin, startSwitches, type SwitchSim } from './nvos-helpers.js';

const sftpOf = (c: Client) =>
  new Promise<SFTPWrapper>((resolve, reject) => c.sftp((err, s) => (err ? reject(err) : resolve(s))));
const put = (s: SFTPWrapper, local: string, remote: string, opts: { chunkSize?: number } = {}) =>
  new Promise<void>((resolve, reject) =>
    s.fastPut(local, remote, { concurrency: 16, chunkSize: opts.chunkSize ?? 32_768 }, (err) =>
      err ? reject(err) : resolve(),
    ),
  );
const exec = (c: Client, cmd: string) =>
  new Promise<{ code: number; out: string; err: string }>((resolve, reject) =>
    c.exec(cmd, (e, ch) => {
      if (e) return reject(e);
      let out = '';
      let err = '';
      let code = -1;
      ch.on('data', (d: Buffer) => (out += d));
      ch.stderr.on('data', (d: Buffer) => (err += d));
      ch.on('exit', (c2: number) => (code = c2));
      ch.on('close', () => resolve({ code, out, err }));
    }),
  );

describe('NVOS simulator: SSH and SFTP', () => {
  let t: SwitchSim;
  let dir: string;
  let clientKey: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nvos-ssh-'));
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'id')]);
    clientKey = readFileSync(join(dir, 'id'), 'utf8');
    t = await startSwitches([
      { id: 'a', hostKeySeed: 'rack1-sw1', authorizedKeys: [readFileSync(join(dir, 'id.pub'), 'utf8').trim()] },
      { id: 'b' },
    ]);
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has a host key derived from its seed, the one the admin API shows and clients see', async () => {
    const expected = hostKeyFor('rack1-sw1').sha256;
    assert.equal(hostKeyFor('rack1-sw1').sha256, expected, 'deterministic');
    assert.notEqual(hostKeyFor('rack1-sw2').sha256, expected);
    assert.equal((await admin(t, 'GET', '/switches/a')).body.hostKeySha256, expected);
    assert.equal(
      (await admin(t, 'GET', '/switches/b')).body.hostKeySha256,
      hostKeyFor('b').sha256,
      'the id seeds it by default',
    );
    const { host, port } = t.nvos.ssh('a');
    const { default: ssh2 } = await import('ssh2');
    const seen = await new Promise<string>((resolve, reject) => {
      const c = new ssh2.Client();
      let fp = '';
      c.once('ready', () => (c.end(), resolve(fp)));
      c.once('error', reject);
      c.connect({
        host,
        port,
        username: 'admin',
        password: 'switch-pw',
        hostVerifier: (key: Buffer) => (
          (fp = `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`),
          true
        ),
      });
    });
    assert.equal(seen, expected);
  });

  it('hashes uploads as they stream in, overwrites on a second upload, and lists them as NVOS images', async () => {
    const file = join(dir, 'nvos-amd64-25.02.5000.bin');
    const data = randomBytes(5 * 1024 * 1024 + 123);
    writeFileSync(file, data);
    const c = await sshLogin(t, 'b');
    const s = await sftpOf(c);
    await put(s, file, '/host/nos-images/nvos-amd64-25.02.5000.bin');
    const files = () => admin(t, 'GET', '/switches/b/files').then((r) => r.body.items);
    const [f] = await files();
    assert.equal(f.size, data.length);
    assert.equal(f.sha256, createHash('sha256').update(data).digest('hex'));
    assert.deepEqual([f.uploads, f.bytesReceived], [1, data.length]);
    await put(s, file, '/host/nos-images/nvos-amd64-25.02.5000.bin', { chunkSize: 100_000 });
    const [g] = await files();
    assert.deepEqual([g.size, g.uploads, g.bytesReceived, g.sha256], [data.length, 2, 2 * data.length, f.sha256]);
    assert.deepEqual(Object.keys((await nv(t, 'b', 'GET', '/system/image/files')).body), ['nvos-amd64-25.02.5000.bin']);
    const ops = (await admin(t, 'GET', '/switches/b/ssh-requests')).body.items.map(
      (e: { op: string; bytes?: number }) => [e.op, e.bytes],
    );
    assert.deepEqual(
      ops.filter(([op]: [string]) => op === 'sftp-close'),
      [
        ['sftp-close', data.length],
        ['sftp-close', data.length],
      ],
    );
    await assert.rejects(put(s, file, '/host/x.bin'), /cannot write/);
    c.end();
  });

  it('stops answering writes past sftpStallAfterBytes until the fault is cleared', async () => {
    const file = join(dir, 'stall.bin');
    writeFileSync(file, randomBytes(1024 * 1024));
    await admin(t, 'PUT', '/switches/b/faults', { sftpStallAfterBytes: 256 * 1024 });
    const c = await sshLogin(t, 'b');
    const s = await sftpOf(c);
    let done = false;
    const upload = put(s, file, '/host/fw-images/stall.bin').then(() => (done = true));
    const received = async () =>
      (await admin(t, 'GET', '/switches/b/files')).body.items.find(
        (f: { path: string }) => f.path === '/host/fw-images/stall.bin',
      )?.bytesReceived;
    await eventually(async () => ((await received()) === 256 * 1024 ? true : undefined));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(done, false, 'the upload is stuck');
    assert.equal(await received(), 256 * 1024, 'nothing past the limit was taken');
    await admin(t, 'DELETE', '/switches/b/faults');
    await upload;
    const f = (await admin(t, 'GET', '/switches/b/files')).body.items.find(
      (x: { path: string }) => x.path === '/host/fw-images/stall.bin',
    );
    assert.equal(f.size, 1024 * 1024);
    c.end();
  });

  it('runs NVOS commands over exec', async () => {
    const c = await sshLogin(t, 'b');
    const version = await exec(c, 'nv show system version');
    assert.equal(version.code, 0);
    assert.equal(JSON.parse(version.out).image, '25.02.4282');
    assert.deepEqual(await exec(c, 'ls /host'), { code: 0, out: 'fw-images\nnos-images\n', err: '' });
    const missing = await exec(c, 'reboot now');
    assert.equal(missing.code, 127);
    assert.match(missing.err, /command not found/);
    c.end();
  });

  it('accepts an authorized public key, and refuses it for a switch that does not list it', async () => {
    (await sshLogin(t, 'a', { privateKey: clientKey })).end();
    await assert.rejects(sshLogin(t, 'b', { privateKey: clientKey }), /authentication methods failed/);
    const auth = (await admin(t, 'GET', '/switches/a/ssh-requests')).body.items.filter(
      (e: { op: string }) => e.op === 'auth',
    );
    assert.deepEqual(auth.at(-1), { ...auth.at(-1), user: 'admin', ok: true, detail: 'publickey' });
  });

  it('imports certificates from PEM files staged over SFTP', async () => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=site-ca',
        '-keyout',
        join(dir, 'ca.key'),
        '-out',
        join(dir, 'ca.pem'),
      ],
      { stdio: 'ignore' },
    );
    const c = await sshLogin(t, 'b');
    const s = await sftpOf(c);
    await new Promise<void>((resolve, reject) =>
      s.mkdir('/home/admin/certs', (err) => (err ? reject(err) : resolve())),
    );
    await put(s, join(dir, 'ca.pem'), '/home/admin/certs/ca.pem');
    await put(s, join(dir, 'ca.key'), '/home/admin/certs/ca.key');
    const body = (parameters: unknown) => ({ body: { '@import': { state: 'start', parameters } } });
    const ca = (
      await nv(
        t,
        'b',
        'POST',
        '/system/security/ca-certificate/site-ca',
        body({ uri: 'file:///home/admin/certs/ca.pem' }),
      )
    ).body;
    assert.equal((await finishedAction(t, 'b', ca)).state, 'action_success');
    const cert = (
      await nv(
        t,
        'b',
        'POST',
        '/system/security/certificate/site',
        body({
          'uri-public-key': 'file:///home/admin/certs/ca.pem',
          'uri-private-key': 'file:///home/admin/certs/ca.key',
        }),
      )
    ).body;
    assert.equal((await finishedAction(t, 'b', cert)).state, 'action_success');
    const shown = (await nv(t, 'b', 'GET', '/system/security/certificate/site')).body;
    assert.ok(Date.parse(shown['valid-to']) > Date.now());
    const wrong = (
      await nv(t, 'b', 'POST', '/system/security/ca-certificate/bad', body({ uri: 'file:///home/admin/certs/ca.key' }))
    ).body;
    const failed = await finishedAction(t, 'b', wrong);
    assert.equal(failed.state, 'action_failed');
    assert.match(failed.detail, /cannot import bad/);
    c.end();
  });
});
