import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect } from 'node:tls';
import { RedfishError } from '@fleet/redfish';
import { startRedfishSimulator, type RedfishSimulator } from '@fleet/simulators';
import { createCa } from '@fleet/simulators/pki';
import { driverFor, type RedfishTransport } from '../src/index.js';

const credentials = { username: 'admin', password: 'sekret' };

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/** The SHA-256 fingerprint of the certificate the server at `url` presents (not checked). */
function fingerprintAt(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect({ host: hostname, port: Number(port), rejectUnauthorized: false }, () => {
      resolve(s.getPeerCertificate().fingerprint256);
      s.end();
    });
    s.once('error', reject);
  });
}

// A site pins each BMC's own certificate (satellite config redfish.tls.pins): the driver picks the pin of its BMC.
describe('per-BMC certificate pins', () => {
  let dir: string;
  let sim: RedfishSimulator;
  const ids = ['bmc-pin-1', 'bmc-pin-2'];
  const powerState = async (id: string, redfish: RedfishTransport) => {
    const target = { deviceId: id, nodeType: 'compute_gb200_nvidia', bmcUrl: sim.bmcUrl(id), credentialRef: 'r' };
    const driver = driverFor('compute_gb200_nvidia')({ target, credentials, redfish: { maxAttempts: 1, ...redfish } });
    try {
      return await driver.powerState();
    } finally {
      await driver.close();
    }
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-bmc-pins-'));
    const port = await freePort();
    sim = await startRedfishSimulator({
      bmcs: ids.map((id, i) => ({ id, address: `127.0.0.${i + 1}`, port, ...credentials })),
      timeScale: 0.001,
      tls: { ca: createCa(dir, 'site-bmc-ca'), dir },
    });
  });
  after(async () => {
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("each BMC is checked by its own pin, by its URL's host and port", async () => {
    const [pin1, pin2] = await Promise.all(ids.map((id) => fingerprintAt(sim.bmcUrl(id))));
    const pinsByHost = { [new URL(sim.bmcUrl(ids[0]!)).host]: pin1!, [new URL(sim.bmcUrl(ids[1]!)).host]: pin2! };
    for (const id of ids) assert.equal(await powerState(id, { pinsByHost }), 'Off');
  });

  it("a BMC whose pin is another BMC's is refused, before any request", async () => {
    const pin1 = await fingerprintAt(sim.bmcUrl(ids[0]!));
    sim.bmc(ids[1]!).clearLog();
    const err = await powerState(ids[1]!, { pinsByHost: { [new URL(sim.bmcUrl(ids[1]!)).host]: pin1 } }).catch(
      (e: unknown) => e,
    );
    assert.ok(err instanceof RedfishError && err.code === 'FailedPrecondition', String(err));
    assert.match(err.causeText, /does not match the pinned/);
    assert.deepEqual(sim.bmc(ids[1]!).log, []);
  });

  it('a BMC with no pin of its own falls back to the site policy (here the system store, which refuses)', async () => {
    const pin1 = await fingerprintAt(sim.bmcUrl(ids[0]!));
    const err = await powerState(ids[1]!, { pinsByHost: { [new URL(sim.bmcUrl(ids[0]!)).host]: pin1 } }).catch(
      (e: unknown) => e,
    );
    assert.ok(err instanceof RedfishError && err.code === 'FailedPrecondition', String(err));
    assert.match(err.causeText, /unable to verify|issuer|verif/i);
  });
});
