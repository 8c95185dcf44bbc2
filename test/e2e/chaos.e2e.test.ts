import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chaosProcesses, defaultChaosOptions, runChaos } from '../chaos/chaos.js';

// The CI variant of `pnpm chaos` (docs/chaos.md): 10 seeded kills over a campaign of one rack's compute trays and
// power sequences on another rack, NetBox and its agent included.
describe('chaos: kill -9 and restart of every process during a campaign and rack power sequences', () => {
  it(
    'loses no intent, flashes nothing twice, reports no false success or duplicate reset',
    { timeout: 480_000 },
    async (t) => {
      const report = await runChaos({
        ...defaultChaosOptions,
        kills: 10,
        // 15: a seed whose first ten kills reach all six processes.
        seed: Number(process.env['FLEET_CHAOS_SEED'] ?? 15),
        campaignRacks: 1,
        concurrency: 10,
        gapMs: [200, 2_000],
        faultShare: 0.15,
        settleS: 150,
        log: () => undefined,
      });
      const { offenders, ...counts } = report;
      t.diagnostic(JSON.stringify(counts));
      const detail = JSON.stringify(offenders);
      assert.equal(report.kills, 10);
      if (!process.env['FLEET_CHAOS_SEED'])
        assert.deepEqual(Object.keys(report.by_process).sort(), [...chaosProcesses].sort(), 'every process killed');
      assert.ok(
        report.intents >= 3 && report.campaign_devices === 18 && report.power_jobs >= 1,
        JSON.stringify(report),
      );
      assert.ok(report.evidence.flashes > 0 && report.evidence.resets > 0 && report.evidence.workflows > 0);
      assert.equal(report.terminal_jobs, report.jobs, detail);
      assert.equal(report.lost_intents, 0, detail);
      assert.equal(report.double_flashes, 0, detail);
      assert.equal(report.false_successes, 0, detail);
      assert.equal(report.duplicate_power_actions, 0, detail);
      assert.equal(report.projection_mismatches, 0, detail);
    },
  );
});
