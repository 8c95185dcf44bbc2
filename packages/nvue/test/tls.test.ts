import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { NvosSimulator } from '@fleet/simulators';
import {
  bindApiCertificate,
  getCertificate,
  getSystem,
  importCaCertificate,
  importCertificate,
  NvueError,
  type NvueLogger,
  type NvueTlsOptions,
} from '../src/index.js';
import { clientFor, fast, makePki, requests, startSim, type Pki } from './helpers.js';

describe('NVUE over HTTPS: TLS policy and switch certificate install', () => {
  let dir: string;
  let pki: Pki;
  let sim: NvosSimulator;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nvue-tls-'));
    pki = makePki(dir);
    sim = await startSim([
      { id: 'policy', tls: pki.bootstrap },
      { id: 'mtls', tls: pki.bootstrap },
      // Already serving a certificate from the site CA, as a switch provisioned before.
      { id: 'site', tls: pki.server },
    ]);
  });
  after(async () => {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const hello = async (id: string, tls?: NvueTlsOptions, logger?: NvueLogger) => {
    const c = clientFor(sim, id, { maxAttempts: 1, ...(tls ? { tls } : {}), ...(logger ? { logger } : {}) });
    try {
      return await getSystem(c);
    } finally {
      await c.close();
    }
  };
  const refused = async (id: string, tls: NvueTlsOptions | undefined, kind: NvueError['kind'], pattern: RegExp) => {
    const before = requests(sim, id).length;
    const err = await hello(id, tls).catch((e: unknown) => e);
    assert.ok(err instanceof NvueError, String(err));
    assert.equal(err.kind, kind);
    assert.match(err.causeText, pattern);
    if (kind === 'TlsVerification') assert.equal(requests(sim, id).length, before, 'nothing reached the switch');
  };

  it('refuses a self-signed switch certificate by default, accepts it pinned, refuses a wrong pin', async () => {
    await refused('policy', undefined, 'TlsVerification', /self.signed|verif/i);
    assert.equal((await hello('policy', { pinnedSha256: pki.bootstrap.fingerprint }))['hostname'], 'policy');
    await refused('policy', { pinnedSha256: pki.server.fingerprint }, 'TlsVerification', /does not match the pinned/);
    await refused('policy', { caPem: pki.caPem }, 'TlsVerification', /self.signed|verif/i);
  });

  it('CA mode: a certificate from the site CA is accepted by the site bundle, refused by another CA', async () => {
    assert.equal((await hello('site', { caPem: pki.caPem }))['hostname'], 'site');
    const other = makePki(mkdtempSync(join(dir, 'other-')));
    await refused('site', { caPem: other.caPem }, 'TlsVerification', /unable to verify|issuer|verif/i);
    await refused('site', undefined, 'TlsVerification', /unable to verify|issuer|verif/i);
    assert.equal((await hello('site', { pinnedSha256: pki.server.fingerprint }))['hostname'], 'site');
    await refused('site', { pinnedSha256: other.server.fingerprint }, 'TlsVerification', /does not match the pinned/);
  });

  it('skips verification when told to, warning once per switch', async () => {
    const warnings: object[] = [];
    const logger = { warn: (obj: object) => warnings.push(obj) };
    await hello('policy', { insecure: true }, logger);
    await hello('policy', { insecure: true }, logger);
    assert.deepEqual(warnings, [{ switchId: 'policy' }]);
  });

  it('installs the site certificate and CA, binds the API to them, and then requires client certificates', async () => {
    const identity = { clientCertPem: pki.client.certPem, clientKeyPem: pki.client.keyPem };
    // Bootstrap: until the site certificate is in place the switch's cannot be verified (RMS's insecure_switch);
    // the client already presents its identity, so it keeps working once the switch requires it.
    const c = clientFor(sim, 'mtls', { tls: { insecure: true, ...identity } });
    try {
      await importCaCertificate(c, 'site-ca', { pem: pki.caPem }, fast);
      await importCertificate(c, 'site-cert', { pem: `${pki.server.certPem}${pki.server.keyPem}` }, fast);
      const imports = requests(sim, 'mtls').filter((r) => r.line.startsWith('POST'));
      assert.deepEqual(imports, [
        {
          line: 'POST /nvue_v1/system/security/ca-certificate/site-ca',
          status: 202,
          body: { '@import': { state: 'start', parameters: { data: '<PEM masked>' } } },
        },
        {
          line: 'POST /nvue_v1/system/security/certificate/site-cert',
          status: 202,
          body: { '@import': { state: 'start', parameters: { data: '<PEM masked>' } } },
        },
      ]);
      const bound = await bindApiCertificate(c, { certificateId: 'site-cert', caCertificateId: 'site-ca' }, fast);
      assert.equal(bound.noDiff, false);
      assert.equal(
        requests(sim, 'mtls').at(-1)?.line,
        'PATCH /nvue_v1/revision/applied',
        'saved, over a connection made after the switch restarted its server',
      );
      const staged = requests(sim, 'mtls').filter((r) => r.line.startsWith('PATCH /nvue_v1/system'));
      assert.deepEqual(
        staged.map((r) => [r.line.replace(/rev=\d+/, 'rev=N'), r.body]),
        [
          ['PATCH /nvue_v1/system/api?rev=N', { certificate: 'site-cert' }],
          ['PATCH /nvue_v1/system/api/mtls?rev=N', { 'ca-certificate': 'site-ca' }],
        ],
      );
    } finally {
      await c.close();
    }

    // A candidate transport for the new material, verified with a read-only request
    // (docs/reference/rms-behaviours.md#switch-certificates).
    const site = clientFor(sim, 'mtls', { tls: { caPem: pki.caPem, ...identity } });
    try {
      assert.equal((await getSystem(site))['hostname'], 'mtls');
      assert.deepEqual((await getCertificate(site, 'site-cert')).installed, ['nvue-rest-api']);
    } finally {
      await site.close();
    }
    await refused('mtls', { caPem: pki.caPem }, 'Forbidden', /client certificate/);
    assert.equal((await hello('mtls', { pinnedSha256: pki.server.fingerprint, ...identity }))['hostname'], 'mtls');
  });
});
