import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Device, Job } from '@fleet/db';
import { deviceTarget, devicePowerInput, rackTargets } from '../src/workflow-input.js';

const device = (name: string, nodeType: string, redfishSystemId: string | null): Device =>
  ({
    id: `id-${name}`,
    name,
    nodeType,
    bmcUrl: `https://${name}.bmc`,
    credentialRef: 'bmc/site',
    redfishSystemId,
  }) as unknown as Device;

const power = {
  settleTimeoutS: 60,
  heartbeatTimeoutS: 30,
  startToCloseTimeoutS: 300,
  maximumAttempts: 3,
} as Parameters<typeof devicePowerInput>[2];

describe('workflow input: the device row as a BMC target', () => {
  it('carries the Redfish system the inventory names, to every device and rack job', () => {
    const blade = device('blade-2', 'compute_gb200_nvidia', 'System_2');
    assert.deepEqual(deviceTarget(blade), {
      deviceId: 'id-blade-2',
      nodeType: 'compute_gb200_nvidia',
      bmcUrl: 'https://blade-2.bmc',
      credentialRef: 'bmc/site',
      redfishSystemId: 'System_2',
    });
    const input = devicePowerInput({ id: 'job-1', params: { action: 'on' } } as unknown as Job, blade, power);
    assert.ok(!Array.isArray(input));
    assert.equal(input.target.redfishSystemId, 'System_2');
    const rack = rackTargets([blade, device('shelf-1', 'powershelf_gb200_liteon', null)]);
    assert.ok(!Array.isArray(rack));
    assert.equal(rack.compute[0]?.redfishSystemId, 'System_2');
  });

  it('names no system when the inventory has none (the BMC must then have one host system)', () => {
    const target = deviceTarget(device('tray-1', 'compute_gb200_nvidia', null));
    assert.ok(!Array.isArray(target));
    assert.equal('redfishSystemId' in target, false);
  });
});
