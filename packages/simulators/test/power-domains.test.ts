import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startRedfishSimulator, type RedfishSimulator } from '../src/index.js';

describe('rack power domains', () => {
  let sim: RedfishSimulator;
  const block = `127.${randomInt(2, 250)}.${randomInt(0, 250)}`;
  const port = 20_000 + randomInt(0, 20_000);
  const base = { port, username: 'admin', password: 'pw', powerDomain: 'rack-1' };
  before(async () => {
    sim = await startRedfishSimulator({
      bmcs: [
        { ...base, id: 'ps1', address: `${block}.1`, profile: 'powershelf-liteon' },
        { ...base, id: 'ps2', address: `${block}.2`, profile: 'powershelf-delta' },
        { ...base, id: 'ct1', address: `${block}.3`, profile: 'gb200-compute', powerState: 'On' },
        { ...base, id: 'sw1', address: `${block}.4`, profile: 'nvswitch-tray' },
        { ...base, id: 'other', address: `${block}.5`, profile: 'gb200-compute', powerDomain: 'rack-2' },
      ],
      timeScale: 0.001,
    });
  });
  after(() => sim.close());

  const get = (id: string) =>
    fetch(`${sim.bmcUrl(id)}/redfish/v1`).then(
      (r) => r.status,
      () => 'unreachable' as const,
    );

  it('trays lose AC only when every shelf of their domain is off, and boot when one returns', async () => {
    sim.bmc('ps1').reset('ForceOff');
    assert.equal(await get('ct1'), 200, 'one shelf still feeds the rack');
    sim.bmc('ps2').reset('ForceOff');
    assert.equal(await get('ct1'), 'unreachable');
    assert.equal(await get('sw1'), 'unreachable');
    assert.equal(sim.bmc('ct1').powerState, 'Off', 'the host lost power too');
    assert.equal(await get('other'), 200, 'another rack is not affected');
    assert.equal(await get('ps1'), 200, 'shelf controllers are on standby power');

    sim.bmc('ps1').reset('On');
    await new Promise((r) => setTimeout(r, 100));
    // Booting: the BMC answers 503 until bmcRebootS (120 s × 0.001) has passed.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await get('ct1'), 200);
    assert.equal(sim.bmc('ct1').powerState, 'Off', 'the host stays off after AC returns');
  });
});
