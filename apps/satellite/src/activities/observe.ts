import { AsyncResource } from 'node:async_hooks';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import {
  sameHealth,
  type BmcTarget,
  type HealthChange,
  type HealthReading,
  type ObserverActivities,
  type ObserveSiteInput,
  type ObserveSiteResult,
} from '@fleet/domain';
import type { NodeDriver } from '@fleet/drivers';
import type { RedfishClient } from '@fleet/redfish';
import { Debouncer } from '../observe/debounce.js';
import type { EventListener } from '../observe/event-listener.js';
import type { EventSubscriptions } from '../observe/event-subscriptions.js';
import { deliveryBatch, type HubObservations } from '../observe/hub-observations.js';
import { attemptLog, openDriver, pause, redfishClientFor, type DeviceActivityDeps } from './context.js';

/** Redfish push events (docs/day2.md, "Event subscriptions"): absent, the observer only polls. */
export interface ObserverEvents {
  listener: EventListener;
  subscriptions: EventSubscriptions;
  /** Events for one device within this long give one read. */
  debounceMs: number;
}

export interface ObserverActivityDeps extends DeviceActivityDeps {
  /** Absent when the satellite has no hub access configured: observeSite then refuses (FAILED_PRECONDITION). */
  hub?: HubObservations;
  events?: ObserverEvents;
  onCycle?: (c: { seconds: number; devices: number; changes: number }) => void;
  onDelivery?: (seconds: number, readings: number) => void;
}

/** What the observer last delivered of a device, and how many cycles in a row it has delivered it. */
interface Delivered {
  reading: HealthReading;
  deliveries: number;
  /** Delivered from an event's read, and no cycle has read the device since. */
  byEvent: boolean;
}

/** The readings that events' reads queued (the others are cycles'). */
const fromEvents = new WeakSet<HealthChange>();

/**
 * Per site, what this process delivered and what the hub has not taken yet: kept across the workflow's runs, so a new
 * hourly run goes on delivering changes only. A restarted satellite starts empty and delivers every reading once.
 */
const sites = new Map<string, { delivered: Map<string, Delivered>; pending: Map<string, HealthChange> }>();
function siteState(siteId: string) {
  let state = sites.get(siteId);
  if (!state) sites.set(siteId, (state = { delivered: new Map(), pending: new Map() }));
  return state;
}

/**
 * The site's health observer (docs/day2.md): one long activity that reads every device each interval and delivers to
 * the hub only what changed (a faulty reading also at each of its first `confirmations` cycles, so that rules can
 * count observations). Nothing per sample reaches Temporal: the activity heartbeats its counters and returns after
 * `runForS`. A new attempt (a restarted satellite) starts with nothing delivered, so its first cycle delivers every
 * reading once and the hub, which stores state, changes only what differs. Readings the hub did not take are kept and
 * delivered with the next cycle's. With `events`, devices whose BMC pushes events are subscribed to as they are read,
 * and an event reads its device at once (debounced); the cycles go on as the fallback.
 */
export function createObserverActivities(deps: ObserverActivityDeps): ObserverActivities {
  return {
    async observeSite(input: ObserveSiteInput) {
      const hub = deps.hub;
      if (!hub)
        throw ApplicationFailure.create({
          type: 'FAILED_PRECONDITION',
          message: `site ${input.siteId}: the satellite has no hub access (config hub.url): nothing to observe for`,
          nonRetryable: true,
        });
      const log = attemptLog(deps, { siteId: input.siteId });
      const drivers = new DriverCache(deps);
      try {
        return await observe(input, hub, drivers, log, deps);
      } finally {
        await drivers.retain();
      }
    },
  };
}

async function observe(
  input: ObserveSiteInput,
  hub: HubObservations,
  drivers: DriverCache,
  log: ReturnType<typeof attemptLog>,
  deps: ObserverActivityDeps,
): Promise<ObserveSiteResult> {
  const ctx = Context.current();
  const signal = ctx.cancellationSignal;
  const { delivered, pending } = siteState(input.siteId);
  const endAt = Date.now() + input.runForS * 1000;
  // Heartbeat details are these counters; the result leaves out eventReads (reads that events asked for).
  const totals = { cycles: 0, delivered: 0, slowestCycleS: 0, eventReads: 0 };
  const beat = (extra: Record<string, unknown> = {}) => ctx.heartbeat({ ...totals, ...extra });
  // When each device's newest queued reading was started: a slower, older read (a cycle's, overtaken by an event's)
  // must not replace it.
  const newest = new Map<string, number>();
  // Readings queued since the last cycle ended, by the cycle's reads and by events' alike: the cycle's changes.
  let queued = 0;
  const take = (deviceId: string, reading: HealthReading, startedAt: number, onCycle: boolean) => {
    if (startedAt < (newest.get(deviceId) ?? 0)) return;
    newest.set(deviceId, startedAt);
    const last = delivered.get(deviceId);
    const same = last !== undefined && sameHealth(last.reading, reading);
    if (onCycle && same && last.byEvent) {
      // The first cycle to read a change an event's read delivered sees the same observation: rules count one a
      // cycle, with or without events, so an event shows a fault at once but does not confirm it sooner.
      delivered.set(deviceId, { ...last, byEvent: false });
      pending.delete(deviceId);
      return;
    }
    // Confirmations count cycles: an event's read delivers changes only.
    const confirming = onCycle && same && reading.faults.length > 0 && last.deliveries < input.confirmations;
    if (same && !confirming) {
      // Newer than anything queued, and what the hub has already.
      pending.delete(deviceId);
      return;
    }
    const change = { deviceId, observedAt: new Date().toISOString(), reading };
    if (!onCycle) fromEvents.add(change);
    pending.set(deviceId, change);
    queued++;
  };
  // Cycles and event reads deliver one at a time, so a batch is never sent twice.
  let delivering: Promise<unknown> = Promise.resolve();
  const deliver = async () => {
    const run = delivering.then(() => deliverPending(input.siteId, hub, pending, delivered, signal, deps, log));
    delivering = run.catch(() => undefined);
    totals.delivered += await run;
  };
  let targetsById = new Map<string, BmcTarget>();
  const eventReads = deps.events && new EventReads(drivers, log, signal, take, deliver, () => totals.eventReads++);
  const detach = deps.events && eventReads && attachEvents(deps.events, eventReads, (id) => targetsById.get(id));

  try {
    do {
      const started = Date.now();
      const targets = await hub.targets(input.siteId, signal);
      targetsById = new Map(targets.map((t) => [t.deviceId, t]));
      let read = 0;
      await forEachLimit(targets, input.concurrency, signal, async (target) => {
        const readAt = Date.now();
        const reading = await readOne(drivers, target, log);
        if (++read % 500 === 0) beat({ read });
        if (!reading) return;
        take(target.deviceId, reading, readAt, true);
        if (deps.events && reading.reachable)
          await deps.events.subscriptions.ensure(target, () => redfishClient(deps, target));
      });
      const changes = queued;
      queued = 0;
      await deliver();
      // Devices that left the site are forgotten: if they come back they are delivered afresh.
      const current = new Set(targets.map((t) => t.deviceId));
      for (const id of delivered.keys()) if (!current.has(id)) delivered.delete(id);
      for (const id of pending.keys()) if (!current.has(id)) pending.delete(id);
      for (const id of newest.keys()) if (!current.has(id)) newest.delete(id);
      deps.events?.subscriptions.retain(current);
      await drivers.retain(current);
      const seconds = (Date.now() - started) / 1000;
      totals.cycles++;
      totals.slowestCycleS = Math.max(totals.slowestCycleS, seconds);
      deps.onCycle?.({ seconds, devices: targets.length, changes });
      if (seconds > input.intervalS)
        log.warn({ seconds, devices: targets.length, intervalS: input.intervalS }, 'observation cycle overran');
      beat({ lastCycleS: seconds, devices: targets.length });
      const wait = started + input.intervalS * 1000 - Date.now();
      // The run ends when its next cycle would start, so the next run keeps the pace.
      if (wait > 0) await pause(wait, totals);
    } while (Date.now() < endAt);
  } finally {
    detach?.();
    await eventReads?.stop();
  }
  return { cycles: totals.cycles, delivered: totals.delivered, slowestCycleS: totals.slowestCycleS };
}

/**
 * Hands the listener's events to `reads`, debounced per device, while the run lasts; returns the detach. The timers
 * run in the activity's context (bound here), as the listener calls from its own request handlers.
 */
function attachEvents(
  events: ObserverEvents,
  reads: EventReads,
  targetOf: (deviceId: string) => BmcTarget | undefined,
): () => void {
  const debouncer = new Debouncer(
    events.debounceMs,
    AsyncResource.bind((deviceId: string) => {
      const target = targetOf(deviceId);
      if (target) reads.read(target);
    }),
  );
  const detach = events.listener.attach((context) => {
    const deviceId = events.subscriptions.deviceOf(context);
    if (deviceId === undefined || !targetOf(deviceId)) return false;
    debouncer.hit(deviceId);
    return true;
  });
  return () => {
    detach();
    debouncer.clear();
  };
}

/**
 * Reads of one device that an event asked for, each delivered at once if it changed. One read per device at a time:
 * an event during a read gives one more read after it, so the change it announces is not missed.
 */
class EventReads {
  private readonly reading = new Set<string>();
  private readonly again = new Set<string>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly drivers: DriverCache,
    private readonly log: ReturnType<typeof attemptLog>,
    private readonly signal: AbortSignal,
    private readonly take: (deviceId: string, reading: HealthReading, startedAt: number, onCycle: boolean) => void,
    private readonly deliver: () => Promise<void>,
    private readonly counted: () => void,
  ) {}

  read(target: BmcTarget): void {
    if (this.signal.aborted) return;
    if (this.reading.has(target.deviceId)) {
      this.again.add(target.deviceId);
      return;
    }
    const p = this.run(target).finally(() => this.running.delete(p));
    this.running.add(p);
  }

  /** Waits for the reads under way (the run is ending, its drivers about to close). */
  async stop(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }

  private async run(target: BmcTarget): Promise<void> {
    const id = target.deviceId;
    this.reading.add(id);
    try {
      do {
        this.again.delete(id);
        const startedAt = Date.now();
        const reading = await readOne(this.drivers, target, this.log);
        this.counted();
        if (reading) this.take(id, reading, startedAt, false);
      } while (this.again.has(id) && !this.signal.aborted);
      await this.deliver();
    } catch (err) {
      if (!this.signal.aborted) this.log.warn({ deviceId: id, err: (err as Error).message }, 'event read failed');
    } finally {
      this.reading.delete(id);
      this.again.delete(id);
    }
  }
}

/** A Redfish client of the device's BMC for its event subscription, with the credentials its reference resolves to. */
async function redfishClient(deps: DeviceActivityDeps, target: BmcTarget): Promise<RedfishClient> {
  return redfishClientFor(deps, target, await deps.secrets.resolve(target.credentialRef));
}

/**
 * One driver per device for the life of the activity: it keeps the URIs it discovered, so a healthy tray costs two
 * reads a cycle instead of five. A driver whose target changed, or whose credentials were refused (they may have been
 * rotated since it resolved them), is replaced.
 */
class DriverCache {
  private readonly drivers = new Map<string, { key: string; driver: NodeDriver }>();
  constructor(private readonly deps: DeviceActivityDeps) {}

  async get(target: BmcTarget): Promise<NodeDriver> {
    const key = `${target.nodeType} ${target.bmcUrl} ${target.credentialRef} ${target.redfishSystemId ?? ''}`;
    const cached = this.drivers.get(target.deviceId);
    if (cached?.key === key) return cached.driver;
    if (cached) await this.drop(target.deviceId);
    const driver = await openDriver(this.deps, target);
    this.drivers.set(target.deviceId, { key, driver });
    return driver;
  }

  async drop(deviceId: string): Promise<void> {
    const cached = this.drivers.get(deviceId);
    this.drivers.delete(deviceId);
    await cached?.driver.close().catch(() => undefined);
  }

  /** Closes the drivers of devices no longer in `current` (all of them without it). */
  async retain(current?: Set<string>): Promise<void> {
    for (const id of [...this.drivers.keys()]) if (!current?.has(id)) await this.drop(id);
  }
}

/** One device's reading; undefined when the read itself failed in a way that says nothing about the device. */
async function readOne(
  drivers: DriverCache,
  target: BmcTarget,
  log: ReturnType<typeof attemptLog>,
): Promise<HealthReading | undefined> {
  let driver;
  try {
    driver = await drivers.get(target);
  } catch (err) {
    // An unknown node type or a credential reference the secret store lacks: the site's problem, not the device's.
    log.warn({ deviceId: target.deviceId, err: (err as Error).message }, 'device not observable');
    return undefined;
  }
  try {
    const reading = await driver.readHealth();
    if (reading.credentialsOk === false) await drivers.drop(target.deviceId);
    return reading;
  } catch (err) {
    if (Context.current().cancellationSignal.aborted) throw err;
    await drivers.drop(target.deviceId);
    log.warn({ deviceId: target.deviceId, bmc: target.bmcUrl, err: (err as Error).message }, 'health read failed');
    return undefined;
  }
}

async function deliverPending(
  siteId: string,
  hub: HubObservations,
  pending: Map<string, HealthChange>,
  delivered: Map<string, Delivered>,
  signal: AbortSignal,
  deps: ObserverActivityDeps,
  log: ReturnType<typeof attemptLog>,
): Promise<number> {
  const all = [...pending.values()];
  let count = 0;
  for (let i = 0; i < all.length; i += deliveryBatch) {
    const batch = all.slice(i, i + deliveryBatch);
    const started = Date.now();
    try {
      const { unknown } = await hub.deliver(siteId, batch, signal);
      if (unknown.length)
        log.warn({ unknown: unknown.slice(0, 20), count: unknown.length }, 'hub knows no such devices');
    } catch (err) {
      if (signal.aborted) throw err;
      // Kept: the next cycle delivers them with its own.
      log.warn({ err: (err as Error).message, readings: all.length - i }, 'delivery to the hub failed; will retry');
      return count;
    }
    deps.onDelivery?.((Date.now() - started) / 1000, batch.length);
    for (const c of batch) {
      const last = delivered.get(c.deviceId);
      const same = last !== undefined && sameHealth(last.reading, c.reading);
      delivered.set(c.deviceId, {
        reading: c.reading,
        deliveries: same ? last.deliveries + 1 : 1,
        byEvent: fromEvents.has(c),
      });
      // A newer reading queued meanwhile (an event's) stays for the next delivery.
      if (pending.get(c.deviceId) === c) pending.delete(c.deviceId);
      count++;
    }
  }
  return count;
}

/** Runs `fn` over `items`, `limit` at a time; stops starting new ones once `signal` aborts, and rethrows it. */
async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      signal.throwIfAborted();
      await fn(items[next++]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  signal.throwIfAborted();
}
