import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  actsOnHeldDevices,
  fleetLifecycleStates,
  holdText,
  isHeld,
  jobKinds,
  lifecycleRule,
  type DeviceHold,
} from '../src/index.js';

describe('held devices', () => {
  it('quarantined, remediating and rma hold a device; each has a way out through remediation or rma', () => {
    assert.deepEqual(
      fleetLifecycleStates.filter((s) => isHeld(s)),
      ['quarantined', 'remediating', 'rma'],
    );
    for (const s of fleetLifecycleStates.filter((s) => isHeld(s)))
      assert.ok(fleetLifecycleStates.some((to) => ['remediation', 'rma'].includes(lifecycleRule(s, to)?.by ?? '')));
  });

  it('only remediation and reads act on a held device without an override', () => {
    const free = [...jobKinds, 'device.quarantine', 'device.remediate', 'device.release'].filter(actsOnHeldDevices);
    assert.deepEqual(
      new Set(free),
      new Set([
        'device.quarantine',
        'device.remediate',
        'device.release',
        ...jobKinds.filter((k) => ['device.rma_ship', 'device.rma_return'].includes(k)),
        'device.power_refresh',
        'device.firmware_refresh',
      ]),
    );
    for (const k of ['device.power', 'batch.power', 'rack.power', 'switch.nvos_install', 'device.firmware_update'])
      assert.equal(actsOnHeldDevices(k), false, k);
  });

  it('says since when and why, with what the move recorded', () => {
    const hold: DeviceHold = {
      deviceId: 'd',
      name: 'ct0',
      state: 'quarantined',
      since: new Date('2026-01-02T03:04:05Z'),
      reason: 'LeakDetected',
      message: 'leak on LeakDetector_1',
      jobId: null,
    };
    assert.equal(holdText(hold), 'quarantined since 2026-01-02T03:04:05.000Z: leak on LeakDetector_1 (LeakDetected)');
    assert.equal(holdText({ ...hold, message: null }), 'quarantined since 2026-01-02T03:04:05.000Z: LeakDetected');
    assert.equal(
      holdText({ ...hold, reason: null, message: null }),
      'quarantined since 2026-01-02T03:04:05.000Z: no recorded reason',
    );
  });
});
