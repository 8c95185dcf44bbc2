import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { maxSweepPauseMs, readsQueuedDevices, sweepDelayMs } from '../src/sweep-pacing.js';

describe('sweep pacing', () => {
  const pacing = { periodMs: 5000, maxDuty: 0.5 };

  it('a short sweep: the next starts one period after it started', () => {
    assert.equal(sweepDelayMs(pacing, { startedAt: 0, endedAt: 1200 }, 1200), 3800);
    assert.equal(sweepDelayMs(pacing, { startedAt: 0, endedAt: 1200 }, 6000), 0, 'already late: at once');
  });

  it(`a sweep that took more than its duty of the period: the next starts took / duty after it started, at most a \
minute after it ended`, () => {
    assert.equal(sweepDelayMs(pacing, { startedAt: 0, endedAt: 3000 }, 3000), 3000, 'within the period: 6 s apart');
    assert.equal(sweepDelayMs(pacing, { startedAt: 0, endedAt: 18_000 }, 18_000), 18_000);
    assert.equal(sweepDelayMs({ ...pacing, maxDuty: 0.25 }, { startedAt: 0, endedAt: 8000 }, 8000), 24_000);
    assert.equal(sweepDelayMs(pacing, { startedAt: 0, endedAt: 18_000 }, 20_000), 16_000, 'counted from its end');
    assert.equal(sweepDelayMs(pacing, { startedAt: 0, endedAt: 200_000 }, 200_000), maxSweepPauseMs);
    // Duty 1: back to back, as before the pacing.
    assert.equal(sweepDelayMs({ ...pacing, maxDuty: 1 }, { startedAt: 0, endedAt: 18_000 }, 18_000), 0);
  });

  it('never waits longer than a period or a minute, whatever the times it is given', () => {
    assert.equal(sweepDelayMs(pacing, { startedAt: 1e6, endedAt: 1e6 + 10_000 }, 0), maxSweepPauseMs);
    assert.equal(sweepDelayMs({ periodMs: 120_000, maxDuty: 0.5 }, { startedAt: 5e6, endedAt: 5e6 }, 0), 120_000);
  });

  it(`queued campaign devices are read by every n-th sweep, and by any sweep after which the next would come more \
than ten minutes after the last that read them`, () => {
    const tenMinutes = 600_000;
    assert.equal(readsQueuedDevices({ completed: 10, every: 10 }, 50_000, 5000, tenMinutes), true);
    assert.equal(readsQueuedDevices({ completed: 7, every: 10 }, 35_000, 5000, tenMinutes), false);
    // Paused sweeps: a minute and a half apart, the 7th after the last reading is too late for the 8th.
    assert.equal(readsQueuedDevices({ completed: 7, every: 10 }, 540_000, 90_000, tenMinutes), true);
    assert.equal(readsQueuedDevices({ completed: 7, every: 10 }, 500_000, 90_000, tenMinutes), false);
  });
});
