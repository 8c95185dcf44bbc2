import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { BurnInTest } from '@fleet/domain';
import { simulatedSite } from '../src/burn-in/index.js';
import { parseResultLine } from '../src/burn-in/result-line.js';
import { startTraySim, type TraySim } from './burn-in-helpers.js';

const run = promisify(execFile);

// The simulated site's job scripts, run by bash here as slurmd would run them (same environment), against the real
// BMC simulator: what each test reads from the tray health model, without a cluster.
describe('simulated-site burn-in scripts', () => {
  let sim: TraySim;
  before(async () => {
    sim = await startTraySim([{ id: 'ct01' }, { id: 'ct02' }, { id: 'off01', powerState: 'Off' }]);
  });
  after(() => sim.close());

  async function runScript(test: BurnInTest, trays: string[], simulatorUrl = sim.adminUrl) {
    const { script, environment } = simulatedSite({ simulatorUrl, jobPath: '/usr/bin:/bin' }).render({
      name: 'n/a',
      test,
      scope: test === 'nvlink_allreduce' ? 'rack' : 'tray',
      trays: trays.map((name) => ({ deviceId: `dev-${name}`, name })),
    });
    const { stdout } = await run('bash', ['-c', script], {
      env: { ...environment, SLURM_JOB_ID: '77', SHLVL: '1' },
      timeout: 20_000,
    });
    const parsed = parseResultLine(stdout);
    assert.ok(parsed.ok, `no valid result line in: ${stdout}`);
    assert.equal(parsed.line.test, test);
    assert.equal(parsed.line.slurmJobId, '77');
    return Object.fromEntries(parsed.line.results.map((r) => [r.device, r]));
  }

  it('passes a healthy tray in every test', async () => {
    for (const test of ['gpu_stress', 'memory', 'nvlink_allreduce'] as const) {
      const results = await runScript(test, ['ct01']);
      assert.deepEqual(results['ct01'], { device: 'ct01', verdict: 'pass', failures: [] }, test);
    }
  });

  it('a memory fault fails the memory test only, naming the device and its reason', async () => {
    await sim.injectFault('ct02', { part: 'memory', memory: 'GPU_1_DRAM_0', reason: 'uncorrectable ECC' });
    try {
      assert.deepEqual((await runScript('memory', ['ct02']))['ct02']?.failures, [
        'GPU_1_DRAM_0: Critical (uncorrectable ECC)',
      ]);
      assert.equal((await runScript('gpu_stress', ['ct02']))['ct02']?.verdict, 'pass');
    } finally {
      await sim.clearFaults('ct02');
    }
  });

  it('the rack NVLink test fails exactly the tray with the link fault', async () => {
    await sim.injectFault('ct02', { part: 'nvlink', gpu: 1, port: 5, reason: 'CRC errors' });
    try {
      const results = await runScript('nvlink_allreduce', ['ct01', 'ct02']);
      assert.equal(results['ct01']?.verdict, 'pass');
      assert.deepEqual(results['ct02'], {
        device: 'ct02',
        verdict: 'fail',
        failures: ['GPU_1/NVLink_5: Critical (CRC errors)'],
      });
    } finally {
      await sim.clearFaults('ct02');
    }
  });

  it('a Warning fault fails too (the simulator passes only a clean tray)', async () => {
    await sim.injectFault('ct01', { part: 'gpu', gpu: 0, health: 'Warning', reason: 'thermal throttling' });
    try {
      assert.deepEqual((await runScript('gpu_stress', ['ct01']))['ct01']?.failures, [
        'GPU_0: Warning (thermal throttling)',
      ]);
    } finally {
      await sim.clearFaults('ct01');
    }
  });

  it('a tray whose host is off fails every test: the test cannot have run', async () => {
    for (const test of ['gpu_stress', 'memory', 'nvlink_allreduce'] as const) {
      const r = (await runScript(test, ['off01']))['off01'];
      assert.equal(r?.verdict, 'fail', test);
      assert.equal(r?.failures[0], 'host power is Off', test);
    }
  });

  it('exits non-zero, with no result line, when the simulator does not answer for the tray', async () => {
    await assert.rejects(runScript('gpu_stress', ['no-such-tray']), (err: { code?: number; stdout?: string }) => {
      assert.equal(err.code, 22, 'curl --fail on the 404');
      assert.doesNotMatch(err.stdout ?? '', /FLEET_BURNIN_RESULT/);
      return true;
    });
  });
});
