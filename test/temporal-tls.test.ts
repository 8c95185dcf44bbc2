import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { ConfigError, readTemporalTls } from '@fleet/config';
import { startTemporalDevServer, type DevServer } from '@fleet/temporal';
import { createCa, issueCertificate } from '@fleet/simulators/pki';
import { repoRoot } from '../tools/lib/processes.js';
import { clientTlsConfig, startTemporalTlsProxy, type TemporalTlsProxy } from '../tools/lib/temporal-tls-proxy.js';

type Tls = ReturnType<typeof clientTlsConfig>;

/** One call through the client (grpc-js, as the workflow agent) and through the worker's Rust core (the satellite). */
async function clientCall(address: string, tls: Partial<Tls>): Promise<string> {
  const c = await Connection.connect({ address, tls, connectTimeout: 3_000 });
  try {
    return (await c.workflowService.getSystemInfo({})).serverVersion ?? '';
  } finally {
    await c.close();
  }
}
async function workerConnect(address: string, tls: Partial<Tls>): Promise<void> {
  await (await NativeConnection.connect({ address, tls })).close();
}

/** An error (or its cause) whose message matches `pattern`. */
function refused(pattern: RegExp) {
  return (err: unknown) => {
    const text = [err, (err as Error).cause].map((e) => (e as Error | undefined)?.message ?? '').join(' | ');
    assert.match(text, pattern);
    return true;
  };
}

/** The mTLS front the dev stack and the tests put before the Temporal dev server (tools/lib/temporal-tls-proxy.ts). */
describe('Temporal over mTLS', () => {
  const dir = join(repoRoot, '.run', 'tests', `temporal-tls-${process.pid}-${Date.now()}`);
  let temporal: DevServer;
  let proxy: TemporalTlsProxy;
  let site: Tls;

  before(
    async () => {
      mkdirSync(dir, { recursive: true });
      temporal = await startTemporalDevServer();
      proxy = await startTemporalTlsProxy({ dir, target: temporal.address });
      const files = proxy.clientTls('satellite-site-a');
      site = clientTlsConfig(files);
      // The files a satellite's config names read back into the same settings.
      assert.deepEqual(readTemporalTls(files, 'satellite.json'), site);
    },
    { timeout: 90_000 },
  );
  after(async () => {
    await proxy?.stop();
    await temporal?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a client certificate from the site CA gets through, to the client and to the worker connection', async () => {
    assert.match(await clientCall(proxy.address, site), /^\d+\.\d+/);
    await workerConnect(proxy.address, site);
  });

  it('a client with no certificate is refused', async () => {
    const noCert = { serverRootCACertificate: site.serverRootCACertificate };
    await assert.rejects(
      clientCall(proxy.address, noCert),
      refused(/UNAUTHENTICATED: client certificate refused: NONE/),
    );
    await assert.rejects(workerConnect(proxy.address, noCert), refused(/client certificate refused: NONE/));
  });

  it('a certificate from another CA is refused', async () => {
    const otherCa = createCa(dir, 'other-site-ca');
    const other = issueCertificate(otherCa, dir, 'satellite-other', { dns: ['satellite-other'] });
    const tls = { ...site, clientCertPair: { crt: readFileSync(other.certFile), key: readFileSync(other.keyFile) } };
    await assert.rejects(
      clientCall(proxy.address, tls),
      refused(/UNAUTHENTICATED: client certificate refused: FAILED/),
    );
    await assert.rejects(workerConnect(proxy.address, tls), refused(/client certificate refused: FAILED/));
  });

  it('a client that does not trust the frontend certificate refuses it', async () => {
    const tls = { ...site, serverRootCACertificate: readFileSync(createCa(dir, 'unrelated-ca').certFile) };
    // grpc-js retries the failed handshake until its deadline; the worker's core names the cause.
    await assert.rejects(clientCall(proxy.address, tls), refused(/Failed to connect before the deadline/));
    await assert.rejects(workerConnect(proxy.address, tls), refused(/UnknownIssuer/));
  });
});

describe('temporal.tls files', () => {
  const dir = join(repoRoot, '.run', 'tests', `temporal-tls-files-${process.pid}-${Date.now()}`);
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lists every unreadable or mismatched file at once, each with its field', () => {
    mkdirSync(dir, { recursive: true });
    const ca = createCa(dir, 'ca');
    const a = issueCertificate(ca, dir, 'a', { dns: ['a'] });
    const b = issueCertificate(ca, dir, 'b', { dns: ['b'] });
    assert.throws(
      () => readTemporalTls({ caFile: join(dir, 'missing.pem'), certFile: a.certFile, keyFile: b.keyFile }, 'sat.json'),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.file, 'sat.json');
        assert.deepEqual(err.problems, [
          `temporal.tls.caFile: cannot read ${join(dir, 'missing.pem')} (ENOENT)`,
          `temporal.tls.keyFile: ${b.keyFile} is not the key of ${a.certFile}`,
        ]);
        return true;
      },
    );
    assert.throws(
      () => readTemporalTls({ caFile: a.keyFile, certFile: a.certFile, keyFile: a.certFile }, 'agent.json'),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.join('\n') ===
          [
            `temporal.tls.caFile: ${a.keyFile} holds no PEM certificate`,
            `temporal.tls.keyFile: ${a.certFile} holds no PEM private key`,
          ].join('\n'),
    );
  });

  it('names the server when given, and is off when the section is absent', () => {
    mkdirSync(dir, { recursive: true });
    const ca = createCa(dir, 'ca2');
    const c = issueCertificate(ca, dir, 'c', { dns: ['c'] });
    const tls = readTemporalTls(
      { caFile: ca.certFile, certFile: c.certFile, keyFile: c.keyFile, serverName: 't' },
      'x',
    );
    assert.equal(tls?.serverNameOverride, 't');
    assert.equal(readTemporalTls(undefined, 'x'), undefined);
  });
});
