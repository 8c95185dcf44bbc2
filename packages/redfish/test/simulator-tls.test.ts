import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect } from 'node:tls';
import { startRedfishSimulator, type RedfishSimulator } from '@fleet/simulators';
import { createCa, type CertificateAuthority } from '@fleet/simulators/pki';
import { getPowerState, RedfishClient, RedfishError, type RedfishTlsOptions } from '../src/index.js';
import { freePort } from './helpers/servers.js';

/** The certificate a BMC presents, checked against `ca` for the BMC's address (its IP SAN). */
function presented(url: string, ca: string): Promise<{ fingerprint: string; subjectaltname: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect({ host: hostname, port: Number(port), ca }, () => {
      const cert = s.getPeerCertificate();
      s.end();
      resolve({ fingerprint: cert.fingerprint256, subjectaltname: cert.subjectaltname ?? '' });
    });
    s.once('error', reject);
  });
}

// The Redfish client's TLS policy against the BMC simulator over HTTPS: each simulated BMC presents its own
// certificate from a site CA, as a site's BMCs do once their certificates are replaced.
describe('TLS against the BMC simulator over HTTPS', () => {
  let dir: string;
  let sim: RedfishSimulator;
  let siteCa: CertificateAuthority;
  let otherCa: CertificateAuthority;
  const ids = ['bmc-tls-1', 'bmc-tls-2'];
  const credentials = { username: 'admin', password: 'sim-pw' };

  const read = async (id: string, tls: RedfishTlsOptions | undefined) => {
    const c = new RedfishClient({
      baseUrl: sim.bmcUrl(id),
      device: `device-${id}`,
      credentials,
      maxAttempts: 1,
      ...(tls ? { tls } : {}),
    });
    try {
      return await getPowerState(c);
    } finally {
      await c.close();
    }
  };
  /** Refused before any request reached the BMC, with a typed error naming the BMC, the URI and the cause. */
  const refused = async (id: string, tls: RedfishTlsOptions | undefined, cause: RegExp) => {
    const err = await read(id, tls).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError, String(err));
    assert.equal(err.code, 'FailedPrecondition');
    assert.equal(err.retryable, false);
    assert.equal(err.bmc, sim.bmcUrl(id));
    assert.equal(err.uri, '/redfish/v1');
    assert.match(err.causeText, cause);
    assert.match(err.message, new RegExp(`${sim.bmcUrl(id)} /redfish/v1: `));
    assert.deepEqual(sim.bmc(id).log, [], 'no request reached the BMC');
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-sim-tls-'));
    siteCa = createCa(dir, 'site-bmc-ca');
    otherCa = createCa(dir, 'other-site-ca');
    const port = await freePort();
    sim = await startRedfishSimulator({
      bmcs: ids.map((id, i) => ({ id, address: `127.0.0.${i + 1}`, port, username: 'admin', password: 'sim-pw' })),
      timeScale: 0.001,
      tls: { ca: siteCa, dir },
    });
  });
  after(async () => {
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves HTTPS, each BMC with a certificate of its own for its address', async () => {
    assert.match(sim.bmcUrl(ids[0]!), /^https:\/\/127\.0\.0\.1:\d+$/);
    const [a, b] = await Promise.all(ids.map((id) => presented(sim.bmcUrl(id), siteCa.certPem)));
    assert.equal(a!.subjectaltname, 'IP Address:127.0.0.1');
    assert.equal(b!.subjectaltname, 'IP Address:127.0.0.2');
    assert.notEqual(a!.fingerprint, b!.fingerprint);
  });

  it('CA mode: the site CA bundle is accepted (as a file or PEM)', async () => {
    assert.equal(await read(ids[0]!, { caFile: siteCa.certFile }), 'Off');
    assert.equal(await read(ids[1]!, { caPem: siteCa.certPem }), 'Off');
  });

  it('CA mode: another CA, or the system store, is refused', async () => {
    sim.bmc(ids[0]!).clearLog();
    await refused(ids[0]!, { caFile: otherCa.certFile }, /unable to verify|issuer|verif/i);
    await refused(ids[0]!, undefined, /unable to verify|issuer|verif/i);
  });

  it('pin mode: the BMC certificate pin is accepted, another BMC pin refused', async () => {
    const [a, b] = await Promise.all(ids.map((id) => presented(sim.bmcUrl(id), siteCa.certPem)));
    assert.equal(await read(ids[0]!, { pinnedSha256: a!.fingerprint }), 'Off');
    sim.bmc(ids[1]!).clearLog();
    await refused(ids[1]!, { pinnedSha256: a!.fingerprint }, /does not match the pinned/);
    assert.equal(await read(ids[1]!, { pinnedSha256: b!.fingerprint }), 'Off');
  });

  it('a BMC that resets connections does so over TLS too (retryable, and the simulator keeps serving)', async () => {
    const bmc = sim.bmc(ids[0]!);
    bmc.setFaults({ resetRate: 1 });
    const err = await read(ids[0]!, { caFile: siteCa.certFile }).catch((e: unknown) => e);
    assert.ok(err instanceof RedfishError && err.retryable, String(err));
    bmc.setFaults({});
    assert.equal(await read(ids[0]!, { caFile: siteCa.certFile }), 'Off');
  });
});
