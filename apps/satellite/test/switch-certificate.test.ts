import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { getSystem, NvueClient, NvueError } from '@fleet/nvue';
// The NVUE package's test PKI (site CA, switch and client certificates made with openssl).
import { makePki, type Pki } from '../../../packages/nvue/test/helpers.js';
import { createSwitchCertificateActivity } from '../src/activities/switch-certificate.js';
import { openNvue } from '../src/nvos/connect.js';
import { mockEnv } from './helpers/devices.js';
import { nvueLines, runIn, startSwitchBench, USER, type SwitchBench } from './switch-helpers.js';

describe('installSwitchCertificate activity', () => {
  let bench: SwitchBench;
  let pkiDir: string;
  let pki: Pki;
  let install: ReturnType<typeof createSwitchCertificateActivity>['installSwitchCertificate'];
  const roots = { switchCertRoot: '', clientTlsRoot: '' };

  before(async () => {
    pkiDir = mkdtempSync(join(tmpdir(), 'fleet-pki-'));
    pki = makePki(pkiDir);
    bench = await startSwitchBench([
      { id: 'sw', password: 'pw-sw', tls: pki.bootstrap },
      { id: 'other', password: 'pw-other', tls: pki.bootstrap },
    ]);
    roots.switchCertRoot = join(bench.dir, 'switch-certs');
    roots.clientTlsRoot = join(bench.dir, 'client-tls');
    const put = (root: string, domain: string, files: Record<string, string>) => {
      mkdirSync(join(root, domain), { recursive: true });
      for (const [name, pem] of Object.entries(files)) writeFileSync(join(root, domain, name), pem, { mode: 0o600 });
    };
    put(roots.switchCertRoot, 'site-a', {
      'ca.pem': pki.caPem,
      'client.pem': pki.server.certPem,
      'client.key': pki.server.keyPem,
    });
    put(roots.clientTlsRoot, 'site-a', { 'client.pem': pki.client.certPem, 'client.key': pki.client.keyPem });
    put(roots.switchCertRoot, 'mismatched', {
      'ca.pem': pki.caPem,
      'client.pem': pki.server.certPem,
      'client.key': pki.client.keyPem,
    });
    mkdirSync(join(roots.clientTlsRoot, 'mismatched'));
    for (const f of ['client.pem', 'client.key'])
      copyFileSync(join(roots.clientTlsRoot, 'site-a', f), join(roots.clientTlsRoot, 'mismatched', f));
    // Until a switch has the site certificate its own cannot be verified (RMS bootstraps with insecure_switch).
    const access = { ...bench.access, nvos: { ...bench.access.nvos, tls: { insecure: true } } };
    install = createSwitchCertificateActivity({
      ...access,
      certificates: roots,
      pollIntervalMs: 5,
    }).installSwitchCertificate;
  });
  after(async () => {
    await bench?.close();
    rmSync(pkiDir, { recursive: true, force: true });
  });

  const hello = async (id: string, tls: ConstructorParameters<typeof NvueClient>[0]['tls']) => {
    const c = new NvueClient({
      baseUrl: bench.sim.nvueUrl(id),
      credentials: { username: USER, password: `pw-${id}` },
      maxAttempts: 1,
      ...(tls ? { tls } : {}),
    });
    try {
      return await getSystem(c);
    } finally {
      await c.close();
    }
  };

  it(`imports the domain CA and certificate, binds the API with mTLS, and checks it over a connection trusting only \
that CA`, async () => {
    const result = await runIn(mockEnv(), install, { target: bench.target('sw'), domain: 'site-a' });
    assert.equal(result.changed, true);
    assert.match(result.certificateId, /^fleet-site-a-[0-9a-f]{12}$/);
    assert.match(result.caCertificateId, /^fleet-site-a-ca-[0-9a-f]{12}$/);
    assert.ok(result.validTo && Date.parse(result.validTo) > Date.now());
    const sw = bench.sim.switch('sw');
    assert.deepEqual(sw.config.api, { certificate: result.certificateId, mtlsCa: result.caCertificateId });
    assert.deepEqual(
      nvueLines(bench.sim, 'sw')
        .filter((r) => r.line.startsWith('POST /nvue_v1/system') || r.line.startsWith('PATCH /nvue_v1/system'))
        .map((r) => [r.line.replace(/rev=\d+/, 'rev=N'), r.body]),
      [
        [
          `POST /nvue_v1/system/security/ca-certificate/${result.caCertificateId}`,
          { '@import': { state: 'start', parameters: { data: '<PEM masked>' } } },
        ],
        [
          `POST /nvue_v1/system/security/certificate/${result.certificateId}`,
          { '@import': { state: 'start', parameters: { data: '<PEM masked>' } } },
        ],
        ['PATCH /nvue_v1/system/api?rev=N', { certificate: result.certificateId }],
        ['PATCH /nvue_v1/system/api/mtls?rev=N', { 'ca-certificate': result.caCertificateId }],
      ],
    );
    // The switch now proves itself with the site certificate and wants the site's client certificate.
    const identity = { clientCertPem: pki.client.certPem, clientKeyPem: pki.client.keyPem };
    assert.equal((await hello('sw', { caPem: pki.caPem, ...identity }))['hostname'], 'sw');
    await assert.rejects(
      hello('sw', { caPem: pki.caPem }),
      (err: unknown) => err instanceof NvueError && err.kind === 'Forbidden',
    );
    await assert.rejects(
      hello('sw', { pinnedSha256: pki.bootstrap.fingerprint, ...identity }),
      (err: unknown) => err instanceof NvueError && err.kind === 'TlsVerification',
    );
    assert.ok(!bench.logs.join('').includes('PRIVATE KEY'), 'no key material in the logs');
  });

  it(`after the install the satellite's own NVUE calls present the default domain's client identity (RMS \
default_switch_domain)`, async () => {
    const tls = { insecure: false, caFile: join(roots.switchCertRoot, 'site-a', 'ca.pem') };
    const without = { ...bench.access, nvos: { ...bench.access.nvos, tls } };
    await assert.rejects(
      (async () => getSystem(await openNvue(without, bench.target('sw'), new AbortController().signal)))(),
      (err: unknown) => err instanceof NvueError && err.kind === 'Forbidden',
    );
    const withDomain = {
      ...bench.access,
      nvos: { ...bench.access.nvos, tls, clientTlsRoot: roots.clientTlsRoot, defaultSwitchDomain: 'site-a' },
    };
    const client = await openNvue(withDomain, bench.target('sw'), new AbortController().signal);
    try {
      assert.equal((await getSystem(client))['hostname'], 'sw');
    } finally {
      await client.close();
    }
    const broken = { ...withDomain, nvos: { ...withDomain.nvos, defaultSwitchDomain: 'mismatched-none' } };
    await assert.rejects(
      openNvue(broken, bench.target('sw'), new AbortController().signal),
      /cannot read .*mismatched-none\/client\.pem/,
    );
  });

  it('run again, finds everything in place and imports nothing', async () => {
    const before = nvueLines(bench.sim, 'sw').length;
    const result = await runIn(mockEnv(), install, { target: bench.target('sw'), domain: 'site-a' });
    assert.equal(result.changed, false);
    assert.deepEqual(
      nvueLines(bench.sim, 'sw')
        .slice(before)
        .filter((r) => r.line.startsWith('POST /nvue_v1/system')),
      [],
    );
  });

  it('refuses a domain that is not a folder name, and material that is missing or does not match', async () => {
    const bad = await runIn(mockEnv(), install, { target: bench.target('other'), domain: '../site-a' }).catch(
      (e: unknown) => e,
    );
    assert.ok(bad instanceof ApplicationFailure && bad.type === 'INVALID_ARGUMENT' && bad.nonRetryable, String(bad));

    const missing = await runIn(mockEnv(), install, { target: bench.target('other'), domain: 'site-b' }).catch(
      (e: unknown) => e,
    );
    assert.ok(
      missing instanceof ApplicationFailure && missing.type === 'FAILED_PRECONDITION' && missing.nonRetryable,
      String(missing),
    );
    assert.match(missing.message, new RegExp(`dev-other: cannot read ${roots.switchCertRoot}/site-b/.*ENOENT`));

    const mismatched = await runIn(mockEnv(), install, { target: bench.target('other'), domain: 'mismatched' }).catch(
      (e: unknown) => e,
    );
    assert.ok(
      mismatched instanceof ApplicationFailure && mismatched.type === 'FAILED_PRECONDITION',
      String(mismatched),
    );
    assert.match(mismatched.message, /mismatched: client\.key is not the key of client\.pem/);
    assert.deepEqual(bench.sim.switch('other').certificates.size, 0, 'nothing reached the switch');
  });
});
