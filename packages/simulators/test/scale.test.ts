import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expandBmcs, SimulatorConfig } from '../src/config.js';
import { startRedfishSimulator } from '../src/redfish/server.js';
import { basic } from './helpers.js';

describe('scale', () => {
  it('serves 10,000 BMCs from one process', async () => {
    const rssBefore = process.memoryUsage().rss;
    const config = SimulatorConfig.parse({
      admin: { port: 0 },
      generate: [
        {
          count: 10_000,
          idPrefix: 'scale-',
          firstAddress: `127.${250 + (process.pid % 5)}.0.1`,
          port: 8443,
          username: 'admin',
          password: 'secret-pw',
          profile: 'gb200-compute',
        },
      ],
    });
    const bmcs = expandBmcs(config);
    const started = Date.now();
    const sim = await startRedfishSimulator({ bmcs, timeScale: 0.001 });
    try {
      const startMs = Date.now() - started;
      const last = bmcs.at(-1)!;
      const res = await fetch(`${sim.bmcUrl(last.id)}/redfish/v1/Systems/System_0`, {
        headers: { authorization: basic },
      });
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { Id: string }).Id, 'System_0');
      assert.equal(sim.bmc(last.id).log.length, 1);
      assert.equal(sim.bmc(bmcs[0]!.id).log.length, 0);
      const rssMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
      // Reported, not asserted: timing and memory vary by machine.
      console.log(`10,000 BMCs: started in ${startMs} ms, RSS +${rssMb.toFixed(0)} MB`);
    } finally {
      await sim.close();
    }
  });

  it('keeps only the last 1,000 requests per BMC, and the log can be cleared', async () => {
    const sim = await startRedfishSimulator({
      bmcs: [
        {
          id: 'ring',
          address: `127.${250 + (process.pid % 5)}.200.1`,
          port: 8443,
          username: 'admin',
          password: 'secret-pw',
        },
      ],
    });
    try {
      const bmc = sim.bmc('ring');
      for (let i = 0; i < 1_500; i++)
        bmc.record({ at: String(i), method: 'GET', path: `/redfish/v1/${i}`, status: 200 });
      assert.equal(bmc.log.length, 1_000);
      assert.equal(bmc.log[0]!.at, '500');
      assert.equal(bmc.log.at(-1)!.at, '1499');
      bmc.clearLog();
      assert.deepEqual(bmc.log, []);
    } finally {
      await sim.close();
    }
  });
});
