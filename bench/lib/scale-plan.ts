import { devicesPerRack, type Fleet } from '../../tools/fleetgen/layout.js';
import { percentile } from './page-load.js';

/** Racks per site so that `sites` sites of whole NVL72 racks hold at least `devices` devices. */
export function racksPerSiteFor(devices: number, sites: number): number {
  if (!(devices > 0) || !(sites > 0)) throw new Error(`devices and sites must be positive, not ${devices}, ${sites}`);
  return Math.ceil(devices / (devicesPerRack * sites));
}

/** The rack number in a fleetgen rack name (r001 -> 1). */
function rackNumber(name: string): number {
  const n = Number(/^r(\d+)$/.exec(name)?.[1]);
  if (!Number.isInteger(n)) throw new Error(`not a fleetgen rack name: ${name}`);
  return n;
}

/**
 * The part of `fleet` a stage adds: every site's racks numbered after `fromRack` up to `toRack`, with their devices.
 * Stages cut from one plan of the largest size, so a device keeps its address, MAC and serial as the fleet grows.
 */
export function fleetSlice(fleet: Fleet, fromRack: number, toRack: number): Fleet {
  const inSlice = (rack: string) => {
    const n = rackNumber(rack);
    return n > fromRack && n <= toRack;
  };
  return {
    sites: fleet.sites,
    racks: fleet.racks.filter((r) => inSlice(r.name)),
    devices: fleet.devices.filter((d) => inSlice(d.rack)),
  };
}

/** Stage sizes from `--devices 10000,50000,100000`: positive, strictly growing. */
export function parseStages(text: string): number[] {
  const sizes = text.split(',').map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error(`--devices: positive integers, not ${text}`);
  if (sizes.some((n, i) => i > 0 && n <= sizes[i - 1]!)) throw new Error(`--devices: growing sizes, not ${text}`);
  return sizes;
}

export interface ProjectedJob {
  startedAt: Date;
  finishedAt: Date;
  /** When the workflow agent wrote the job's terminal state (its last write). */
  projectedAt: Date;
}

/**
 * The workflow agent's projection lag (s) for the jobs that finished while at least `minRunning` jobs ran (those
 * started and not yet finished at that instant): the time from the workflow's close in Temporal to the agent's write
 * of the job's end. p50/p95 and how many jobs that is; the most that ran at once.
 */
export function projectionLag(
  jobs: readonly ProjectedJob[],
  minRunning: number,
): { p50: number; p95: number; jobs: number; peakRunning: number } {
  // Running count at each finish: starts at or before it less finishes before it (a sweep over both, sorted).
  const starts = jobs.map((j) => j.startedAt.getTime()).sort((a, b) => a - b);
  const finishes = jobs.map((j) => j.finishedAt.getTime()).sort((a, b) => a - b);
  const runningAt = (t: number) => upperBound(starts, t) - lowerBound(finishes, t);
  let peakRunning = 0;
  for (const t of starts) peakRunning = Math.max(peakRunning, runningAt(t));
  const lags = jobs
    .filter((j) => runningAt(j.finishedAt.getTime()) >= minRunning)
    .map((j) => (j.projectedAt.getTime() - j.finishedAt.getTime()) / 1000);
  if (lags.length === 0) return { p50: NaN, p95: NaN, jobs: 0, peakRunning };
  return { p50: percentile(lags, 0.5), p95: percentile(lags, 0.95), jobs: lags.length, peakRunning };
}

/** Index of the first element > t (sorted ascending). */
function upperBound(sorted: number[], t: number): number {
  let [lo, hi] = [0, sorted.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first element >= t (sorted ascending). */
function lowerBound(sorted: number[], t: number): number {
  let [lo, hi] = [0, sorted.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The floor of a batch of `perSite` devices at each site, each holding one of `slots` activity slots of its site's
 * satellite for `perDeviceS`: sites run side by side, a site's devices in waves of `slots`.
 */
export function batchLowerBound(perSite: readonly number[], slots: number, perDeviceS: number): number {
  return Math.max(...perSite.map((n) => Math.ceil(n / slots))) * perDeviceS;
}
