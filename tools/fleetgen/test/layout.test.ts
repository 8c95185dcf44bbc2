import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { devicesPerRack, planFleet } from '../layout.js';

describe('fleet layout', () => {
  const fleet = planFleet({
    sites: 2,
    racksPerSite: 2,
    rackTypes: ['gb200_nvl72', 'gb300_nvl72'],
    firstAddress: '127.20.0.250',
  });

  it('lays out an NVL72 rack: 18 compute, 9 switch trays, 8 power shelves, no two in one U', () => {
    assert.equal(devicesPerRack, 35);
    const rack = fleet.devices.filter((d) => d.site === 'site-01' && d.rack === 'r001');
    const count = (k: string) => rack.filter((d) => d.kind === k).length;
    assert.deepEqual([count('compute'), count('switch'), count('powershelf')], [18, 9, 8]);
    assert.equal(new Set(rack.map((d) => d.position)).size, rack.length);
    assert.ok(rack.every((d) => d.position >= 1 && d.position <= 48));
    // Switch trays sit between the two compute blocks.
    const sw = rack.filter((d) => d.kind === 'switch').map((d) => d.position);
    const ct = rack.filter((d) => d.kind === 'compute').map((d) => d.position);
    assert.ok(ct.some((p) => p > Math.max(...sw)) && ct.some((p) => p < Math.min(...sw)));
  });

  it('gives every device a unique name, serial, MAC and consecutive address across octets', () => {
    for (const key of ['name', 'serial', 'mac', 'ip'] as const)
      assert.equal(new Set(fleet.devices.map((d) => d[key])).size, fleet.devices.length, key);
    assert.equal(fleet.devices[0]!.ip, '127.20.0.250');
    assert.equal(fleet.devices[6]!.ip, '127.20.1.0');
  });

  it('alternates rack families and uses node types the drivers know', () => {
    assert.deepEqual(
      fleet.racks.map((r) => r.type),
      ['gb200_nvl72', 'gb300_nvl72', 'gb200_nvl72', 'gb300_nvl72'],
    );
    assert.ok(fleet.devices.some((d) => d.nodeType === 'powershelf_gb300_delta'));
    assert.ok(
      fleet.devices.every((d) => /^(compute|switch|powershelf)_gb[23]00_(nvidia|liteon|delta)$/.test(d.nodeType)),
    );
  });
});
