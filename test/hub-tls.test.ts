import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cloneTestDatabase, type TestDatabase } from '@fleet/db/testing';
import { freePort } from '@fleet/temporal';
import { createCa, issueCertificate, loopback, type CertificateAuthority } from '@fleet/simulators/pki';
import { ManagedProcess, repoRoot } from '../tools/lib/processes.js';
import { testEnv } from './harness/env.js';

/** One HTTPS GET trusting only `ca`; the answer's status and the fingerprint of the certificate the hub presented. */
function getHttps(port: number, path: string, ca: string): Promise<{ status: number; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, ca, agent: false }, (res) => {
      const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, fingerprint }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Waits for `text` in what the process logged past `from` (an earlier length of its output). */
async function waitForOutput(p: ManagedProcess, text: string, from: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!p.output.slice(from).includes(text)) {
    if (Date.now() > deadline) throw new Error(`${p.name} did not log "${text}":\n${p.output.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The hub serves HTTPS when given a certificate and refuses to start on plain HTTP unless told it is a dev stack. */
describe('hub TLS', () => {
  const dir = join(repoRoot, '.run', 'tests', `hub-tls-${process.pid}-${Date.now()}`);
  const env = testEnv();
  let database: TestDatabase;
  let ca: CertificateAuthority;
  const hubs: ManagedProcess[] = [];
  const startHub = async (name: string, http: Record<string, unknown>, ready = 'hub listening') => {
    const file = join(dir, `${name}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        metrics: { port: 0 },
        database: { url: database.url, poolSize: 2 },
        http,
        firmware: { blobDir: join(dir, 'blobs') },
      }),
    );
    const hub = new ManagedProcess(name, 'apps/hub/src/main.ts', file, dir);
    hubs.push(hub);
    await hub.start(ready);
    return hub;
  };

  before(async () => {
    mkdirSync(dir, { recursive: true });
    database = await cloneTestDatabase(env.databaseUrl, env.templateDb);
    ca = createCa(dir, 'test-ca');
  });
  after(async () => {
    for (const h of hubs) await h.stop();
    await database?.drop();
    if (!process.env['FLEET_KEEP_TEST_RUNS']) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to start without a certificate unless plain HTTP is asked for, naming the setting', async () => {
    const port = await freePort();
    const err = await startHub('hub-plain', { port }).catch((e: unknown) => e);
    assert.ok(err instanceof Error, 'the hub started on plain HTTP');
    assert.match(err.message, /http\.tls: required: the hub serves HTTPS/);
    const dev = await startHub('hub-dev', { port, allowPlainHttp: true });
    assert.match(dev.output, /serving plain HTTP \(http\.allowPlainHttp\): for a dev stack only/);
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    await dev.stop();
  });

  it('serves HTTPS with its certificate, refuses plain HTTP on that port, and reloads a renewed one', async () => {
    const port = await freePort();
    const first = issueCertificate(ca, dir, 'hub-1', loopback);
    const certFile = join(dir, 'hub.pem');
    const keyFile = join(dir, 'hub.key');
    copyFileSync(first.certFile, certFile);
    copyFileSync(first.keyFile, keyFile);
    const hub = await startHub('hub-tls', { port, tls: { certFile, keyFile, reloadCheckS: 0.2 } });
    const answer = await getHttps(port, '/healthz', ca.certPem);
    assert.deepEqual(answer, { status: 200, fingerprint: first.fingerprint });
    // A client that does not trust the CA is refused by its own TLS check; a plain HTTP client gets no answer.
    await assert.rejects(getHttps(port, '/healthz', createCa(dir, 'other-ca').certPem), /self-signed|unable to verify/);
    await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`));

    let from = hub.output.length;
    const renewed = issueCertificate(ca, dir, 'hub-2', loopback);
    copyFileSync(renewed.certFile, certFile);
    copyFileSync(renewed.keyFile, keyFile);
    await waitForOutput(hub, 'TLS certificate reloaded', from);
    assert.deepEqual(await getHttps(port, '/healthz', ca.certPem), { status: 200, fingerprint: renewed.fingerprint });

    // A broken file keeps the certificate being served.
    from = hub.output.length;
    writeFileSync(keyFile, 'not a key');
    await waitForOutput(hub, 'TLS certificate reload failed', from);
    assert.equal((await getHttps(port, '/healthz', ca.certPem)).fingerprint, renewed.fingerprint);
  });
});
