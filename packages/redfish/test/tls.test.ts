import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  getPowerState,
  RedfishClient,
  RedfishError,
  type RedfishLogger,
  type RedfishTlsOptions,
} from '../src/index.js';
import { fakeBmc, type FakeBmc } from './helpers/fake-bmc.js';
import { credentials } from './helpers/servers.js';

/** A self-signed certificate for 127.0.0.1, made with the openssl CLI. */
function selfSigned(dir: string, name: string): { key: string; cert: string; certFile: string; fingerprint: string } {
  const keyFile = join(dir, `${name}.key`);
  const certFile = join(dir, `${name}.pem`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  const cert = readFileSync(certFile, 'utf8');
  return { key: readFileSync(keyFile, 'utf8'), cert, certFile, fingerprint: new X509Certificate(cert).fingerprint256 };
}

describe('TLS verification', () => {
  let dir: string;
  let bmcCert: ReturnType<typeof selfSigned>;
  let otherCert: ReturnType<typeof selfSigned>;
  let bmc: FakeBmc;
  const read = async (tls: RedfishTlsOptions | undefined, logger?: RedfishLogger) => {
    const c = new RedfishClient({
      baseUrl: bmc.url,
      credentials,
      maxAttempts: 1,
      ...(tls ? { tls } : {}),
      ...(logger ? { logger } : {}),
    });
    try {
      return await getPowerState(c);
    } finally {
      await c.close();
    }
  };
  const rejected = async (tls: RedfishTlsOptions | undefined, pattern: RegExp) => {
    const before = bmc.requests.length;
    const err = await read(tls).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError, String(err));
    assert.equal(err.code, 'FailedPrecondition');
    assert.equal(err.retryable, false);
    assert.match(err.causeText, pattern);
    assert.equal(bmc.requests.length, before, 'no request reached the BMC');
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-tls-'));
    bmcCert = selfSigned(dir, 'bmc');
    otherCert = selfSigned(dir, 'other');
    bmc = await fakeBmc(credentials, { key: bmcCert.key, cert: bmcCert.cert });
  });
  after(async () => {
    await bmc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('rejects a self-signed BMC certificate by default', () => rejected(undefined, /self.signed|verif/i));

  it('accepts it against the site CA bundle (PEM string or file)', async () => {
    assert.equal(await read({ caPem: bmcCert.cert }), 'Off');
    assert.equal(await read({ caFile: bmcCert.certFile }), 'Off');
  });

  it('rejects it against a different CA bundle', () =>
    rejected({ caPem: otherCert.cert }, /self.signed|verif|issuer/i));

  it('accepts it by pinned SHA-256 fingerprint, with or without colons', async () => {
    assert.equal(await read({ pinnedSha256: bmcCert.fingerprint }), 'Off');
    assert.equal(await read({ pinnedSha256: bmcCert.fingerprint.replace(/:/g, '').toLowerCase() }), 'Off');
  });

  it('rejects a certificate that does not match the pin', () =>
    rejected({ pinnedSha256: otherCert.fingerprint }, /does not match the pinned/));

  it('insecure: connects, and warns once per BMC through the injected logger', async () => {
    const warnings: { obj: object; msg: string }[] = [];
    const logger: RedfishLogger = { warn: (obj, msg) => warnings.push({ obj, msg }) };
    assert.equal(await read({ insecure: true }, logger), 'Off');
    assert.equal(await read({ insecure: true }, logger), 'Off');
    assert.equal(warnings.length, 1);
    assert.deepEqual(warnings[0]?.obj, { bmc: bmc.url });
    assert.match(warnings[0]?.msg ?? '', /insecure/);
  });

  it('refuses a malformed pin at construction', () => {
    assert.throws(
      () => new RedfishClient({ baseUrl: bmc.url, credentials, tls: { pinnedSha256: 'abc' } }),
      /64 hex digits/,
    );
  });
});
