import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildWaves,
  maintenanceWindowAt,
  makespanLowerBound,
  simulateMakespan,
  startable,
  switchCounts,
} from '../src/campaign-schedule.js';

const dev = (
  id: string,
  rack: string | null,
  nodeType = 'compute_gb200_nvidia',
  powerDomain = rack ?? `device:${id}`,
) => ({ deviceId: id, rackId: rack, powerDomain, nodeType });
const caps = { maxConcurrentPerSite: 100, maxConcurrentPerRack: 100, maxConcurrentPerPowerDomain: 100 };

describe('campaign scheduling', () => {
  it('the canary goes first, alone, then waves of the asked size, racks kept together', () => {
    const devices = [dev('b1', 'B'), dev('a1', 'A'), dev('a2', 'A'), dev('b2', 'B'), dev('a3', 'A')];
    const waves = buildWaves(devices, 1, 2);
    assert.deepEqual(waves, [
      { index: 0, kind: 'canary', deviceIds: ['a1'] },
      { index: 1, kind: 'wave', deviceIds: ['a2', 'a3'] },
      { index: 2, kind: 'wave', deviceIds: ['b1', 'b2'] },
    ]);
    assert.deepEqual(
      buildWaves(devices, 0, 10).map((w) => w.kind),
      ['wave'],
    );
  });

  it('caps per site, rack and power domain hold, and a blocked rack does not block another', () => {
    const pending = [
      dev('a1', 'A'),
      dev('a2', 'A'),
      dev('a3', 'A'),
      dev('b1', 'B'),
      dev('c1', 'C', 'compute_gb200_nvidia', 'A'),
    ];
    const running = [dev('a0', 'A')];
    const started = startable(pending, running, { ...caps, maxConcurrentPerRack: 2 }, new Map());
    assert.deepEqual(
      started.map((d) => d.deviceId),
      ['a1', 'b1', 'c1'],
    );
    assert.deepEqual(
      startable(pending, running, { ...caps, maxConcurrentPerSite: 2 }, new Map()).map((d) => d.deviceId),
      ['a1'],
    );
    // Power domain A is shared by racks A and C.
    assert.deepEqual(
      startable(pending, running, { ...caps, maxConcurrentPerPowerDomain: 2 }, new Map()).map((d) => d.deviceId),
      ['a1', 'b1'],
    );
  });

  it('never more than the configured share of a rack’s switch trays, but always at least one', () => {
    const switches = Array.from({ length: 9 }, (_, i) => dev(`s${i}`, 'R', 'switch_gb200_nvidia'));
    const counts = switchCounts(switches);
    assert.equal(startable(switches, [], { ...caps, maxSwitchShareOfRack: 0.34 }, counts).length, 3);
    assert.equal(startable(switches, [], { ...caps, maxSwitchShareOfRack: 0.01 }, counts).length, 1);
    assert.equal(startable(switches, switches.slice(0, 3), { ...caps, maxSwitchShareOfRack: 0.34 }, counts).length, 0);
  });

  it('the simulated schedule is never shorter than the lower bound, and meets it when the site cap binds', () => {
    const devices = Array.from({ length: 10 }, (_, i) => dev(`d${i}`, null));
    const waves = buildWaves(devices, 0, 10);
    const limited = { ...caps, maxConcurrentPerSite: 3 };
    assert.equal(
      simulateMakespan(devices, waves, limited, () => 100),
      400,
    );
    assert.equal(
      makespanLowerBound(devices, limited, () => 100),
      400,
    );
    const racks = [...Array.from({ length: 6 }, (_, i) => dev(`a${i}`, 'A')), dev('b0', 'B')];
    const rackCapped = { ...caps, maxConcurrentPerRack: 2 };
    assert.ok(
      simulateMakespan(racks, buildWaves(racks, 1, 10), rackCapped, () => 10) >=
        makespanLowerBound(racks, rackCapped, () => 10, [racks[0]!]),
    );
  });

  it('maintenance windows: open inside, next opening outside, a window spanning the week boundary', () => {
    const sat2200 = Date.UTC(2026, 11, 5, 22, 0); // Saturday
    const windows = [{ weekdays: [6], startMinute: 21 * 60, durationMinutes: 240 }];
    assert.deepEqual(maintenanceWindowAt(sat2200, windows), { open: true });
    const sun0030 = Date.UTC(2026, 11, 6, 0, 30);
    assert.deepEqual(maintenanceWindowAt(sun0030, windows), { open: true });
    const sun0200 = Date.UTC(2026, 11, 6, 2, 0);
    assert.deepEqual(maintenanceWindowAt(sun0200, windows), { open: false, opensAtMs: Date.UTC(2026, 11, 12, 21, 0) });
    assert.deepEqual(maintenanceWindowAt(sun0200, []), { open: true });
  });
});
