/**
 * Campaign scheduling, pure and dependency-free so the campaign workflow can run it:
 * waves, concurrency caps (site, rack, power domain, switch share of a rack), duration
 * estimates and maintenance windows.
 */
import type { CampaignWave, MaintenanceWindowSpec, PlannedDevice } from './firmware.js';
import { kindOfNodeType } from './hardware.js';

export interface ConcurrencyCaps {
  maxConcurrentPerSite: number;
  maxConcurrentPerRack: number;
  maxConcurrentPerPowerDomain: number;
  /** At most this share (0..1] of a rack's switch trays at once; at least one may always run. */
  maxSwitchShareOfRack?: number;
}

type Schedulable = Pick<PlannedDevice, 'deviceId' | 'rackId' | 'powerDomain' | 'nodeType'>;

const isSwitch = (d: Schedulable) => kindOfNodeType(d.nodeType) === 'switch';
const rackKey = (d: Schedulable) => d.rackId ?? `device:${d.deviceId}`;

/** The canary first, then waves of `waveSize`, racks kept together so caps spread the load. */
export function buildWaves(devices: Schedulable[], canarySize: number, waveSize: number): CampaignWave[] {
  const ordered = [...devices].sort(
    (a, b) => rackKey(a).localeCompare(rackKey(b)) || a.deviceId.localeCompare(b.deviceId),
  );
  const waves: CampaignWave[] = [];
  const canary = ordered.slice(0, Math.min(canarySize, ordered.length));
  if (canary.length) waves.push({ index: 0, kind: 'canary', deviceIds: canary.map((d) => d.deviceId) });
  for (let i = canary.length; i < ordered.length; i += waveSize) {
    waves.push({ index: waves.length, kind: 'wave', deviceIds: ordered.slice(i, i + waveSize).map((d) => d.deviceId) });
  }
  return waves;
}

/**
 * Which pending devices may start now, in order, without breaking a cap given what is
 * already running. Greedy and order-preserving: a device blocked by its rack does not
 * block a device of another rack behind it.
 */
export function startable<T extends Schedulable>(
  pending: T[],
  running: Schedulable[],
  caps: ConcurrencyCaps,
  switchesPerRack: Map<string, number>,
): T[] {
  const perRack = new Map<string, number>();
  const perDomain = new Map<string, number>();
  const switchesRunning = new Map<string, number>();
  const add = (d: Schedulable) => {
    perRack.set(rackKey(d), (perRack.get(rackKey(d)) ?? 0) + 1);
    perDomain.set(d.powerDomain, (perDomain.get(d.powerDomain) ?? 0) + 1);
    if (isSwitch(d)) switchesRunning.set(rackKey(d), (switchesRunning.get(rackKey(d)) ?? 0) + 1);
  };
  running.forEach(add);
  let total = running.length;
  const out: T[] = [];
  for (const d of pending) {
    if (total >= caps.maxConcurrentPerSite) break;
    if ((perRack.get(rackKey(d)) ?? 0) >= caps.maxConcurrentPerRack) continue;
    if ((perDomain.get(d.powerDomain) ?? 0) >= caps.maxConcurrentPerPowerDomain) continue;
    if (isSwitch(d) && caps.maxSwitchShareOfRack !== undefined) {
      const limit = Math.max(1, Math.floor((switchesPerRack.get(rackKey(d)) ?? 1) * caps.maxSwitchShareOfRack));
      if ((switchesRunning.get(rackKey(d)) ?? 0) >= limit) continue;
    }
    out.push(d);
    add(d);
    total++;
  }
  return out;
}

/** Switch trays per rack, for the switch-share cap. */
export function switchCounts(devices: Schedulable[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const d of devices) if (isSwitch(d)) out.set(rackKey(d), (out.get(rackKey(d)) ?? 0) + 1);
  return out;
}

/**
 * Makespan of running the waves in order under the caps, each device taking
 * `durationS(device)`: the same greedy schedule the campaign workflow runs, simulated.
 */
export function simulateMakespan<T extends Schedulable>(
  devices: T[],
  waves: CampaignWave[],
  caps: ConcurrencyCaps,
  durationS: (d: T) => number,
): number {
  const byId = new Map(devices.map((d) => [d.deviceId, d]));
  const switches = switchCounts(devices);
  let clock = 0;
  for (const wave of waves) {
    let pending = wave.deviceIds.map((id) => byId.get(id)!).filter(Boolean);
    const running: { d: T; endsAt: number }[] = [];
    while (pending.length || running.length) {
      const now = startable(
        pending,
        running.map((r) => r.d),
        caps,
        switches,
      );
      for (const d of now) running.push({ d, endsAt: clock + durationS(d) });
      const started = new Set(now.map((d) => d.deviceId));
      pending = pending.filter((d) => !started.has(d.deviceId));
      if (!running.length) break; // a cap that admits nothing: cannot happen with caps ≥ 1
      running.sort((a, b) => a.endsAt - b.endsAt);
      clock = running[0]!.endsAt;
      while (running.length && running[0]!.endsAt <= clock) running.shift();
    }
  }
  return clock;
}

/**
 * A floor no schedule can beat: per cap group, ceil(devices / cap) rounds of the longest
 * device time, and the canary runs before everything else.
 */
export function makespanLowerBound<T extends Schedulable>(
  devices: T[],
  caps: ConcurrencyCaps,
  durationS: (d: T) => number,
  canary: T[] = [],
): number {
  const rest = devices.filter((d) => !canary.includes(d));
  const longest = (ds: T[]) => ds.reduce((m, d) => Math.max(m, durationS(d)), 0);
  const rounds = (groups: Map<string, T[]>, cap: number) =>
    Math.max(0, ...[...groups.values()].map((g) => Math.ceil(g.length / cap) * longest(g)));
  const group = (key: (d: T) => string) => {
    const m = new Map<string, T[]>();
    for (const d of rest) m.set(key(d), [...(m.get(key(d)) ?? []), d]);
    return m;
  };
  const bound = Math.max(
    rounds(new Map([['site', rest]]), caps.maxConcurrentPerSite),
    rounds(group(rackKey), caps.maxConcurrentPerRack),
    rounds(
      group((d) => d.powerDomain),
      caps.maxConcurrentPerPowerDomain,
    ),
  );
  return longest(canary) + bound;
}

const WEEK_MIN = 7 * 24 * 60;

/**
 * Whether `nowMs` is inside one of the site's weekly UTC windows and, if not, when the
 * next one opens. No windows means always open.
 */
export function maintenanceWindowAt(
  nowMs: number,
  windows: MaintenanceWindowSpec[],
): { open: true } | { open: false; opensAtMs: number } {
  if (windows.length === 0) return { open: true };
  const now = new Date(nowMs);
  const minuteOfWeek = now.getUTCDay() * 1440 + now.getUTCHours() * 60 + now.getUTCMinutes();
  let soonest = Infinity;
  for (const w of windows) {
    for (const day of w.weekdays) {
      const start = day * 1440 + w.startMinute;
      // A window that started last week may still be open (Saturday night into Sunday).
      for (const s of [start - WEEK_MIN, start]) {
        if (minuteOfWeek >= s && minuteOfWeek < s + w.durationMinutes) return { open: true };
      }
      const until = (start - minuteOfWeek + WEEK_MIN) % WEEK_MIN;
      soonest = Math.min(soonest, until === 0 ? WEEK_MIN : until);
    }
  }
  const startOfMinute = nowMs - (nowMs % 60_000);
  return { open: false, opensAtMs: startOfMinute + soonest * 60_000 };
}
