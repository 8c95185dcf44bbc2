import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ComponentResult, DeviceFirmwareResult } from '@fleet/domain';
import {
  checkFlashes,
  checkInstalled,
  checkIntents,
  checkProjection,
  checkResets,
  type FirmwareJob,
} from './checks.js';

// Each chaos check finds what it must (and nothing on clean evidence), so a run's zeros mean something.

function collect() {
  const found: Record<string, string[]> = {};
  return { found, offend: (check: string, id: string) => (found[check] ??= []).push(id) };
}

const t0 = Date.parse('2026-12-05T07:00:00Z');
const at = (s: number) => new Date(t0 + s * 1000).toISOString();
const component = (status: ComponentResult['status'], to = '2.0'): ComponentResult => ({
  id: 'BMC_0',
  from: '1.0',
  to,
  installed: status === 'failed' ? '1.0' : to,
  status,
  code: status === 'failed' ? 'CLIENT_FAILURE' : 'SUCCESS',
});
const job = (state: string, components: ComponentResult[], from = 10, to = 60): FirmwareJob => ({
  id: 'job-1',
  state,
  result: { deviceId: 'd', status: 'updated', components, inventory: [] } as DeviceFirmwareResult,
  created_at: new Date(t0 + from * 1000),
  finished_at: new Date(t0 + to * 1000),
});
const flash = (s: number, version = '2.0') => ({ id: 'BMC_0', version, filename: 'fw.fwpkg', at: at(s) });

describe('chaos end-state checks', () => {
  it('an intent whose job is open or missing is lost', () => {
    const { found, offend } = collect();
    checkIntents(
      [
        { job_id: 'a', state: 'succeeded' },
        { job_id: 'b', state: 'running' },
        { job_id: 'c', state: null },
        { job_id: 'd', state: 'failed' },
      ],
      offend,
    );
    assert.deepEqual(found['lost_intents'], ['b (running)', 'c (null)']);
  });

  it('one flash per version is clean; the same version flashed twice is a double flash', () => {
    const clean = collect();
    checkFlashes('tray-1', [flash(20)], [job('succeeded', [component('updated')])], clean.offend);
    assert.deepEqual(clean.found, {});
    const twice = collect();
    checkFlashes('tray-1', [flash(20), flash(40)], [job('succeeded', [component('updated')])], twice.offend);
    assert.deepEqual(twice.found['double_flashes'], ['tray-1 BMC_0@2.0 x2']);
  });

  it('updated with no flash of that version during the job is a false success', () => {
    for (const flashes of [[], [flash(5)], [flash(70)], [flash(30, '1.9')]]) {
      const { found, offend } = collect();
      checkFlashes('tray-1', flashes, [job('succeeded', [component('updated')])], offend);
      assert.equal(found['false_successes']?.length, 1, JSON.stringify(flashes));
    }
    // Already there (skipped) is fine when the version was flashed before the job ended, even by an earlier job.
    const skipped = collect();
    checkFlashes('tray-1', [flash(5)], [job('succeeded', [component('skipped')])], skipped.offend);
    assert.deepEqual(skipped.found, {});
  });

  it('a succeeded job with a failed component or no component at all is a false success', () => {
    const { found, offend } = collect();
    checkFlashes(
      'tray-1',
      [],
      [job('succeeded', [component('failed')]), { ...job('succeeded', []), id: 'j2' }],
      offend,
    );
    assert.deepEqual(found['false_successes'], [
      'tray-1 job job-1 succeeded with BMC_0 failed',
      'tray-1 job j2 succeeded with no component result',
    ]);
    // A failed job that says so is honest.
    const honest = collect();
    checkFlashes('tray-1', [], [job('failed', [component('failed')])], honest.offend);
    assert.deepEqual(honest.found, {});
  });

  it('a succeeded job whose version is not installed now is a false success', () => {
    const { found, offend } = collect();
    checkInstalled('tray-1', job('succeeded', [component('updated')]), [{ id: 'BMC_0', version: '1.0' }], offend);
    checkInstalled('tray-1', job('succeeded', [component('updated')]), [{ id: 'BMC_0', version: '2.0' }], offend);
    assert.deepEqual(found['false_successes'], ['tray-1 job job-1 BMC_0: installed is not 2.0']);
  });

  it('two accepted host resets in one rack job, or one outside every rack job, are duplicates', () => {
    const windows = [{ id: 'rack-1', from: t0, to: t0 + 60_000 }];
    const reset = (s: number, status = 204, path = '/redfish/v1/Systems/1/Actions/ComputerSystem.Reset') => ({
      at: at(s),
      path,
      status,
    });
    const clean = collect();
    const counted = checkResets(
      'tray-1',
      [reset(10), reset(20, 503), reset(30, 0), reset(40, 204, '/redfish/v1/Managers/BMC_0/Actions/Manager.Reset')],
      windows,
      clean.offend,
    );
    assert.deepEqual([counted, clean.found], [1, {}]);
    const { found, offend } = collect();
    checkResets('tray-1', [reset(10), reset(20), reset(90)], windows, offend);
    assert.equal(found['duplicate_power_actions']?.length, 2);
    assert.match(found['duplicate_power_actions']![0]!, /outside every rack job/);
    assert.match(found['duplicate_power_actions']![1]!, /rack-1: 2 resets/);
  });

  it("a job whose state is not its workflow's, or that projected a run Temporal does not have, is a mismatch", () => {
    const { found, offend } = collect();
    const j = { id: 'j', kind: 'device.power', state: 'succeeded', run_id: 'r1' };
    checkProjection(j, 'succeeded', offend);
    checkProjection({ ...j, run_id: null }, 'no-workflow', offend);
    assert.deepEqual(found, {});
    checkProjection(j, 'failed', offend);
    checkProjection(j, 'no-workflow', offend);
    assert.equal(found['projection_mismatches']?.length, 2);
  });
});
