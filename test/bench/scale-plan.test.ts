import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planFleet } from '../../tools/fleetgen/layout.js';
import {
  batchLowerBound,
  fleetSlice,
  parseStages,
  projectionLag,
  racksPerSiteFor,
} from '../../bench/lib/scale-plan.js';

describe('scale bench plan', () => {
  it('sizes sites in whole NVL72 racks of 35 devices, at least the count asked', () => {
    assert.equal(racksPerSiteFor(100_000, 10), 286);
    assert.equal(racksPerSiteFor(350, 10), 1);
    assert.equal(racksPerSiteFor(351, 10), 2);
    assert.throws(() => racksPerSiteFor(0, 10), /positive/);
  });

  it('grows a fleet in slices of one plan: every device once, with the address it has at full size', () => {
    const plan = planFleet({ sites: 3, racksPerSite: 4, rackTypes: ['gb200_nvl72'], firstAddress: '127.64.0.1' });
    const first = fleetSlice(plan, 0, 1);
    const rest = fleetSlice(plan, 1, 4);
    assert.equal(first.racks.length, 3);
    assert.equal(first.devices.length, 3 * 35);
    assert.equal(rest.racks.length, 9);
    assert.ok(first.devices.every((d) => d.rack === 'r001'));
    assert.ok(rest.devices.every((d) => d.rack !== 'r001'));
    const names = [...first.devices, ...rest.devices].map((d) => `${d.name} ${d.ip}`).sort();
    assert.deepEqual(names, plan.devices.map((d) => `${d.name} ${d.ip}`).sort());
    assert.deepEqual(first.sites, plan.sites);
  });

  it('reads stage sizes and refuses ones that do not grow', () => {
    assert.deepEqual(parseStages('10000, 50000,100000'), [10_000, 50_000, 100_000]);
    assert.throws(() => parseStages('50000,10000'), /growing/);
    assert.throws(() => parseStages('10k'), /positive integers/);
  });

  it('counts projection lag only for jobs that finished while enough others ran', () => {
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    // Four jobs start at 0; two end at 10 (three and four still running), the last two at 20 and 30.
    const jobs = [
      { startedAt: at(0), finishedAt: at(10), projectedAt: at(11) },
      { startedAt: at(0), finishedAt: at(10), projectedAt: at(13) },
      { startedAt: at(0), finishedAt: at(20), projectedAt: at(20) },
      { startedAt: at(0), finishedAt: at(30), projectedAt: at(40) },
    ];
    const lag = projectionLag(jobs, 4);
    assert.equal(lag.peakRunning, 4);
    assert.equal(lag.jobs, 2);
    assert.equal(lag.p50, 3);
    assert.equal(lag.p95, 3);
    // With no floor every job counts, the 10 s one included.
    assert.equal(projectionLag(jobs, 0).p95, 10);
    assert.equal(projectionLag(jobs, 5).jobs, 0);
  });

  it('puts a batch floor at the busiest site: its devices in waves of the satellite slots', () => {
    assert.equal(batchLowerBound([1000, 1000], 200, 40), 200);
    assert.equal(batchLowerBound([201, 10], 200, 40), 80);
  });
});
