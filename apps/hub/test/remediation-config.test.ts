import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { playbookFor } from '../src/services/remediation.service.js';
import { HubConfig } from '../src/config.js';

const parse = (playbooks: unknown) => HubConfig.shape.remediation.safeParse({ playbooks });
const paths = (playbooks: unknown) => {
  const r = parse(playbooks);
  assert.equal(r.success, false);
  return r.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('the hub config: per-node-type playbooks (docs/day2.md)', () => {
  it('accepts every step, the AC cycle, the reflash and the burn-in included, and uses them for that type', () => {
    const steps = ['bmc_reset', 'ac_cycle', 'firmware_reflash', 'burn_in'];
    const r = parse({ compute_gb300_nvidia: { gpu: { steps } } });
    assert.ok(r.success, JSON.stringify(r.error?.issues));
    assert.deepEqual(playbookFor(r.data, 'compute_gb300_nvidia', 'gpu').steps, steps);
    // Other types keep their role's default, the new steps in their place.
    assert.deepEqual(playbookFor(r.data, 'compute_gb200_nvidia', 'gpu').steps, [
      'hmc_reset',
      'power_cycle',
      'ac_cycle',
      'firmware_reflash',
      'burn_in',
    ]);
  });

  it('names the field of an unknown step', () => {
    const [issue] = paths({ compute_gb200_nvidia: { gpu: { steps: ['power_cycle', 'ac_reset'] } } });
    assert.match(issue!, /^playbooks\.compute_gb200_nvidia\.gpu\.steps\.1: /);
  });

  it('refuses a burn-in for a switch or a shelf, naming the field', () => {
    assert.deepEqual(paths({ switch_gb200_nvidia: { chassis: { steps: ['bmc_reset', 'burn_in'] } } }), [
      "playbooks.switch_gb200_nvidia.chassis.steps.1: burn_in needs a compute tray's host; switch_gb200_nvidia is a " +
        'switch',
    ]);
  });
});
