import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startRedfishSimulator, type RedfishSimulator } from '@fleet/simulators';
import {
  applyPowerAction,
  getFirmwareInventory,
  getMnnvlinkTopology,
  getPowerState,
  pushFirmware,
  RedfishClient,
  RedfishError,
  waitForTask,
} from '../src/index.js';
import { freePort, peers } from './helpers/servers.js';

// Against the project's own BMC simulator (built by another team), in-process: sessions,
// fault injection and the firmware update flow. The core tests above do not depend on it.
describe('integration: the fleet BMC simulator', () => {
  let sim: RedfishSimulator;
  let client: RedfishClient;
  const id = 'bmc-int-1';
  before(async () => {
    sim = await startRedfishSimulator({
      bmcs: [
        { id, address: '127.0.0.1', port: await freePort(), username: 'admin', password: 'sim-pw', sessionLimit: 2 },
      ],
      timeScale: 0.001,
    });
    client = new RedfishClient({
      baseUrl: sim.bmcUrl(id),
      credentials: { username: 'admin', password: 'sim-pw' },
      auth: 'session',
      retryBaseDelayMs: 5,
    });
  });
  after(async () => {
    await client.close();
    await sim.close();
  });

  it('power, topology and inventory through one session', async () => {
    await applyPowerAction(client, 'on');
    for (let i = 0; i < 50 && (await getPowerState(client)) !== 'On'; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await getPowerState(client), 'On');
    const topo = await getMnnvlinkTopology(client);
    assert.equal(typeof topo.chassisSerialNumber, 'string');
    const inv = await getFirmwareInventory(client);
    assert.ok(inv.components.length > 0);
    const logins = sim.bmc(id).log.filter((r) => r.method === 'POST' && r.path.endsWith('/Sessions'));
    assert.equal(logins.length, 1);
  });

  it('stale links: re-discovers from the service root', async () => {
    const system = sim.bmc(id).log.find((r) => r.method === 'GET' && /\/Systems\/[^/]+$/.test(r.path))!.path;
    sim.bmc(id).setFaults({ staleLinks: [system] });
    try {
      assert.equal(await getPowerState(client), 'On');
    } finally {
      sim.bmc(id).setFaults({});
    }
  });

  it('multipart push: the simulator parses both parts; a task, if started, ends in a typed result', async () => {
    const filePath = `${peers}/pldm-fwpkg-vectors/pkg-1.0.0.fwpkg`;
    const pushed = await pushFirmware(client, { filePath, forceUpdate: true }).catch((e: unknown) => e);
    const post = sim.bmc(id).log.find((r) => r.method === 'POST' && r.path.endsWith('/update-multipart'));
    assert.deepEqual(post?.body, {
      UpdateParameters: { Targets: [], ForceUpdate: true },
      UpdateFile: { filename: 'pkg-1.0.0.fwpkg', size: statSync(filePath).size },
    });
    if (pushed instanceof RedfishError) {
      // The simulator checks the package against its hardware profile; a generic test vector may be refused.
      assert.equal(pushed.code, 'InvalidArgument');
      return;
    }
    assert.ok(!(pushed instanceof Error), String(pushed));
    const result = await waitForTask(client, (pushed as { taskUri: string }).taskUri, {
      pollIntervalMs: 20,
      timeoutMs: 30_000,
    });
    assert.ok(['succeeded', 'failed'].includes(result.outcome));
  });
});
