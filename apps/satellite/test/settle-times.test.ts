import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SettleTimes } from '../src/activities/settle-times.js';

describe('SettleTimes', () => {
  it('waits nothing before it has seen a settle of that node type and action', () => {
    const times = new SettleTimes(0.8);
    assert.equal(times.waitMs('compute_gb200_nvidia', 'on'), 0);
    times.record('compute_gb200_nvidia', 'on', 30_000);
    assert.equal(times.waitMs('compute_gb200_nvidia', 'off'), 0);
    assert.equal(times.waitMs('switch_tray_nvidia', 'on'), 0);
  });

  it('waits its fraction of the quickest recent settle', () => {
    const times = new SettleTimes(0.8);
    for (const ms of [31_000, 30_000, 45_000]) times.record('compute_gb200_nvidia', 'on', ms);
    assert.equal(times.waitMs('compute_gb200_nvidia', 'on'), 24_000);
  });

  it('follows a fleet that got faster, and forgets a quick settle once 16 later ones were seen', () => {
    const times = new SettleTimes(0.5);
    times.record('powershelf', 'on', 10_000);
    // A device that settled before the first poll is recorded at that poll (its start): the wait shrinks each time.
    times.record('powershelf', 'on', times.waitMs('powershelf', 'on'));
    assert.equal(times.waitMs('powershelf', 'on'), 2_500);
    for (let i = 0; i < 16; i++) times.record('powershelf', 'on', 8_000);
    assert.equal(times.waitMs('powershelf', 'on'), 4_000);
  });

  it('refuses a fraction that would never poll or poll before the reset', () => {
    for (const fraction of [0, 1, -0.1, Number.NaN]) assert.throws(() => new SettleTimes(fraction), RangeError);
  });
});
