import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startAdminServer, startRedfishSimulator, type RedfishSimulator } from '@fleet/simulators';
import { driverFor, type NodeDriver } from '../src/index.js';

// A BMC whose Redfish service hangs on reads but still takes Manager.Reset (the remediation playbook's first step).
const credentials = { username: 'admin', password: 'sekret' };

describe('Manager.Reset of a BMC that does not answer reads', () => {
  let sim: RedfishSimulator;
  let admin: { port: number; close(): Promise<void> };
  const open: NodeDriver[] = [];
  const driver = () => {
    const d = driverFor('compute_gb200_nvidia')({
      target: { deviceId: 'hung', nodeType: 'compute_gb200_nvidia', bmcUrl: sim.bmcUrl('hung'), credentialRef: 'r' },
      credentials,
      redfish: { connectTimeoutMs: 2000, requestTimeoutMs: 2000, maxAttempts: 3 },
    });
    open.push(d);
    return d;
  };

  before(async () => {
    sim = await startRedfishSimulator({
      bmcs: [
        {
          id: 'hung',
          profile: 'gb200-compute',
          address: `127.${randomInt(2, 250)}.${randomInt(0, 250)}.1`,
          port: 20_000 + randomInt(0, 20_000),
          ...credentials,
          powerState: 'On',
        },
      ],
      timeScale: 0.01,
    });
    admin = await startAdminServer(sim, ['hung'], '127.0.0.1', 0);
  });
  after(async () => {
    await Promise.all(open.map((d) => d.close()));
    await admin.close();
    await sim.close();
  });

  it('goes straight to the action target when discovery hangs; the BMC answers again after its reboot', async () => {
    const res = await fetch(`http://127.0.0.1:${admin.port}/bmcs/hung/health/unresponsive`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'timeout', clearOnReboot: true, answersManagerReset: true }),
    });
    assert.ok(res.ok);
    const d = driver();
    assert.equal((await d.probe()).reachable, false);
    sim.bmc('hung').clearLog();
    await d.resetManager('bmc');
    assert.ok(
      sim
        .bmc('hung')
        .log.some((r) => r.method === 'POST' && r.path === '/redfish/v1/Managers/BMC_0/Actions/Manager.Reset'),
      JSON.stringify(sim.bmc('hung').log),
    );
    const deadline = Date.now() + 10_000;
    let probe = await d.probeManager('bmc');
    while (!probe.reachable && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      probe = await d.probeManager('bmc');
    }
    assert.ok(probe.reachable, JSON.stringify(probe));
  });
});
