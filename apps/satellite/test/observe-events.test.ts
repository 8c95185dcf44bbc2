import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { HealthChange, ObserveSiteInput } from '@fleet/domain';
import { startAdminServer } from '@fleet/simulators';
import { createObserverActivities } from '../src/activities/observe.js';
import { EventListener } from '../src/observe/event-listener.js';
import { EventSubscriptions } from '../src/observe/event-subscriptions.js';
import type { HubObservations } from '../src/observe/hub-observations.js';
import { mockEnv, secrets, sleep, startBench, type Bench } from './helpers/devices.js';
import { openTestJournal } from './helpers/journal.js';

const log = pino({ level: 'silent' });
const siteId = 'events-site';

/** Waits for `check` to return something, polling every 50 ms, failing after `ms`. */
async function until<T>(what: string, check: () => T | undefined, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const got = check();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * One satellite process's observer with events on: its own token, listener and subscriptions (a restart is a second
 * one), observing ct1 (EventService), ct2 (none) and ct3 (full) through a hub stand-in that records deliveries.
 */
async function startObserver(bench: Bench, intervalS: number, confirmations = 1) {
  const token = `token-${Math.random()}`;
  const listener = await EventListener.start({ host: '127.0.0.1', port: 0, token, maxBodyBytes: 65_536, log });
  const subscriptions = new EventSubscriptions({
    destination: `http://127.0.0.1:${listener.port}/events`,
    token,
    siteId,
    recheckMs: 600_000,
    log,
  });
  const delivered: { at: number; change: HealthChange }[] = [];
  const hub = {
    targets: async () => ['ct1', 'ct2', 'ct3'].map((id) => bench.target(id)),
    deliver: async (_site: string, changes: HealthChange[]) => {
      for (const change of changes) delivered.push({ at: Date.now(), change });
      return { unknown: [] };
    },
  } as unknown as HubObservations;
  const activities = createObserverActivities({
    secrets,
    log,
    pollIntervalMs: 20,
    journal: await openTestJournal(),
    redfish: { connectTimeoutMs: 500, requestTimeoutMs: 2_000 },
    hub,
    events: { listener, subscriptions, debounceMs: 100 },
  });
  const env = mockEnv();
  const input: ObserveSiteInput = { siteId, intervalS, runForS: 3600, concurrency: 4, confirmations };
  const running = env.run(activities.observeSite, input).catch(() => undefined);
  const faultsOf = (deviceId: string, since: number) =>
    delivered.find((d) => d.at >= since && d.change.deviceId === deviceId && d.change.reading.faults.length > 0);
  return {
    subscriptions,
    delivered,
    faultsOf,
    stop: async () => {
      env.cancel();
      await running;
      await listener.close();
    },
  };
}

describe('observer with Redfish event subscriptions (simulator)', () => {
  let bench: Bench;
  let admin: { port: number; close(): Promise<void> };
  before(async () => {
    bench = await startBench({
      ct1: { nodeType: 'compute_gb200_nvidia', powerState: 'On' },
      ct2: { nodeType: 'compute_gb200_nvidia', powerState: 'On', quirks: { noEventService: true } },
      ct3: { nodeType: 'compute_gb200_nvidia', powerState: 'On' },
    });
    // ct3's EventService is full (20, its limit) with someone else's subscriptions: it refuses ours.
    for (let i = 0; i < 20; i++)
      bench.sim
        .bmc('ct3')
        .events()
        .subscribe({ Destination: `http://other.example/${i}`, Protocol: 'Redfish' });
    admin = await startAdminServer(bench.sim, ['ct1', 'ct2'], '127.0.0.1', 0);
  });
  after(async () => {
    await admin.close();
    await bench.close();
  });
  const inject = async (id: string, method: 'POST' | 'DELETE') => {
    const res = await fetch(`http://127.0.0.1:${admin.port}/bmcs/${id}/health/faults`, {
      method,
      ...(method === 'POST'
        ? {
            body: JSON.stringify({ part: 'gpu', gpu: 2, reason: 'XID 79' }),
            headers: { 'content-type': 'application/json' },
          }
        : {}),
    });
    assert.ok(res.ok, `${method} fault on ${id}: ${res.status}`);
  };
  const subscriptionIds = (id: string) => bench.sim.bmc(id).subscribers?.ids ?? [];

  it('a fault is delivered within one event, not one 60 s interval; a BMC without events is polled', async () => {
    const obs = await startObserver(bench, 60);
    try {
      // The first cycle delivers both readings and subscribes to ct1 only.
      // The first cycle delivers every reading and subscribes to ct1 only.
      await until('first cycle', () => (obs.delivered.length >= 3 ? true : undefined));
      await until('ct1 subscribed', () => (obs.subscriptions.isSubscribed('dev-ct1') ? true : undefined));
      assert.equal(obs.subscriptions.isSubscribed('dev-ct2'), false);
      assert.equal(obs.subscriptions.isSubscribed('dev-ct3'), false, 'refused: polled');
      assert.equal(subscriptionIds('ct1').length, 1);
      assert.equal(subscriptionIds('ct2').length, 0, 'nothing subscribed where the service root links no EventService');
      assert.equal(subscriptionIds('ct3').length, 20);

      const injected = Date.now();
      await inject('ct1', 'POST');
      await inject('ct2', 'POST');
      const got = await until('ct1 fault delivered', () => obs.faultsOf('dev-ct1', injected), 10_000);
      assert.deepEqual(
        got.change.reading.faults.map((f) => [f.class, f.component]),
        [['gpu', 'GPU_2']],
      );
      assert.ok(got.at - injected < 10_000, `delivered ${got.at - injected} ms after the fault`);
      // ct2 pushes nothing: its fault waits for the next cycle, 60 s away.
      await sleep(1_000);
      assert.equal(obs.faultsOf('dev-ct2', injected), undefined);
    } finally {
      await obs.stop();
    }
  });

  it('a restarted satellite replaces its subscription, not adding one, and polling still finds ct2', async () => {
    const before = subscriptionIds('ct1');
    assert.equal(before.length, 1);
    const obs = await startObserver(bench, 60);
    try {
      const started = Date.now();
      // ct2's fault (injected in the previous test, never delivered) comes with the first cycle's poll.
      await until('ct2 fault by polling', () => obs.faultsOf('dev-ct2', started));
      await until('ct1 subscribed again', () => (obs.subscriptions.isSubscribed('dev-ct1') ? true : undefined));
      const now = subscriptionIds('ct1');
      assert.equal(now.length, 1, 'one subscription of ours on the BMC');
      assert.notDeepEqual(now, before, 'the old one (another token) was replaced');

      // The new subscription pushes to the new listener: clearing ct1's fault is delivered long before the next cycle.
      const cleared = Date.now();
      await inject('ct1', 'DELETE');
      const healthy = await until('ct1 healthy delivered', () =>
        obs.delivered.find(
          (d) => d.at >= cleared && d.change.deviceId === 'dev-ct1' && !d.change.reading.faults.length,
        ),
      );
      assert.ok(healthy.at - cleared < 10_000, `delivered ${healthy.at - cleared} ms after the clearing`);
    } finally {
      await obs.stop();
    }
  });

  it('an event shows a fault at once but confirms it no sooner: one observation a cycle, as polling', async () => {
    const intervalS = 2;
    const obs = await startObserver(bench, intervalS, 3);
    try {
      // ct2's fault (still there, confirmed by each of the first cycles) marks when a cycle runs: the fault comes
      // half an interval after one, so without the rule the next cycle would confirm it half an interval later.
      const started = Date.now();
      const cycle = await until('a cycle', () =>
        obs.delivered.find((d) => d.at >= started && d.change.deviceId === 'dev-ct2'),
      );
      await until('ct1 subscribed', () => (obs.subscriptions.isSubscribed('dev-ct1') ? true : undefined));
      await sleep(Math.max(0, cycle.at + intervalS * 500 - Date.now()));
      const injected = Date.now();
      await inject('ct1', 'POST');
      const faulty = () =>
        obs.delivered.filter(
          (d) => d.at >= injected && d.change.deviceId === 'dev-ct1' && d.change.reading.faults.length > 0,
        );
      const [first] = await until('the event read', () => (faulty().length >= 1 ? faulty() : undefined));
      assert.ok(first!.at - injected < intervalS * 1000, `first seen ${first!.at - injected} ms after the fault`);
      const [, second] = await until('a confirmation', () => (faulty().length >= 2 ? faulty() : undefined));
      // The cycle right after the event read saw the same observation; the one after that confirms it.
      assert.ok(
        second!.at - first!.at >= intervalS * 1000 - 500,
        `confirmed ${second!.at - first!.at} ms after the event read, within one interval`,
      );
    } finally {
      await inject('ct1', 'DELETE');
      await obs.stop();
    }
  });
});
