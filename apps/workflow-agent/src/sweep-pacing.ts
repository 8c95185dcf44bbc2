/** The longest pause after a sweep: the stall alert (FleetProjectionStalled) counts the time between sweep steps. */
export const maxSweepPauseMs = 60_000;

/**
 * How long the sweep loop waits before the next sweep. Sweeps start one period apart, or `took / maxDuty` apart when
 * that is longer (a 20 s sweep at 0.5: 40 s), so they take at most `maxDuty` of the time; the pause after a sweep is at
 * most a minute. At 10,000 running jobs a sweep is tens of visibility queries, and back to back they were a constant
 * load on Temporal and Postgres (docs/scale.md). Times in milliseconds from a monotonic clock; `now` is when the wait
 * begins.
 */
export function sweepDelayMs(
  pacing: { periodMs: number; maxDuty: number },
  sweep: { startedAt: number; endedAt: number },
  now: number,
): number {
  const took = sweep.endedAt - sweep.startedAt;
  const byPeriod = pacing.periodMs - (now - sweep.startedAt);
  const byDuty = Math.min(took * (1 / pacing.maxDuty - 1), maxSweepPauseMs) - (now - sweep.endedAt);
  return Math.min(Math.max(0, byPeriod, byDuty), Math.max(pacing.periodMs, maxSweepPauseMs));
}

/**
 * Whether the sweep starting now also reads the campaigns' queued devices: every `every`-th sweep, and any sweep
 * after which the next would come too late for the promise that one reads them at least every `atLeastEveryMs`
 * (paused sweeps are fewer in the same time, so counting alone could break it). `cycleMs`, the time since the last
 * sweep started, stands for how long until the next one.
 */
export function readsQueuedDevices(
  sweep: { completed: number; every: number },
  sinceLastMs: number,
  cycleMs: number,
  atLeastEveryMs: number,
): boolean {
  return sweep.completed % sweep.every === 0 || sinceLastMs + cycleMs > atLeastEveryMs;
}
